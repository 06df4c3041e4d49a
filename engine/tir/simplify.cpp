// Constant folding and algebraic identities over loop IR.
#include "engine/tir/simplify.h"

#include <cmath>

#include "engine/core/error.h"
#include "engine/tir/functor.h"
#include "engine/tir/op.h"

namespace tessera::tir {

namespace {

// Two's-complement wrap of v to an integer type's width.
int64_t wrap_int(DataType t, int64_t v) {
    if (t.is_bool()) return v != 0;
    if (t.bits >= 64) return v;
    uint64_t mask = (uint64_t(1) << t.bits) - 1;
    uint64_t u = uint64_t(v) & mask;
    if (t.is_int() && (u >> (t.bits - 1)) & 1) u |= ~mask;
    return int64_t(u);
}

const IntImm* as_int(const Expr& e) {
    const IntImm* i = e.as<IntImm>();
    return i && !i->dtype.is_bool() ? i : nullptr;
}

bool is_int_value(const Expr& e, int64_t v) {
    const IntImm* i = as_int(e);
    return i && i->value == v;
}

Expr make_int(DataType t, int64_t v) { return IntImm::make(t, wrap_int(t, v)); }
Expr make_bool(bool v) { return IntImm::make(DataType::boolean(), v); }

int64_t floor_div(int64_t a, int64_t b) {
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
    return q;
}
int64_t floor_mod(int64_t a, int64_t b) { return a - floor_div(a, b) * b; }

double round_to(DataType t, double v) { return t.bits == 32 ? double(float(v)) : v; }

class Simplifier : public IRMutator {
public:
    using IRMutator::mutate;

protected:
    using IRMutator::visit;

    Expr visit(const Add* op) override {
        Expr a = mutate(op->a), b = mutate(op->b);
        const IntImm *ia = as_int(a), *ib = as_int(b);
        if (ia && ib) return make_int(op->dtype, ia->value + ib->value);
        if (Expr f = fold_float(a, b, [](double x, double y) { return x + y; }); f.defined())
            return f;
        if (ia && !ib) {  // constants to the right
            std::swap(a, b);
            std::swap(ia, ib);
        }
        if (ib) return keep_if_equal(op, add_offset(a, ib->value));
        return rebuild<Add>(op, a, b);
    }

    Expr visit(const Sub* op) override {
        Expr a = mutate(op->a), b = mutate(op->b);
        const IntImm *ia = as_int(a), *ib = as_int(b);
        if (ia && ib) return make_int(op->dtype, ia->value - ib->value);
        if (Expr f = fold_float(a, b, [](double x, double y) { return x - y; }); f.defined())
            return f;
        if (ib) return keep_if_equal(op, add_offset(a, -ib->value));
        if (op->dtype.is_integer() && structural_equal(a, b)) return make_int(op->dtype, 0);
        return rebuild<Sub>(op, a, b);
    }

    Expr visit(const Mul* op) override {
        Expr a = mutate(op->a), b = mutate(op->b);
        const IntImm *ia = as_int(a), *ib = as_int(b);
        if (ia && ib) return make_int(op->dtype, ia->value * ib->value);
        if (Expr f = fold_float(a, b, [](double x, double y) { return x * y; }); f.defined())
            return f;
        if (ia && !ib) {
            std::swap(a, b);
            std::swap(ia, ib);
        }
        if (ib && ib->value == 1) return a;
        if (ib && ib->value == 0) return b;
        if (ib) {
            if (const Mul* inner = a.as<Mul>(); inner && as_int(inner->b))
                return Mul::make(inner->a,
                                 make_int(op->dtype, as_int(inner->b)->value * ib->value));
        }
        return rebuild<Mul>(op, a, b);
    }

    Expr visit(const Div* op) override {
        Expr a = mutate(op->a), b = mutate(op->b);
        const IntImm *ia = as_int(a), *ib = as_int(b);
        if (ia && ib && ib->value != 0) return make_int(op->dtype, ia->value / ib->value);
        if (ib && ib->value == 1) return a;
        if (const FloatImm* fb = b.as<FloatImm>(); fb && fb->value != 0)
            if (Expr f = fold_float(a, b, [](double x, double y) { return x / y; }); f.defined())
                return f;
        return rebuild<Div>(op, a, b);
    }

    Expr visit(const Mod* op) override {
        Expr a = mutate(op->a), b = mutate(op->b);
        const IntImm *ia = as_int(a), *ib = as_int(b);
        if (ia && ib && ib->value != 0) return make_int(op->dtype, ia->value % ib->value);
        if (ib && ib->value == 1) return make_int(op->dtype, 0);
        return rebuild<Mod>(op, a, b);
    }

    Expr visit(const FloorDiv* op) override {
        Expr a = mutate(op->a), b = mutate(op->b);
        const IntImm *ia = as_int(a), *ib = as_int(b);
        if (ia && ib && ib->value != 0) return make_int(op->dtype, floor_div(ia->value, ib->value));
        if (ib && ib->value == 1) return a;
        return rebuild<FloorDiv>(op, a, b);
    }

