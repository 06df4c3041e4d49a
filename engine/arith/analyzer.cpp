// Analyzer bindings and constant interval analysis.
#include "engine/arith/analyzer.h"

#include <algorithm>

#include "engine/core/error.h"
#include "engine/tir/op.h"

namespace tessera::arith {

using namespace tir;

namespace {

ConstIntBound type_range(DataType t) {
    if (t.is_bool()) return {0, 1};
    if (t.is_int() && t.bits < 64) {
        int64_t hi = (int64_t(1) << (t.bits - 1)) - 1;
        return {-hi - 1, hi};
    }
    if (t.is_uint() && t.bits < 64) return {0, (int64_t(1) << t.bits) - 1};
    if (t.is_uint()) return {0, ConstIntBound::kPosInf};
    return ConstIntBound::everything();
}

const int64_t* const_of(const Expr& e) {
    const IntImm* i = e.as<IntImm>();
    return i ? &i->value : nullptr;
}

}  // namespace

/// Interval arithmetic over an expression tree.
class BoundEvaluator {
public:
    explicit BoundEvaluator(const Analyzer& a) : m_a(a) {}

    ConstIntBound eval(const Expr& e) {
        if (!e.defined()) return ConstIntBound::everything();
        DataType t = e.dtype();
        if (t.is_float() || t.code == DataType::Handle) return ConstIntBound::everything();
        return bound_intersect(eval_node(e), type_range(t.element_of()));
    }

private:
    ConstIntBound eval_node(const Expr& e) {
        switch (e.node_type()) {
            case NodeType::IntImm:
                return ConstIntBound::point(e.as<IntImm>()->value);
            case NodeType::Variable: {
                for (auto it = m_local.rbegin(); it != m_local.rend(); ++it)
                    if (it->first == e.get()) return it->second;
                auto it = m_a.m_bounds.find(e.as<Variable>());
                if (it != m_a.m_bounds.end() && !it->second.empty()) return it->second.back();
                return ConstIntBound::everything();
            }
            case NodeType::Add:
                return bound_add(eval(e.as<Add>()->a), eval(e.as<Add>()->b));
            case NodeType::Sub:
                return bound_add(eval(e.as<Sub>()->a), bound_neg(eval(e.as<Sub>()->b)));
            case NodeType::Mul:
                return bound_mul(eval(e.as<Mul>()->a), eval(e.as<Mul>()->b));
            case NodeType::FloorDiv: {
                const FloorDiv* op = e.as<FloorDiv>();
                if (const int64_t* c = const_of(op->b); c && *c != 0)
                    return bound_floordiv(eval(op->a), *c);
                return ConstIntBound::everything();
            }
            case NodeType::FloorMod: {
                const FloorMod* op = e.as<FloorMod>();
                if (const int64_t* c = const_of(op->b); c && *c != 0)
                    return bound_floormod(eval(op->a), *c);
                return ConstIntBound::everything();
            }
            case NodeType::Div: {
                const Div* op = e.as<Div>();
                const int64_t* c = const_of(op->b);
                ConstIntBound a = eval(op->a);
                if (c && *c > 0 && a.min_value >= 0) return bound_floordiv(a, *c);
                if (c && *c > 0) {
                    ConstIntBound f = bound_floordiv(a, *c);  // trunc is within [floor, floor+1]
                    return {f.min_value,
                            f.max_value == ConstIntBound::kPosInf ? f.max_value : f.max_value + 1};
                }
                return ConstIntBound::everything();
            }
            case NodeType::Mod: {
                const Mod* op = e.as<Mod>();
                const int64_t* c = const_of(op->b);
                ConstIntBound a = eval(op->a);
                if (c && *c > 0 && a.min_value >= 0) return bound_floormod(a, *c);
                if (c && *c > 0) return {-(*c - 1), *c - 1};
                return ConstIntBound::everything();
            }
            case NodeType::Min: {
                ConstIntBound a = eval(e.as<Min>()->a), b = eval(e.as<Min>()->b);
                return {std::min(a.min_value, b.min_value), std::min(a.max_value, b.max_value)};
            }
            case NodeType::Max: {
                ConstIntBound a = eval(e.as<Max>()->a), b = eval(e.as<Max>()->b);
                return {std::max(a.min_value, b.min_value), std::max(a.max_value, b.max_value)};
            }
            case NodeType::Select:
                return bound_union(eval(e.as<Select>()->true_value),
                                   eval(e.as<Select>()->false_value));
            case NodeType::Cast: {
                const Cast* op = e.as<Cast>();
                if (op->value.dtype().is_float()) return ConstIntBound::everything();
                return eval(op->value);
            }
            case NodeType::Broadcast:
                return eval(e.as<Broadcast>()->value);
            case NodeType::Ramp: {
                const Ramp* op = e.as<Ramp>();
                ConstIntBound steps{0, op->lanes - 1};
                return bound_add(eval(op->base), bound_mul(eval(op->stride), steps));
            }
            case NodeType::Let: {
                const Let* op = e.as<Let>();
                m_local.emplace_back(op->var.get(), eval(op->value));
                ConstIntBound b = eval(op->body);
                m_local.pop_back();
                return b;
            }
            default:
                return ConstIntBound::everything();  // loads, calls: the type's range
        }
    }

    const Analyzer& m_a;
    std::vector<std::pair<const ExprNode*, ConstIntBound>> m_local;
};

void Analyzer::bind(const Var& v, const Range& r) {
    ConstIntBound mn = const_int_bound(r.min);
    ConstIntBound ext = const_int_bound(r.extent);
    ConstIntBound b;
    b.min_value = mn.min_value;
    // max = max(min) + max(extent) - 1
    ConstIntBound hi =
        bound_add(bound_add({mn.max_value, mn.max_value}, {ext.max_value, ext.max_value}),
                  ConstIntBound::point(-1));
    b.max_value = hi.max_value;
    bind(v, b);
}

void Analyzer::bind(const Var& v, const ConstIntBound& b) { m_bounds[v.get()].push_back(b); }

void Analyzer::unbind(const Var& v) {
    auto it = m_bounds.find(v.get());
    TS_CHECK(it != m_bounds.end() && !it->second.empty())
        << "Analyzer::unbind of unbound variable " << v.name();
    it->second.pop_back();
    if (it->second.empty()) m_bounds.erase(it);
}

ConstIntBound Analyzer::const_int_bound(const Expr& e) const {
    return BoundEvaluator(*this).eval(e);
}

bool Analyzer::can_prove(const Expr& cond) {
    Expr s = simplify(cond);
    const IntImm* i = s.as<IntImm>();
    return i && i->value != 0;
}

}  // namespace tessera::arith
