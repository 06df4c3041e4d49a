// Statement-level simplifier: the expression rules plus scoping of bounds.
#include "engine/arith/stmt_simplify.h"

#include <memory>

#include "engine/arith/rewrite_simplify.h"
#include "engine/tir/op.h"

namespace tessera::arith {

using namespace tir;

namespace {

class StmtSimplifier : public RewriteSimplifier {
public:
    StmtSimplifier(Analyzer& a, bool remove_trivial)
        : RewriteSimplifier(a), m_remove_trivial(remove_trivial) {}
    using RewriteSimplifier::mutate;

protected:
    using RewriteSimplifier::visit;

    Stmt visit(const For* op) override {
        Expr mn = mutate(op->min), ext = mutate(op->extent);
        if (m_remove_trivial && is_const_int(ext, 1) && ext.as<IntImm>() &&
            op->kind != ForKind::ThreadBinding)
            return mutate(substitute(op->body, {{op->loop_var.get(), mn}}));
        Stmt body;
        {
            ScopedBind bind(m_ana, op->loop_var, Range{mn, ext});
            body = mutate(op->body);
        }
        if (mn.same_as(op->min) && ext.same_as(op->extent) && body.same_as(op->body)) return op;
        return For::make(op->loop_var, mn, ext, op->kind, body, op->thread_tag, op->annotations);
    }

    Stmt visit(const LetStmt* op) override {
        Expr v = mutate(op->value);
        Stmt body;
        {
            ScopedBind bind(m_ana, op->var, m_ana.const_int_bound(v));
            body = mutate(op->body);
        }
        if (v.same_as(op->value) && body.same_as(op->body)) return op;
        return LetStmt::make(op->var, v, body);
    }

    Stmt visit(const IfThenElse* op) override {
        Expr c = mutate(op->condition);
        if (m_remove_trivial) {
            if (const IntImm* i = c.as<IntImm>()) {
                if (i->value) return mutate(op->then_case);
                if (op->else_case.defined()) return mutate(op->else_case);
                return Evaluate::make(Expr(0));
            }
        }
        Stmt t = mutate(op->then_case), e = mutate(op->else_case);
        if (c.same_as(op->condition) && t.same_as(op->then_case) && e.same_as(op->else_case))
            return op;
        return IfThenElse::make(c, t, e);
    }

    Stmt visit(const Block* op) override {
        std::vector<std::unique_ptr<ScopedBind>> binds;
        for (const IterVar& iv : op->iter_vars)
            binds.push_back(std::make_unique<ScopedBind>(m_ana, iv.var, iv.dom));
        return RewriteSimplifier::visit(op);
    }

private:
    bool m_remove_trivial;
};

}  // namespace

Stmt simplify_stmt(const Stmt& s, Analyzer& ana, bool remove_trivial) {
    return StmtSimplifier(ana, remove_trivial).mutate(s);
}

Stmt Analyzer::simplify(const Stmt& s) { return simplify_stmt(s, *this, false); }

}  // namespace tessera::arith