    Expr visit(const FloorMod* op) override {
        Expr a = mutate(op->a), b = mutate(op->b);
        const IntImm *ia = as_int(a), *ib = as_int(b);
        if (ia && ib && ib->value != 0) return make_int(op->dtype, floor_mod(ia->value, ib->value));
        if (ib && ib->value == 1) return make_int(op->dtype, 0);
        return rebuild<FloorMod>(op, a, b);
    }

    Expr visit(const Min* op) override {
        Expr a = mutate(op->a), b = mutate(op->b);
        const IntImm *ia = as_int(a), *ib = as_int(b);
        if (ia && ib) return ia->value <= ib->value ? a : b;
        if (structural_equal(a, b)) return a;
        return rebuild<Min>(op, a, b);
    }

    Expr visit(const Max* op) override {
        Expr a = mutate(op->a), b = mutate(op->b);
        const IntImm *ia = as_int(a), *ib = as_int(b);
        if (ia && ib) return ia->value >= ib->value ? a : b;
        if (structural_equal(a, b)) return a;
        return rebuild<Max>(op, a, b);
    }

#define TS_CMP(N, OP)                                                  \
    Expr visit(const N* op) override {                                 \
        Expr a = mutate(op->a), b = mutate(op->b);                     \
        const IntImm *ia = as_int(a), *ib = as_int(b);                 \
        if (ia && ib) return make_bool(ia->value OP ib->value);        \
        const FloatImm *fa = a.as<FloatImm>(), *fb = b.as<FloatImm>(); \
        if (fa && fb) return make_bool(fa->value OP fb->value);        \
        return rebuild<N>(op, a, b);                                   \
    }
    TS_CMP(EQ, ==)
    TS_CMP(NE, !=)
    TS_CMP(LT, <)
    TS_CMP(LE, <=)
    TS_CMP(GT, >)
    TS_CMP(GE, >=)
#undef TS_CMP

    Expr visit(const And* op) override {
        Expr a = mutate(op->a), b = mutate(op->b);
        const IntImm *ia = a.as<IntImm>(), *ib = b.as<IntImm>();
        if (ia) return ia->value ? b : a;
        if (ib) return ib->value ? a : b;
        return rebuild<And>(op, a, b);
    }

    Expr visit(const Or* op) override {
        Expr a = mutate(op->a), b = mutate(op->b);
        const IntImm *ia = a.as<IntImm>(), *ib = b.as<IntImm>();
        if (ia) return ia->value ? a : b;
        if (ib) return ib->value ? b : a;
        return rebuild<Or>(op, a, b);
    }

    Expr visit(const Not* op) override {
        Expr a = mutate(op->a);
        if (const IntImm* i = a.as<IntImm>()) return make_bool(!i->value);
        return a.same_as(op->a) ? Expr(op) : Not::make(a);
    }

    Expr visit(const Select* op) override {
        Expr c = mutate(op->condition);
        if (const IntImm* i = c.as<IntImm>())
            return mutate(i->value ? op->true_value : op->false_value);
        Expr t = mutate(op->true_value), f = mutate(op->false_value);
        if (c.same_as(op->condition) && t.same_as(op->true_value) && f.same_as(op->false_value))
            return op;
        return Select::make(c, t, f);
    }

    Expr visit(const Cast* op) override {
        Expr v = mutate(op->value);
        DataType t = op->dtype;
        if (t.is_scalar()) {
            if (const IntImm* i = v.as<IntImm>()) {
                if (t.is_float()) return FloatImm::make(t, double(i->value));
                return make_int(t, i->value);
            }
            if (const FloatImm* f = v.as<FloatImm>()) {
                if (t.is_float()) return FloatImm::make(t, f->value);
                if (t.is_bool()) return make_bool(f->value != 0);
                if (std::isfinite(f->value) && std::fabs(f->value) < 9.0e18)
                    return make_int(t, int64_t(f->value));
            }
        }
        if (v.dtype() == t) return v;
        return v.same_as(op->value) ? Expr(op) : Cast::make(t, v);
    }

    Stmt visit(const For* op) override {
        if (is_int_value(op->extent, 1) && op->kind != ForKind::ThreadBinding) {
            Expr mn = mutate(op->min);
            return mutate(substitute(op->body, {{op->loop_var.get(), mn}}));
        }
        return IRMutator::visit(op);
    }

