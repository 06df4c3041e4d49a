// IRVisitor and IRMutator over the loop IR, generated from node_list.h.
// A mutator returns its input unchanged when nothing below it changed, so
// passes that do nothing cost nothing.
#pragma once

#include <functional>

#include "engine/tir/stmt.h"

namespace tessera::tir {

/// Walks every node; override a visit() and call the base to keep recursing.
class IRVisitor {
public:
    virtual ~IRVisitor() = default;
    void visit_expr(const Expr& e);
    void visit_stmt(const Stmt& s);

protected:
#define TS_X(N) virtual void visit(const N* op);
    TS_TIR_EXPR_NODES(TS_X)
    TS_TIR_STMT_NODES(TS_X)
#undef TS_X
    /// Visits the expressions inside a range / buffer region / iter var.
    virtual void visit_range(const Range& r);
};

/// Rebuilds the IR bottom-up; override a visit() to rewrite one node kind.
class IRMutator {
public:
    virtual ~IRMutator() = default;
    Expr mutate(const Expr& e);
    Stmt mutate(const Stmt& s);

protected:
#define TS_X(N) virtual Expr visit(const N* op);
    TS_TIR_EXPR_NODES(TS_X)
#undef TS_X
#define TS_X(N) virtual Stmt visit(const N* op);
    TS_TIR_STMT_NODES(TS_X)
#undef TS_X
    Range mutate_range(const Range& r);
    std::vector<Expr> mutate_exprs(const std::vector<Expr>& v, bool* changed);
};

/// Replaces variables by expressions (by identity).
Expr substitute(const Expr& e, const std::map<const Variable*, Expr>& vmap);
Stmt substitute(const Stmt& s, const std::map<const Variable*, Expr>& vmap);

/// True when the expression mentions the variable (by identity).
bool uses_var(const Expr& e, const Variable* v);

/// Calls f on every expression and statement node, children before parents.
void post_order_visit(const Stmt& s, const std::function<void(const Object*)>& f);

/// True when a BufferLoad / BufferStore below `s` reads / writes `b` (by identity).
bool loads_buffer(const Stmt& s, const Buffer& b);
bool stores_buffer(const Stmt& s, const Buffer& b);

}  // namespace tessera::tir
