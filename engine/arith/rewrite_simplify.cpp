// Expression rewriting rules: canonical linear sums, floordiv/floormod with
// bounds, comparison / min / max folding by bounds, logic and select rules.
#include "engine/arith/rewrite_simplify.h"

#include <cmath>
#include <functional>
#include <numeric>

#include "engine/arith/linear_form.h"
#include "engine/core/error.h"
#include "engine/tir/op.h"
#include "engine/tir/structural_equal.h"

namespace tessera::arith {

using namespace tir;

namespace {

const IntImm* as_int(const Expr& e) {
    const IntImm* i = e.as<IntImm>();
    return i && !i->dtype.is_bool() ? i : nullptr;
}

Expr make_int(DataType t, int64_t v) { return IntImm::make(t, wrap_to(t, v)); }
Expr make_bool(bool v) { return IntImm::make(DataType::boolean(), v); }

// Canonical forms and bound reasoning are for signed integers (index math);
// unsigned arithmetic wraps around zero, so it only gets constant folding.
bool is_index(DataType t) { return t.is_int() && t.is_scalar(); }

// Folds two integer constants of any integer type (wrapping to its width).
template <typename F>
Expr fold_int(DataType t, const Expr& a, const Expr& b, F f) {
    const IntImm *ia = as_int(a), *ib = as_int(b);
    if (!ia || !ib || !t.is_integer() || !t.is_scalar()) return Expr();
    return make_int(t, int64_t(f(uint64_t(ia->value), uint64_t(ib->value))));
}

// The original node when `e` is the same tree (keeps identity for no-ops).
Expr keep(const ExprNode* op, const Expr& e) {
    Expr orig(op);
    return structural_equal(orig, e) ? orig : e;
}

template <typename N>
Expr rebuild(const N* op, const Expr& a, const Expr& b) {
    if (a.same_as(op->a) && b.same_as(op->b)) return op;
    return N::make(a, b);
}

template <typename F>
Expr fold_float(const Expr& a, const Expr& b, F f) {
    const FloatImm *fa = a.as<FloatImm>(), *fb = b.as<FloatImm>();
    if (!fa || !fb) return Expr();
    double r = f(fa->value, fb->value);
    if (fa->dtype.bits == 32) r = double(float(r));
    return FloatImm::make(fa->dtype, r);
}

// The term floormod(floordiv(x, c1), c2) with coefficient `coeff`, if `f` has one.
int find_mod_of_div(const LinearForm& f, const Expr& x, int64_t c1, int64_t coeff) {
    for (size_t j = 0; j < f.terms.size(); ++j) {
        if (f.terms[j].coeff != coeff) continue;
        const FloorMod* m = f.terms[j].term.as<FloorMod>();
        const FloorDiv* d = m ? m->a.as<FloorDiv>() : nullptr;
        if (d && as_int(m->b) && as_int(d->b) && as_int(d->b)->value == c1 &&
            structural_equal(d->a, x))
            return int(j);
    }
    return -1;
}

// Replaces floordiv(x, c) * c * k + floormod(x, c) * k by x * k, and
// floormod(floordiv(x, c1), c2) * c1 * k + floormod(x, c1) * k by
// floormod(x, c1 * c2) * k, which `simplify` may reduce further: the indices
// of a fused loop recombined, (f // 196 % 256) * 196 + (f // 14 % 14) * 14 +
// f % 14 = f % 50176 = f, a contiguous access again.
void merge_div_mod(LinearForm& f, const std::function<Expr(const Expr&)>& simplify) {
    for (size_t i = 0; i < f.terms.size(); ++i) {
        const FloorMod* m = f.terms[i].term.as<FloorMod>();
        if (!m || !as_int(m->b)) continue;
        int64_t c = as_int(m->b)->value, k = f.terms[i].coeff;
        const int64_t kc = wrap_to(f.dtype, int64_t(uint64_t(k) * uint64_t(c)));
        Expr x = m->a, mod_term = f.terms[i].term;
        Expr div = FloorDiv::make(m->a, m->b);
        if (f.coeff_of(div) == kc) {
            f.add_term(div, -f.coeff_of(div));
            f.add_term(mod_term, -k);
            f.add(to_linear(x), k);
            i = size_t(-1);  // restart: terms moved
            continue;
        }
        if (c <= 0) continue;
        if (int j = find_mod_of_div(f, x, c, kc); j >= 0) {
            const Expr outer = f.terms[size_t(j)].term;
            const int64_t c2 = as_int(outer.as<FloorMod>()->b)->value;
            if (c2 <= 0) continue;
            f.add_term(outer, -kc);
            f.add_term(mod_term, -k);
            f.add(to_linear(simplify(FloorMod::make(x, make_int(f.dtype, c * c2)))), k);
            i = size_t(-1);
        }
    }
}

}  // namespace

// ---------------------------------------------------------------- + - *

Expr RewriteSimplifier::linear(const ExprNode* op, const Expr& a, const Expr& b, int sign) {
    LinearForm f = to_linear(a);
    if (sign == 0) {  // a * constant b
        f.scale(as_int(b)->value);
    } else {
        f.add(to_linear(b), sign);
    }
    merge_div_mod(f, [&](const Expr& e) { return mutate(e); });
    return keep(op, from_linear(f));
}

Expr RewriteSimplifier::vector_arith(NodeType t, const Expr& a, const Expr& b) {
    const Ramp *ra = a.as<Ramp>(), *rb = b.as<Ramp>();
    const Broadcast *ba = a.as<Broadcast>(), *bb = b.as<Broadcast>();
    auto scalar = [&](const Expr& x, const Expr& y) {
        switch (t) {
            case NodeType::Add:
                return mutate(Add::make(x, y));
            case NodeType::Sub:
                return mutate(Sub::make(x, y));
            default:
                return mutate(Mul::make(x, y));
        }
    };
    if (ba && bb) return Broadcast::make(scalar(ba->value, bb->value), ba->lanes);
    if (!a.dtype().is_integer()) return Expr();
    if (t == NodeType::Mul) {
        if (ra && bb)
            return Ramp::make(scalar(ra->base, bb->value), scalar(ra->stride, bb->value),
                              ra->lanes);
        if (ba && rb)
            return Ramp::make(scalar(ba->value, rb->base), scalar(ba->value, rb->stride),
                              rb->lanes);
        return Expr();
    }
    if (ra && bb) return Ramp::make(scalar(ra->base, bb->value), ra->stride, ra->lanes);
    if (ra && rb)
        return Ramp::make(scalar(ra->base, rb->base), scalar(ra->stride, rb->stride), ra->lanes);
    if (ba && rb) {
        Expr stride = t == NodeType::Sub
                          ? mutate(Sub::make(make_zero(rb->stride.dtype()), rb->stride))
                          : rb->stride;
        return Ramp::make(scalar(ba->value, rb->base), stride, rb->lanes);
    }
    return Expr();
}

Expr RewriteSimplifier::visit(const Add* op) {
    Expr a = mutate(op->a), b = mutate(op->b);
    if (Expr c = fold_int(op->dtype, a, b, [](uint64_t x, uint64_t y) { return x + y; });
        c.defined())
        return c;
    if (is_index(op->dtype)) return linear(op, a, b, 1);
    if (Expr f = fold_float(a, b, [](double x, double y) { return x + y; }); f.defined()) return f;
    if (op->dtype.is_vector())
        if (Expr v = vector_arith(NodeType::Add, a, b); v.defined()) return v;
    return rebuild(op, a, b);
}

Expr RewriteSimplifier::visit(const Sub* op) {
    Expr a = mutate(op->a), b = mutate(op->b);
    if (Expr c = fold_int(op->dtype, a, b, [](uint64_t x, uint64_t y) { return x - y; });
        c.defined())
        return c;
    if (is_index(op->dtype)) return linear(op, a, b, -1);
    if (Expr f = fold_float(a, b, [](double x, double y) { return x - y; }); f.defined()) return f;
    if (op->dtype.is_vector())
        if (Expr v = vector_arith(NodeType::Sub, a, b); v.defined()) return v;
    return rebuild(op, a, b);
}

Expr RewriteSimplifier::visit(const Mul* op) {
    Expr a = mutate(op->a), b = mutate(op->b);
    if (Expr c = fold_int(op->dtype, a, b, [](uint64_t x, uint64_t y) { return x * y; });
        c.defined())
        return c;
    if (is_index(op->dtype)) {
        if (as_int(a)) std::swap(a, b);
        if (as_int(b)) return linear(op, a, b, 0);
        return rebuild(op, a, b);
    }
    if (Expr f = fold_float(a, b, [](double x, double y) { return x * y; }); f.defined()) return f;
    if (op->dtype.is_vector())
        if (Expr v = vector_arith(NodeType::Mul, a, b); v.defined()) return v;
    return rebuild(op, a, b);
}

// ---------------------------------------------------------------- division

Expr RewriteSimplifier::div_mod(const ExprNode* op, const Expr& a, int64_t c, bool is_div) {
    DataType t = a.dtype();
    LinearForm f = to_linear(a);
    LinearForm q, r;
    q.dtype = r.dtype = t;
    for (const LinearTerm& term : f.terms) {
        if (term.coeff % c == 0)
            q.add_term(term.term, term.coeff / c);
        else
            r.add_term(term.term, term.coeff);
    }
    // The remainder part R lies in one bucket [k*c, (k+1)*c): the result is exact.
    auto bucket = [&](const LinearForm& rem, int64_t* k) {
        ConstIntBound b = m_ana.const_int_bound(from_linear(rem));
        if (!b.bounded()) return false;
        *k = floor_div(b.min_value, c);
        return *k == floor_div(b.max_value, c);
    };
    LinearForm r1 = r;
    r1.constant = f.constant;
    LinearForm r2 = r, q2 = q;
    r2.constant = floor_mod(f.constant, c);
    q2.constant = floor_div(f.constant, c);
    for (auto [qq, rr] : {std::pair{&q, &r1}, std::pair{&q2, &r2}}) {
        int64_t k = 0;
        if (!bucket(*rr, &k)) continue;
        LinearForm out = is_div ? *qq : *rr;
        if (is_div)
            out.constant = wrap_to(t, out.constant + k);
        else
            out.constant = wrap_to(t, out.constant - k * c);
        return keep(op, from_linear(out));
    }
    // c1 * x + y with c1 dividing c and y in [0, c1): the division sees x
    // only, in units of c1: floordiv(32 * x + y, 64) = floordiv(x, 2) and
    // floormod(32 * x + y, 64) = floormod(x, 2) * 32 + y for y in [0, 32).
    // (A row of 768 split into vectors of 32 read through a reshape to 12 x 64:
    // the vector's lanes stay in one block of 64, so the read is contiguous.)
    for (size_t i = 0; i < r1.terms.size(); ++i) {
        const int64_t c1 = r1.terms[i].coeff;
        if (c1 <= 1 || c % c1 != 0) continue;
        LinearForm y = r1;
        y.terms.erase(y.terms.begin() + long(i));
        const ConstIntBound yb = m_ana.const_int_bound(from_linear(y));
        if (!yb.bounded() || yb.min_value < 0 || yb.max_value >= c1) continue;
        const Expr x = r1.terms[i].term, cx = make_int(t, c / c1);
        if (!is_div) {
            LinearForm out = y;
            out.add_term(mutate(FloorMod::make(x, cx)), c1);
            return keep(op, from_linear(out));
        }
        LinearForm out = q;
        out.add_term(mutate(FloorDiv::make(x, cx)), 1);
        return keep(op, from_linear(out));
    }
    // Common factor of the remainder and the divisor.
    int64_t g = c;
    for (const LinearTerm& term : r1.terms) g = std::gcd(g, std::llabs(term.coeff));
    g = std::gcd(g, std::llabs(r1.constant));
    Expr rest;
    if (g > 1 && !r1.is_const()) {
        LinearForm small = r1;
        for (LinearTerm& term : small.terms) term.coeff /= g;
        small.constant /= g;
        Expr inner = from_linear(small), cg = make_int(t, c / g);
        rest = is_div ? mutate(FloorDiv::make(inner, cg))
                      : mutate(Mul::make(FloorMod::make(inner, cg), make_int(t, g)));
    } else {
        Expr inner = r1.is_const() && r1.constant == 0 ? Expr() : from_linear(r1);
        if (!inner.defined()) {
            rest = make_int(t, 0);
        } else if (const FloorDiv* d = inner.as<FloorDiv>();
                   is_div && d && as_int(d->b) && as_int(d->b)->value > 0) {
            rest = FloorDiv::make(d->a, make_int(t, as_int(d->b)->value * c));
        } else if (const FloorMod* m = inner.as<FloorMod>();
                   !is_div && m && as_int(m->b) && as_int(m->b)->value % c == 0) {
            rest = mutate(FloorMod::make(m->a, make_int(t, c)));
        } else {
            rest = is_div ? FloorDiv::make(inner, make_int(t, c))
                          : FloorMod::make(inner, make_int(t, c));
        }
    }
    if (!is_div) return keep(op, rest);
    LinearForm out = q;
    out.add(to_linear(rest));
    return keep(op, from_linear(out));
}

Expr RewriteSimplifier::visit(const Div* op) {
    Expr a = mutate(op->a), b = mutate(op->b);
    const IntImm *ia = as_int(a), *ib = as_int(b);
    if (ia && ib && ib->value != 0) return make_int(op->dtype, ia->value / ib->value);
    if (ib && ib->value == 1) return a;
    if (is_index(op->dtype) && ib && ib->value > 0 && m_ana.const_int_bound(a).min_value >= 0)
        return div_mod(op, a, ib->value, true);
    if (const FloatImm* fb = b.as<FloatImm>(); fb && fb->value != 0)
        if (Expr f = fold_float(a, b, [](double x, double y) { return x / y; }); f.defined())
            return f;
    return rebuild(op, a, b);
}

Expr RewriteSimplifier::visit(const Mod* op) {
    Expr a = mutate(op->a), b = mutate(op->b);
    const IntImm *ia = as_int(a), *ib = as_int(b);
    if (ia && ib && ib->value != 0) return make_int(op->dtype, ia->value % ib->value);
    if (ib && ib->value == 1) return make_int(op->dtype, 0);
    if (is_index(op->dtype) && ib && ib->value > 0 && m_ana.const_int_bound(a).min_value >= 0)
        return div_mod(op, a, ib->value, false);
    return rebuild(op, a, b);
}

Expr RewriteSimplifier::visit(const FloorDiv* op) {
    Expr a = mutate(op->a), b = mutate(op->b);
    const IntImm *ia = as_int(a), *ib = as_int(b);
    if (ia && ib && ib->value != 0) return make_int(op->dtype, floor_div(ia->value, ib->value));
    if (ib && ib->value == 1) return a;
    if (is_index(op->dtype) && ib && ib->value > 0) return div_mod(op, a, ib->value, true);
    return rebuild(op, a, b);
}

Expr RewriteSimplifier::visit(const FloorMod* op) {
    Expr a = mutate(op->a), b = mutate(op->b);
    const IntImm *ia = as_int(a), *ib = as_int(b);
    if (ia && ib && ib->value != 0) return make_int(op->dtype, floor_mod(ia->value, ib->value));
    if (ib && ib->value == 1) return make_int(op->dtype, 0);
    if (is_index(op->dtype) && ib && ib->value > 0) return div_mod(op, a, ib->value, false);
    return rebuild(op, a, b);
}

// ---------------------------------------------------------------- min / max

Expr RewriteSimplifier::min_max(const ExprNode* op, const Expr& a0, const Expr& b0, bool is_min) {
    Expr a = a0, b = b0;
    auto make = [&](const Expr& x, const Expr& y) {
        return is_min ? Min::make(x, y) : Max::make(x, y);
    };
    const IntImm *ia = as_int(a), *ib = as_int(b);
    if (ia && ib) return (ia->value <= ib->value) == is_min ? a : b;
    const FloatImm *fa = a.as<FloatImm>(), *fb = b.as<FloatImm>();
    if (fa && fb) return (fa->value <= fb->value) == is_min ? a : b;
    if (structural_equal(a, b)) return a;
    if (!is_index(a.dtype())) return keep(op, make(a, b));
    LinearForm d = to_linear(a);
    d.add(to_linear(b), -1);
    ConstIntBound bd = m_ana.const_int_bound(from_linear(d));
    if (bd.max_value <= 0) return is_min ? a : b;
    if (bd.min_value >= 0) return is_min ? b : a;
    if (ia) std::swap(a, b), std::swap(ia, ib);
    if (ib) {  // min(min(x, c1), c2) -> min(x, min(c1, c2))
        const BinaryNode<NodeType::Min>* mn = a.as<Min>();
        const BinaryNode<NodeType::Max>* mx = a.as<Max>();
        const Expr* inner_b = is_min ? (mn ? &mn->b : nullptr) : (mx ? &mx->b : nullptr);
        const Expr* inner_a = is_min ? (mn ? &mn->a : nullptr) : (mx ? &mx->a : nullptr);
        if (inner_b && as_int(*inner_b)) {
            int64_t c1 = as_int(*inner_b)->value, c2 = ib->value;
            return keep(op, make(*inner_a, make_int(a.dtype(),
                                                    is_min ? std::min(c1, c2) : std::max(c1, c2))));
        }
    }
    return keep(op, make(a, b));
}

Expr RewriteSimplifier::visit(const Min* op) {
    return min_max(op, mutate(op->a), mutate(op->b), true);
}
Expr RewriteSimplifier::visit(const Max* op) {
    return min_max(op, mutate(op->a), mutate(op->b), false);
}

// ---------------------------------------------------------------- comparisons

Expr RewriteSimplifier::compare(const ExprNode* op, const Expr& a, const Expr& b) {
    NodeType t = op->node_type;
    auto make = [&](const Expr& x, const Expr& y) {
        switch (t) {
            case NodeType::EQ:
                return EQ::make(x, y);
            case NodeType::NE:
                return NE::make(x, y);
            case NodeType::LT:
                return LT::make(x, y);
            case NodeType::LE:
                return LE::make(x, y);
            case NodeType::GT:
                return GT::make(x, y);
            default:
                return GE::make(x, y);
        }
    };
    auto holds = [&](auto x, auto y) {
        switch (t) {
            case NodeType::EQ:
                return x == y;
            case NodeType::NE:
                return x != y;
            case NodeType::LT:
                return x < y;
            case NodeType::LE:
                return x <= y;
            case NodeType::GT:
                return x > y;
            default:
                return x >= y;
        }
    };
    const IntImm *ia = a.as<IntImm>(), *ib = b.as<IntImm>();
    if (ia && ib) return make_bool(holds(ia->value, ib->value));
    const FloatImm *fa = a.as<FloatImm>(), *fb = b.as<FloatImm>();
    if (fa && fb) return make_bool(holds(fa->value, fb->value));
    if (!is_index(a.dtype())) return keep(op, make(a, b));
    LinearForm d = to_linear(a);
    d.add(to_linear(b), -1);
    ConstIntBound bd = m_ana.const_int_bound(from_linear(d));
    // The comparison holds for every d in bd / for none of them.
    bool all = holds(bd.max_value, int64_t(0)) && holds(bd.min_value, int64_t(0));
    bool none = !holds(bd.max_value, int64_t(0)) && !holds(bd.min_value, int64_t(0));
    switch (t) {
        case NodeType::EQ:
            all = bd.is_const() && bd.min_value == 0;
            none = bd.min_value > 0 || bd.max_value < 0;
            break;
        case NodeType::NE:
            all = bd.min_value > 0 || bd.max_value < 0;
            none = bd.is_const() && bd.min_value == 0;
            break;
        default:
            break;  // monotone in d: both ends decide
    }
    if (bd.min_value == ConstIntBound::kNegInf || bd.max_value == ConstIntBound::kPosInf) {
        // An infinite end is no witness.
        if (t == NodeType::LT || t == NodeType::LE) {
            all = bd.max_value != ConstIntBound::kPosInf && holds(bd.max_value, int64_t(0));
            none = bd.min_value != ConstIntBound::kNegInf && !holds(bd.min_value, int64_t(0));
        } else if (t == NodeType::GT || t == NodeType::GE) {
            all = bd.min_value != ConstIntBound::kNegInf && holds(bd.min_value, int64_t(0));
            none = bd.max_value != ConstIntBound::kPosInf && !holds(bd.max_value, int64_t(0));
        }
    }
    if (all) return make_bool(true);
    if (none) return make_bool(false);
    // Normalize: constants to the right, cancelled terms dropped.
    LinearForm la = to_linear(a), lb = to_linear(b);
    if (d.terms.size() < la.terms.size() + lb.terms.size() || la.constant != 0) {
        LinearForm lhs, rhs;
        lhs.dtype = rhs.dtype = a.dtype();
        for (const LinearTerm& term : d.terms) {
            if (term.coeff > 0)
                lhs.add_term(term.term, term.coeff);
            else
                rhs.add_term(term.term, -term.coeff);
        }
        rhs.constant = wrap_to(a.dtype(), -d.constant);
        if (!lhs.is_const()) return keep(op, make(from_linear(lhs), from_linear(rhs)));
    }
    return keep(op, make(a, b));
}

#define TS_CMP(N) \
    Expr RewriteSimplifier::visit(const N* op) { return compare(op, mutate(op->a), mutate(op->b)); }
TS_CMP(EQ)
TS_CMP(NE)
TS_CMP(LT)
TS_CMP(LE)
TS_CMP(GT)
TS_CMP(GE)
#undef TS_CMP

// ---------------------------------------------------------------- logic

Expr RewriteSimplifier::visit(const And* op) {
    Expr a = mutate(op->a), b = mutate(op->b);
    const IntImm *ia = a.as<IntImm>(), *ib = b.as<IntImm>();
    if (ia && a.dtype().is_scalar()) return ia->value ? b : a;
    if (ib && b.dtype().is_scalar()) return ib->value ? a : b;
    if (structural_equal(a, b)) return a;
    return rebuild(op, a, b);
}

Expr RewriteSimplifier::visit(const Or* op) {
    Expr a = mutate(op->a), b = mutate(op->b);
    const IntImm *ia = a.as<IntImm>(), *ib = b.as<IntImm>();
    if (ia && a.dtype().is_scalar()) return ia->value ? a : b;
    if (ib && b.dtype().is_scalar()) return ib->value ? b : a;
    if (structural_equal(a, b)) return a;
    return rebuild(op, a, b);
}

Expr RewriteSimplifier::visit(const Not* op) {
    Expr a = mutate(op->a);
    if (const IntImm* i = a.as<IntImm>()) return make_bool(!i->value);
    if (const Not* n = a.as<Not>()) return n->a;
    if (const LT* c = a.as<LT>(); c && c->a.dtype().is_integer()) return GE::make(c->a, c->b);
    if (const LE* c = a.as<LE>(); c && c->a.dtype().is_integer()) return GT::make(c->a, c->b);
    if (const GT* c = a.as<GT>(); c && c->a.dtype().is_integer()) return LE::make(c->a, c->b);
    if (const GE* c = a.as<GE>(); c && c->a.dtype().is_integer()) return LT::make(c->a, c->b);
    if (const EQ* c = a.as<EQ>(); c && c->a.dtype().is_integer()) return NE::make(c->a, c->b);
    if (const NE* c = a.as<NE>(); c && c->a.dtype().is_integer()) return EQ::make(c->a, c->b);
    return a.same_as(op->a) ? Expr(op) : Not::make(a);
}

namespace {

// In the loads of a select's true branch, min(a, k) where the condition
// (a < c or a <= c) already keeps a at or below k. A vector select loads
// both branches in every lane, so the clamp stays unless the unclamped
// indices are inside the buffer for every value the bound variables take.
class GuardedClamps : public IRMutator {
public:
    GuardedClamps(Analyzer& ana, const Expr& a, int64_t hi) : m_ana(ana), m_a(a), m_hi(hi) {}

protected:
    using IRMutator::visit;
    Expr visit(const BufferLoad* op) override {
        Expr self = IRMutator::visit(op);
        const BufferLoad* load = self.as<BufferLoad>();
        if (!load) return self;
        std::vector<Expr> idx;
        bool changed = false;
        for (const Expr& e : load->indices) {
            Expr d = m_ana.simplify(drop(e));
            changed = changed || !d.same_as(e);
            idx.push_back(d);
        }
        if (!changed || idx.size() != load->buffer->shape.size()) return self;
        for (size_t i = 0; i < idx.size(); ++i) {
            const int64_t* extent = as_const_int(load->buffer->shape[i]);
            const ConstIntBound b = m_ana.const_int_bound(idx[i]);
            if (!extent || b.min_value < 0 || b.max_value >= *extent) return self;
        }
        return BufferLoad::make(load->buffer, idx);
    }

private:
    // e with every min(a, k >= hi) replaced by a.
    Expr drop(const Expr& e) {
        if (const Min* m = e.as<Min>()) {
            for (auto [x, k] : {std::pair{m->a, m->b}, std::pair{m->b, m->a}})
                if (const int64_t* kv = as_const_int(k);
                    kv && *kv >= m_hi && structural_equal(x, m_a))
                    return x;
        }
        if (const FloorDiv* d = e.as<FloorDiv>()) return floordiv(drop(d->a), d->b);
        if (const FloorMod* d = e.as<FloorMod>()) return floormod(drop(d->a), d->b);
        if (const Add* d = e.as<Add>()) return drop(d->a) + drop(d->b);
        if (const Mul* d = e.as<Mul>()) return drop(d->a) * drop(d->b);
        return e;
    }

