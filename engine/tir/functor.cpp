// IRVisitor / IRMutator default traversals, substitute, post_order_visit.
#include "engine/tir/functor.h"

#include "engine/core/error.h"

namespace tessera::tir {

// ---------------------------------------------------------------- visitor

void IRVisitor::visit_expr(const Expr& e) {
    if (!e.defined()) return;
    switch (e.node_type()) {
#define TS_X(N)          \
    case NodeType::N:    \
        visit(e.as<N>()); \
        return;
        TS_TIR_EXPR_NODES(TS_X)
#undef TS_X
        default: TS_FAIL() << "statement node in expression position";
    }
}

void IRVisitor::visit_stmt(const Stmt& s) {
    if (!s.defined()) return;
    switch (s.node_type()) {
#define TS_X(N)          \
    case NodeType::N:    \
        visit(s.as<N>()); \
        return;
        TS_TIR_STMT_NODES(TS_X)
#undef TS_X
        default: TS_FAIL() << "expression node in statement position";
    }
}

void IRVisitor::visit_range(const Range& r) {
    visit_expr(r.min);
    visit_expr(r.extent);
}

void IRVisitor::visit(const IntImm*) {}
void IRVisitor::visit(const FloatImm*) {}
void IRVisitor::visit(const Variable*) {}
#define TS_X(N)                          \
    void IRVisitor::visit(const N* op) { \
        visit_expr(op->a);               \
        visit_expr(op->b);               \
    }
TS_TIR_BINARY_NODES(TS_X)
#undef TS_X
void IRVisitor::visit(const Not* op) { visit_expr(op->a); }
void IRVisitor::visit(const Select* op) {
    visit_expr(op->condition);
    visit_expr(op->true_value);
    visit_expr(op->false_value);
}
void IRVisitor::visit(const Cast* op) { visit_expr(op->value); }
void IRVisitor::visit(const Call* op) {
    for (const Expr& a : op->args) visit_expr(a);
}
void IRVisitor::visit(const BufferLoad* op) {
    for (const Expr& i : op->indices) visit_expr(i);
}
void IRVisitor::visit(const Ramp* op) {
    visit_expr(op->base);
    visit_expr(op->stride);
}
void IRVisitor::visit(const Broadcast* op) { visit_expr(op->value); }
void IRVisitor::visit(const Let* op) {
    visit_expr(op->value);
    visit_expr(op->body);
}
void IRVisitor::visit(const Reduce* op) {
    for (const IterVar& iv : op->axis) visit_range(iv.dom);
    visit_expr(op->source);
}

void IRVisitor::visit(const BufferStore* op) {
    visit_expr(op->value);
    for (const Expr& i : op->indices) visit_expr(i);
}
void IRVisitor::visit(const For* op) {
    visit_expr(op->min);
    visit_expr(op->extent);
    visit_stmt(op->body);
}
void IRVisitor::visit(const SeqStmt* op) {
    for (const Stmt& s : op->seq) visit_stmt(s);
}
void IRVisitor::visit(const IfThenElse* op) {
    visit_expr(op->condition);
    visit_stmt(op->then_case);
    visit_stmt(op->else_case);
}
void IRVisitor::visit(const LetStmt* op) {
    visit_expr(op->value);
    visit_stmt(op->body);
}
void IRVisitor::visit(const Allocate* op) { visit_stmt(op->body); }
void IRVisitor::visit(const Evaluate* op) { visit_expr(op->value); }
void IRVisitor::visit(const Block* op) {
    for (const IterVar& iv : op->iter_vars) visit_range(iv.dom);
    for (const auto& r : op->reads)
        for (const Range& rg : r.region) visit_range(rg);
    for (const auto& w : op->writes)
        for (const Range& rg : w.region) visit_range(rg);
    visit_stmt(op->init);
    visit_stmt(op->body);
}
void IRVisitor::visit(const BlockRealize* op) {
    for (const Expr& v : op->iter_values) visit_expr(v);
    visit_expr(op->predicate);
    visit_stmt(op->block);
}

// ---------------------------------------------------------------- mutator

Expr IRMutator::mutate(const Expr& e) {
    if (!e.defined()) return e;
    switch (e.node_type()) {
#define TS_X(N)       \
    case NodeType::N: \
        return visit(e.as<N>());
        TS_TIR_EXPR_NODES(TS_X)
#undef TS_X
        default: TS_FAIL() << "statement node in expression position";
    }
}

Stmt IRMutator::mutate(const Stmt& s) {
    if (!s.defined()) return s;
    switch (s.node_type()) {
#define TS_X(N)       \
    case NodeType::N: \
        return visit(s.as<N>());
        TS_TIR_STMT_NODES(TS_X)
#undef TS_X
        default: TS_FAIL() << "expression node in statement position";
    }
}

Range IRMutator::mutate_range(const Range& r) {
    Expr mn = mutate(r.min), ext = mutate(r.extent);
    if (mn.same_as(r.min) && ext.same_as(r.extent)) return r;
    return Range{mn, ext};
}

std::vector<Expr> IRMutator::mutate_exprs(const std::vector<Expr>& v, bool* changed) {
    std::vector<Expr> out;
    out.reserve(v.size());
    for (const Expr& e : v) {
        out.push_back(mutate(e));
        if (!out.back().same_as(e)) *changed = true;
    }
    return out;
}

Expr IRMutator::visit(const IntImm* op) { return op; }
Expr IRMutator::visit(const FloatImm* op) { return op; }
Expr IRMutator::visit(const Variable* op) { return op; }
#define TS_X(N)                                         \
    Expr IRMutator::visit(const N* op) {                \
        Expr a = mutate(op->a), b = mutate(op->b);      \
        if (a.same_as(op->a) && b.same_as(op->b)) return op; \
        return N::make(std::move(a), std::move(b));     \
    }
TS_TIR_BINARY_NODES(TS_X)
#undef TS_X
Expr IRMutator::visit(const Not* op) {
    Expr a = mutate(op->a);
    return a.same_as(op->a) ? Expr(op) : Not::make(a);
}
Expr IRMutator::visit(const Select* op) {
    Expr c = mutate(op->condition), t = mutate(op->true_value), f = mutate(op->false_value);
    if (c.same_as(op->condition) && t.same_as(op->true_value) && f.same_as(op->false_value))
        return op;
    return Select::make(c, t, f);
}
Expr IRMutator::visit(const Cast* op) {
    Expr v = mutate(op->value);
    return v.same_as(op->value) ? Expr(op) : Cast::make(op->dtype, v);
}
Expr IRMutator::visit(const Call* op) {
    bool changed = false;
    auto args = mutate_exprs(op->args, &changed);
    return changed ? Call::make(op->dtype, op->op, std::move(args)) : Expr(op);
}
Expr IRMutator::visit(const BufferLoad* op) {
    bool changed = false;
    auto idx = mutate_exprs(op->indices, &changed);
    return changed ? BufferLoad::make(op->buffer, std::move(idx)) : Expr(op);
}
Expr IRMutator::visit(const Ramp* op) {
    Expr b = mutate(op->base), s = mutate(op->stride);
    if (b.same_as(op->base) && s.same_as(op->stride)) return op;
    return Ramp::make(b, s, op->lanes);
}
Expr IRMutator::visit(const Broadcast* op) {
    Expr v = mutate(op->value);
    return v.same_as(op->value) ? Expr(op) : Broadcast::make(v, op->lanes);
}
Expr IRMutator::visit(const Let* op) {
    Expr v = mutate(op->value), b = mutate(op->body);
    if (v.same_as(op->value) && b.same_as(op->body)) return op;
    return Let::make(op->var, v, b);
}
Expr IRMutator::visit(const Reduce* op) {
    Expr src = mutate(op->source);
    bool changed = !src.same_as(op->source);
    std::vector<IterVar> axis = op->axis;
    for (IterVar& iv : axis) {
        Range r = mutate_range(iv.dom);
        if (!r.min.same_as(iv.dom.min) || !r.extent.same_as(iv.dom.extent)) changed = true;
        iv.dom = r;
    }
    return changed ? Reduce::make(op->combiner, src, std::move(axis)) : Expr(op);
}

Stmt IRMutator::visit(const BufferStore* op) {
    Expr v = mutate(op->value);
    bool changed = !v.same_as(op->value);
    auto idx = mutate_exprs(op->indices, &changed);
    return changed ? BufferStore::make(op->buffer, v, std::move(idx)) : Stmt(op);
}
Stmt IRMutator::visit(const For* op) {
    Expr mn = mutate(op->min), ext = mutate(op->extent);
    Stmt body = mutate(op->body);
    if (mn.same_as(op->min) && ext.same_as(op->extent) && body.same_as(op->body)) return op;
    return For::make(op->loop_var, mn, ext, op->kind, body, op->thread_tag, op->annotations);
}
Stmt IRMutator::visit(const SeqStmt* op) {
    bool changed = false;
    std::vector<Stmt> seq;
    seq.reserve(op->seq.size());
    for (const Stmt& s : op->seq) {
        seq.push_back(mutate(s));
        if (!seq.back().same_as(s)) changed = true;
    }
    return changed ? SeqStmt::make(std::move(seq)) : Stmt(op);
}
Stmt IRMutator::visit(const IfThenElse* op) {
    Expr c = mutate(op->condition);
    Stmt t = mutate(op->then_case), e = mutate(op->else_case);
    if (c.same_as(op->condition) && t.same_as(op->then_case) && e.same_as(op->else_case)) return op;
    return IfThenElse::make(c, t, e);
}
Stmt IRMutator::visit(const LetStmt* op) {
    Expr v = mutate(op->value);
    Stmt b = mutate(op->body);
    if (v.same_as(op->value) && b.same_as(op->body)) return op;
    return LetStmt::make(op->var, v, b);
}
Stmt IRMutator::visit(const Allocate* op) {
    Stmt b = mutate(op->body);
    return b.same_as(op->body) ? Stmt(op) : Allocate::make(op->buffer, b);
}
Stmt IRMutator::visit(const Evaluate* op) {
    Expr v = mutate(op->value);
    return v.same_as(op->value) ? Stmt(op) : Evaluate::make(v);
}
Stmt IRMutator::visit(const Block* op) {
    bool changed = false;
    auto mutate_regions = [&](const std::vector<BufferRegion>& regions) {
        std::vector<BufferRegion> out = regions;
        for (BufferRegion& br : out)
            for (Range& r : br.region) {
                Range m = mutate_range(r);
                if (!m.min.same_as(r.min) || !m.extent.same_as(r.extent)) changed = true;
                r = m;
            }
        return out;
    };
    std::vector<IterVar> ivs = op->iter_vars;
    for (IterVar& iv : ivs) {
        Range r = mutate_range(iv.dom);
        if (!r.min.same_as(iv.dom.min) || !r.extent.same_as(iv.dom.extent)) changed = true;
        iv.dom = r;
    }
    auto reads = mutate_regions(op->reads);
    auto writes = mutate_regions(op->writes);
    Stmt init = mutate(op->init), body = mutate(op->body);
    if (!init.same_as(op->init) || !body.same_as(op->body)) changed = true;
    if (!changed) return op;
    return Block::make(op->name, std::move(ivs), std::move(reads), std::move(writes), init, body,
                       op->alloc_buffers, op->annotations);
}
Stmt IRMutator::visit(const BlockRealize* op) {
    bool changed = false;
    auto vals = mutate_exprs(op->iter_values, &changed);
    Expr pred = mutate(op->predicate);
    Stmt block = mutate(op->block);
    if (!pred.same_as(op->predicate) || !block.same_as(op->block)) changed = true;
    return changed ? BlockRealize::make(std::move(vals), pred, block) : Stmt(op);
}

// ---------------------------------------------------------------- helpers

namespace {
class Substituter : public IRMutator {
public:
    explicit Substituter(const std::map<const Variable*, Expr>& vmap) : m_vmap(vmap) {}

protected:
    using IRMutator::visit;
    Expr visit(const Variable* op) override {
        auto it = m_vmap.find(op);
        return it == m_vmap.end() ? Expr(op) : it->second;
    }

private:
    const std::map<const Variable*, Expr>& m_vmap;
};

class PostOrder : public IRVisitor {
public:
    explicit PostOrder(const std::function<void(const Object*)>& f) : m_f(f) {}

protected:
#define TS_X(N)                          \
    void visit(const N* op) override {   \
        IRVisitor::visit(op);            \
        m_f(op);                         \
    }
    TS_TIR_EXPR_NODES(TS_X)
    TS_TIR_STMT_NODES(TS_X)
#undef TS_X
private:
    const std::function<void(const Object*)>& m_f;
};
}  // namespace

Expr substitute(const Expr& e, const std::map<const Variable*, Expr>& vmap) {
    if (vmap.empty()) return e;
    return Substituter(vmap).mutate(e);
}

Stmt substitute(const Stmt& s, const std::map<const Variable*, Expr>& vmap) {
    if (vmap.empty()) return s;
    return Substituter(vmap).mutate(s);
}

bool uses_var(const Expr& e, const Variable* v) {
    struct Finder : IRVisitor {
        const Variable* target = nullptr;
        bool found = false;
        using IRVisitor::visit;
        void visit(const Variable* op) override { found |= op == target; }
    } finder;
    finder.target = v;
    finder.visit_expr(e);
    return finder.found;
}

void post_order_visit(const Stmt& s, const std::function<void(const Object*)>& f) {
    PostOrder(f).visit_stmt(s);
}

namespace {
bool accesses(const Stmt& s, const Buffer& b, NodeType type) {
    bool found = false;
    post_order_visit(s, [&](const Object* o) {
        if (o->node_type != type) return;
        const Buffer& x = type == NodeType::BufferLoad ? static_cast<const BufferLoad*>(o)->buffer
                                                       : static_cast<const BufferStore*>(o)->buffer;
        found |= x.same_as(b);
    });
    return found;
}
}  // namespace

bool loads_buffer(const Stmt& s, const Buffer& b) { return accesses(s, b, NodeType::BufferLoad); }
bool stores_buffer(const Stmt& s, const Buffer& b) { return accesses(s, b, NodeType::BufferStore); }

}  // namespace tessera::tir
