// Loop-IR simplification (delegates to arith::Analyzer) and structural equality.
#include "engine/tir/simplify.h"

#include <cmath>

#include "engine/arith/analyzer.h"
#include "engine/arith/stmt_simplify.h"
#include "engine/core/error.h"
#include "engine/tir/functor.h"
#include "engine/tir/op.h"

namespace tessera::tir {

namespace {

bool equal_list(const std::vector<Expr>& a, const std::vector<Expr>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (!structural_equal(a[i], b[i])) return false;
    return true;
}

}  // namespace

Expr simplify(const Expr& e) {
    arith::Analyzer ana;
    return ana.simplify(e);
}

Stmt simplify(const Stmt& s) {
    arith::Analyzer ana;
    return arith::simplify_stmt(s, ana, true);
}
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