    Analyzer& m_ana;
    Expr m_a;
    int64_t m_hi;
};

}  // namespace

Expr RewriteSimplifier::visit(const Select* op) {
    Expr c = mutate(op->condition);
    if (const IntImm* i = c.as<IntImm>(); i && c.dtype().is_scalar())
        return mutate(i->value ? op->true_value : op->false_value);
    Expr t = mutate(op->true_value), f = mutate(op->false_value);
    // A guard a < c (a <= c) makes a clamp min(a, c - 1) (min(a, c)) in the
    // loads it guards redundant: a layout unpack then pack of a padded
    // channel block read x[min(ch, C - 1) / 16, .., min(ch, C - 1) % 16]
    // as a gather of 16 lanes instead of one vector load.
    int64_t hi = 0;
    Expr guarded;
    if (const LT* lt = c.as<LT>(); lt && lt->a.dtype().is_integer() && as_const_int(lt->b)) {
        guarded = lt->a;
        hi = *as_const_int(lt->b) - 1;
    } else if (const LE* le = c.as<LE>(); le && le->a.dtype().is_integer() && as_const_int(le->b)) {
        guarded = le->a;
        hi = *as_const_int(le->b);
    }
    if (guarded.defined() && c.dtype().is_scalar()) {
        GuardedClamps drop(m_ana, guarded, hi);
        t = drop.mutate(t);
    }
    if (structural_equal(t, f)) return t;
    if (c.same_as(op->condition) && t.same_as(op->true_value) && f.same_as(op->false_value))
        return op;
    return Select::make(c, t, f);
}

Expr RewriteSimplifier::visit(const Cast* op) {
    Expr v = mutate(op->value);
    DataType t = op->dtype;
    if (t.is_scalar()) {
        if (const IntImm* i = v.as<IntImm>()) {
            if (t.is_float()) return FloatImm::make(t, double(i->value));
            return make_int(t, i->value);
        }
        if (const FloatImm* f = v.as<FloatImm>()) {
            if (t.is_float())
                return FloatImm::make(t, t.bits == 32 ? double(float(f->value)) : f->value);
            if (t.is_bool()) return make_bool(f->value != 0);
            if (std::isfinite(f->value) && std::fabs(f->value) < 9.0e18)
                return make_int(t, int64_t(f->value));
        }
    }
    if (v.dtype() == t) return v;
    // float(int(x)) for an integral x (round, floor, ceil, trunc) of that
    // float type, through an int of 32 bits or more: x itself where the int
    // holds it (out of its range the conversion is undefined; LLVM's fptosi
    // gives poison). A quantized conv's int32 result read as float again.
    if (const Cast* in = v.as<Cast>(); in && t.is_float() && in->dtype.is_int() &&
                                       in->dtype.bits >= 32 && in->value.dtype() == t) {
        if (const Call* c = in->value.as<Call>();
            c && (c->op == "round" || c->op == "floor" || c->op == "ceil" || c->op == "trunc"))
            return in->value;
    }
    return v.same_as(op->value) ? Expr(op) : Cast::make(t, v);
}

Expr RewriteSimplifier::visit(const Let* op) {
    Expr v = mutate(op->value);
    if (v.as<IntImm>() || v.as<Variable>() || v.as<FloatImm>())
        return mutate(substitute(op->body, {{op->var.get(), v}}));
    Expr body;
    {
        ScopedBind bind(m_ana, op->var, m_ana.const_int_bound(v));
        body = mutate(op->body);
    }
    if (v.same_as(op->value) && body.same_as(op->body)) return op;
    return Let::make(op->var, v, body);
}

Expr RewriteSimplifier::visit(const Ramp* op) {
    Expr b = mutate(op->base), s = mutate(op->stride);
    if (is_const_int(s, 0)) return Broadcast::make(b, op->lanes);
    if (b.same_as(op->base) && s.same_as(op->stride)) return op;
    return Ramp::make(b, s, op->lanes);
}

Expr RewriteSimplifier::visit(const Broadcast* op) {
    Expr v = mutate(op->value);
    return v.same_as(op->value) ? Expr(op) : Broadcast::make(v, op->lanes);
}

Expr Analyzer::simplify(const Expr& e) { return RewriteSimplifier(*this).mutate(e); }

}  // namespace tessera::arith
