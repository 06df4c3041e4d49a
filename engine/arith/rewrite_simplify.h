// Internal: the expression simplifier behind Analyzer::simplify, a mutator
// that statement-level simplifiers extend.
#pragma once

#include "engine/arith/analyzer.h"
#include "engine/tir/functor.h"

namespace tessera::arith {

/// Bottom-up rewriting: children first, then the rules for the node.
class RewriteSimplifier : public tir::IRMutator {
public:
    explicit RewriteSimplifier(Analyzer& a) : m_ana(a) {}
    using IRMutator::mutate;

protected:
    using IRMutator::visit;
#define TS_X(N) tir::Expr visit(const tir::N* op) override;
    TS_TIR_BINARY_NODES(TS_X)
#undef TS_X
    tir::Expr visit(const tir::Not* op) override;
    tir::Expr visit(const tir::Select* op) override;
    tir::Expr visit(const tir::Cast* op) override;
    tir::Expr visit(const tir::Let* op) override;
    tir::Expr visit(const tir::Ramp* op) override;
    tir::Expr visit(const tir::Broadcast* op) override;

    Analyzer& m_ana;

private:
    tir::Expr linear(const tir::ExprNode* op, const tir::Expr& a, const tir::Expr& b, int sign);
    tir::Expr vector_arith(tir::NodeType t, const tir::Expr& a, const tir::Expr& b);
    tir::Expr div_mod(const tir::ExprNode* op, const tir::Expr& a, int64_t c, bool is_div);
    tir::Expr compare(const tir::ExprNode* op, const tir::Expr& a, const tir::Expr& b);
    tir::Expr min_max(const tir::ExprNode* op, const tir::Expr& a, const tir::Expr& b, bool is_min);
};

}  // namespace tessera::arith