    Stmt visit(const IfThenElse* op) override {
        Expr c = mutate(op->condition);
        if (const IntImm* i = c.as<IntImm>()) {
            if (i->value) return mutate(op->then_case);
            if (op->else_case.defined()) return mutate(op->else_case);
            return Evaluate::make(Expr(0));
        }
        Stmt t = mutate(op->then_case), e = mutate(op->else_case);
        if (c.same_as(op->condition) && t.same_as(op->then_case) && e.same_as(op->else_case))
            return op;
        return IfThenElse::make(c, t, e);
    }

private:
    // x + c, merging a constant offset already on x: (y + 2) + 3 -> y + 5.
    static Expr add_offset(const Expr& x, int64_t c) {
        DataType t = x.dtype();
        Expr base = x;
        if (const Add* inner = x.as<Add>(); inner && as_int(inner->b)) {
            base = inner->a;
            c += as_int(inner->b)->value;
        } else if (const Sub* inner = x.as<Sub>(); inner && as_int(inner->b)) {
            base = inner->a;
            c -= as_int(inner->b)->value;
        }
        c = wrap_int(t, c);
        if (c == 0) return base;
        if (c < 0 && c != INT64_MIN) return Sub::make(base, make_int(t, -c));
        return Add::make(base, make_int(t, c));
    }

    // Returns the original node when a rewrite rebuilt the same tree.
    static Expr keep_if_equal(const ExprNode* op, const Expr& e) {
        Expr orig(op);
        return structural_equal(orig, e) ? orig : e;
    }

    template <typename N>
    static Expr rebuild(const N* op, const Expr& a, const Expr& b) {
        if (a.same_as(op->a) && b.same_as(op->b)) return op;
        return N::make(a, b);
    }

    template <typename F>
    static Expr fold_float(const Expr& a, const Expr& b, F f) {
        const FloatImm *fa = a.as<FloatImm>(), *fb = b.as<FloatImm>();
        if (!fa || !fb) return Expr();
        return FloatImm::make(fa->dtype, round_to(fa->dtype, f(fa->value, fb->value)));
    }
};

bool equal_list(const std::vector<Expr>& a, const std::vector<Expr>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (!structural_equal(a[i], b[i])) return false;
    return true;
}

}  // namespace

Expr simplify(const Expr& e) { return Simplifier().mutate(e); }
Stmt simplify(const Stmt& s) { return Simplifier().mutate(s); }
PrimFunc simplify(const PrimFunc& f) {
    Stmt body = simplify(f->body);
    return body.same_as(f->body) ? f : f.with_body(body);
}

bool structural_equal(const Expr& a, const Expr& b) {
    if (a.same_as(b)) return true;
    if (!a.defined() || !b.defined()) return false;
    if (a.node_type() != b.node_type() || a.dtype() != b.dtype()) return false;
    switch (a.node_type()) {
        case NodeType::IntImm:
            return a.as<IntImm>()->value == b.as<IntImm>()->value;
        case NodeType::FloatImm: {
            double x = a.as<FloatImm>()->value, y = b.as<FloatImm>()->value;
            return x == y || (std::isnan(x) && std::isnan(y));
        }
        case NodeType::Variable:
            return false;  // distinct nodes are distinct variables
#define TS_X(N)                                                              \
    case NodeType::N: {                                                      \
        const N *x = a.as<N>(), *y = b.as<N>();                              \
        return structural_equal(x->a, y->a) && structural_equal(x->b, y->b); \
    }
            TS_TIR_BINARY_NODES(TS_X)
#undef TS_X
        case NodeType::Not:
            return structural_equal(a.as<Not>()->a, b.as<Not>()->a);
        case NodeType::Select: {
            const Select *x = a.as<Select>(), *y = b.as<Select>();
            return structural_equal(x->condition, y->condition) &&
                   structural_equal(x->true_value, y->true_value) &&
                   structural_equal(x->false_value, y->false_value);
        }
        case NodeType::Cast:
            return structural_equal(a.as<Cast>()->value, b.as<Cast>()->value);
        case NodeType::Call: {
            const Call *x = a.as<Call>(), *y = b.as<Call>();
            return x->op == y->op && equal_list(x->args, y->args);
        }
        case NodeType::BufferLoad: {
            const BufferLoad *x = a.as<BufferLoad>(), *y = b.as<BufferLoad>();
            return x->buffer.same_as(y->buffer) && equal_list(x->indices, y->indices);
        }
        case NodeType::Ramp: {
            const Ramp *x = a.as<Ramp>(), *y = b.as<Ramp>();
            return x->lanes == y->lanes && structural_equal(x->base, y->base) &&
                   structural_equal(x->stride, y->stride);
        }
        case NodeType::Broadcast: {
            const Broadcast *x = a.as<Broadcast>(), *y = b.as<Broadcast>();
            return x->lanes == y->lanes && structural_equal(x->value, y->value);
        }
        case NodeType::Let: {
            const Let *x = a.as<Let>(), *y = b.as<Let>();
            return x->var.same_as(y->var) && structural_equal(x->value, y->value) &&
                   structural_equal(x->body, y->body);
        }
        default:
            return false;  // Reduce: compared by identity only
    }
}

}  // namespace tessera::tir
