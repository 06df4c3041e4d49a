// compact_shared: per-iteration regions of shared buffers (interval analysis
// over the accesses), then indices shifted into the smaller buffer.
#include "engine/tir/passes/compact_shared.h"

#include <map>
#include <optional>
#include <set>

#include "engine/arith/analyzer.h"
#include "engine/tir/functor.h"
#include "engine/tir/op.h"
#include "engine/tir/passes/simplify.h"

namespace tessera::tir {

namespace {

struct Access {
    std::vector<Expr> indices;
    std::vector<const For*> loops;  // from the Allocate down
    std::vector<Expr> guards;       // conditions of the enclosing IfThenElse (then branches)
};

// Accesses of one buffer below its Allocate, with the loops enclosing each.
class AccessCollector : public IRVisitor {
public:
    explicit AccessCollector(const BufferNode* b) : m_buffer(b) {}
    std::vector<Access> accesses;
    std::set<const Variable*> defined;  // loop and let variables inside

protected:
    using IRVisitor::visit;
    void visit(const For* op) override {
        defined.insert(op->loop_var.get());
        m_loops.push_back(op);
        IRVisitor::visit(op);
        m_loops.pop_back();
    }
    void visit(const LetStmt* op) override {
        defined.insert(op->var.get());
        IRVisitor::visit(op);
    }
    void visit(const IfThenElse* op) override {
        visit_expr(op->condition);
        m_guards.push_back(op->condition);
        visit_stmt(op->then_case);
        m_guards.pop_back();
        if (op->else_case.defined()) visit_stmt(op->else_case);
    }
    void visit(const BufferLoad* op) override {
        if (op->buffer.get() == m_buffer) accesses.push_back({op->indices, m_loops, m_guards});
        IRVisitor::visit(op);
    }
    void visit(const BufferStore* op) override {
        if (op->buffer.get() == m_buffer) accesses.push_back({op->indices, m_loops, m_guards});
        IRVisitor::visit(op);
    }

private:
    const BufferNode* m_buffer;
    std::vector<const For*> m_loops;
    std::vector<Expr> m_guards;
};

// Replaces every subexpression structurally equal to `from` by `to`.
class ReplaceExpr : public IRMutator {
public:
    ReplaceExpr(Expr from, Expr to) : m_from(std::move(from)), m_to(std::move(to)) {}

protected:
    using IRMutator::visit;
    template <typename T>
    Expr check(const T* op) {
        if (m_from.node_type() == T::kType && structural_equal(Expr(op), m_from)) return m_to;
        return IRMutator::visit(op);
    }
    Expr visit(const Add* op) override { return check(op); }
    Expr visit(const Sub* op) override { return check(op); }
    Expr visit(const Mul* op) override { return check(op); }
    Expr visit(const FloorDiv* op) override { return check(op); }
    Expr visit(const FloorMod* op) override { return check(op); }

private:
    Expr m_from, m_to;
};

// The conjuncts of a condition.
void conjuncts(const Expr& c, std::vector<Expr>& out) {
    if (const And* a = c.as<And>()) {
        conjuncts(a->a, out);
        conjuncts(a->b, out);
        return;
    }
    out.push_back(c);
}

// The access's indices with each guarded expression (a guard `e < c`, as a
// split's predicate `fused < extent`) replaced by a variable relaxed over
// [min(e), c - 1]: the region of a predicated fetch is the region it stores.
std::vector<Expr> guarded_indices(const Access& a, std::map<const Variable*, Range>& relax,
                                  arith::Analyzer& ana, std::vector<Var>& keep_alive) {
    std::vector<Expr> idx;
    for (const Expr& e : a.indices) idx.push_back(ana.simplify(e));
    std::vector<Expr> conds;
    for (const Expr& g : a.guards) conjuncts(g, conds);
    for (const Expr& c : conds) {
        const LT* lt = c.as<LT>();
        const int64_t* bound = lt ? as_const_int(lt->b) : nullptr;
        if (!bound || lt->a.as<IntImm>() || lt->a.as<Variable>()) continue;
        Expr e = ana.simplify(lt->a);
        arith::IntSet set = arith::eval_set(e, relax, ana);
        const int64_t* mn = set.min.defined() ? as_const_int(set.min) : nullptr;
        if (!mn || *mn >= *bound) continue;
        Var w("guarded", e.dtype());
        keep_alive.push_back(w);
        relax[w.get()] = Range{IntImm::make(e.dtype(), *mn), IntImm::make(e.dtype(), *bound - *mn)};
        for (Expr& x : idx) x = ReplaceExpr(e, w).mutate(x);
    }
    return idx;
}

bool touches(const Stmt& s, const BufferNode* b, bool stores) {
    bool found = false;
    post_order_visit(s, [&](const Object* n) {
        if (stores && n->node_type == NodeType::BufferStore)
            found |= static_cast<const BufferStore*>(n)->buffer.get() == b;
        if (!stores && n->node_type == NodeType::BufferLoad)
            found |= static_cast<const BufferLoad*>(n)->buffer.get() == b;
    });
    return found;
}

// Every child of the loop's body that stores to b precedes every child that loads it.
bool filled_then_read(const For* l, const BufferNode* b) {
    const SeqStmt* seq = l->body.as<SeqStmt>();
    if (!seq) return false;
    int last_store = -1, first_load = 1 << 30;
    for (size_t i = 0; i < seq->seq.size(); ++i) {
        if (touches(seq->seq[i], b, true)) last_store = int(i);
        if (touches(seq->seq[i], b, false) && first_load == 1 << 30) first_load = int(i);
    }
    return last_store >= 0 && last_store < first_load;
}

bool is_thread(const For* l) {
    return l->kind == ForKind::ThreadBinding && l->thread_tag.rfind("threadIdx.", 0) == 0;
}

std::optional<int64_t> diff(arith::Analyzer& ana, const Expr& a, const Expr& b) {
    Expr d = ana.simplify(a - b);
    if (const int64_t* c = as_const_int(d)) return *c;
    return std::nullopt;
}

class Shift : public IRMutator {
public:
    Shift(const BufferNode* from, Buffer to, std::vector<Expr> lo)
        : m_from(from), m_to(std::move(to)), m_lo(std::move(lo)) {}

protected:
    using IRMutator::visit;
    std::vector<Expr> shifted(const std::vector<Expr>& idx) {
        std::vector<Expr> out = idx;
        for (size_t d = 0; d < out.size(); ++d)
            if (m_lo[d].defined()) out[d] = out[d] - m_lo[d];
        return out;
    }
    Expr visit(const BufferLoad* op) override {
        Expr e = IRMutator::visit(op);
        const BufferLoad* l = e.as<BufferLoad>();
        if (l->buffer.get() != m_from) return e;
        return BufferLoad::make(m_to, shifted(l->indices));
    }
    Stmt visit(const BufferStore* op) override {
        Stmt s = IRMutator::visit(op);
        const BufferStore* st = s.as<BufferStore>();
        if (st->buffer.get() != m_from) return s;
        return BufferStore::make(m_to, st->value, shifted(st->indices));
    }

private:
    const BufferNode* m_from;
    Buffer m_to;
    std::vector<Expr> m_lo;
};

// The compacted Allocate, or the input when the buffer stays as it is.
Stmt compact(const Allocate* op, const Stmt& body) {
    const Buffer& b = op->buffer;
    std::vector<int64_t> shape;
    for (const Expr& d : b->shape) {
        const int64_t* c = as_const_int(d);
        if (!c) return Stmt();
        shape.push_back(*c);
    }
    AccessCollector col(b.get());
    col.visit_stmt(body);
    if (col.accesses.empty()) return Stmt();
    // Deepest loop common to all accesses.
    size_t common = col.accesses[0].loops.size();
    for (const Access& a : col.accesses) {
        size_t k = 0;
        while (k < common && k < a.loops.size() && a.loops[k] == col.accesses[0].loops[k]) ++k;
        common = k;
    }
    if (common == 0 || !filled_then_read(col.accesses[0].loops[common - 1], b.get()))
        return Stmt();
    std::set<const Variable*> kept;
    for (size_t k = 0; k < common; ++k)
        if (!is_thread(col.accesses[0].loops[k]))
            kept.insert(col.accesses[0].loops[k]->loop_var.get());
    arith::Analyzer ana;
    std::vector<Var> guard_vars;
    std::vector<Expr> lo(shape.size()), hi(shape.size());
    std::vector<bool> whole(shape.size(), false);
    for (const Access& a : col.accesses) {
        std::map<const Variable*, Range> relax;
        for (size_t k = 0; k < a.loops.size(); ++k)
            if (k >= common || is_thread(a.loops[k]))
                relax[a.loops[k]->loop_var.get()] = Range{a.loops[k]->min, a.loops[k]->extent};
        std::vector<Expr> indices = guarded_indices(a, relax, ana, guard_vars);
        for (size_t d = 0; d < shape.size(); ++d) {
            if (whole[d]) continue;
            arith::IntSet set = arith::eval_set(indices[d], relax, ana);
            bool ok = set.bounded();
            // The window's start may only use loops kept symbolic.
            if (ok)
                post_order_visit(Evaluate::make(set.min + set.max), [&](const Object* n) {
                    auto* v = n->node_type == NodeType::Variable
                                  ? static_cast<const Variable*>(n)
                                  : nullptr;
                    if (v && col.defined.count(v) && !kept.count(v)) ok = false;
                });
            if (!ok) {
                whole[d] = true;
                continue;
            }
            if (!lo[d].defined()) {
                lo[d] = set.min, hi[d] = set.max;
                continue;
            }
            auto dl = diff(ana, set.min, lo[d]), dh = diff(ana, set.max, hi[d]);
            if (!dl || !dh) {
                whole[d] = true;
                continue;
            }
            if (*dl < 0) lo[d] = set.min;
            if (*dh > 0) hi[d] = set.max;
        }
    }
    std::vector<Expr> new_shape = b->shape, shift(shape.size());
    bool changed = false;
    for (size_t d = 0; d < shape.size(); ++d) {
        if (whole[d]) continue;
        auto ext = diff(ana, hi[d], lo[d]);
        if (!ext || *ext + 1 >= shape[d]) continue;
        new_shape[d] = Expr(*ext + 1);
        shift[d] = ana.simplify(lo[d]);
        changed = true;
    }
    if (!changed) return Stmt();
    Buffer nb(b->name, b->dtype, new_shape, b->scope);
    return Allocate::make(nb, Shift(b.get(), nb, shift).mutate(body));
}

class Compactor : public IRMutator {
protected:
    using IRMutator::visit;
    Stmt visit(const Allocate* op) override {
        Stmt body = mutate(op->body);
        if (op->buffer->scope == "shared")
            if (Stmt c = compact(op, body); c.defined()) return c;
        return body.same_as(op->body) ? Stmt(op) : Allocate::make(op->buffer, body);
    }
};

}  // namespace

Stmt compact_shared_buffers(const Stmt& s) { return Compactor().mutate(s); }

PrimFunc compact_shared_buffers(const PrimFunc& f) {
    Stmt body = compact_shared_buffers(f->body);
    return body.same_as(f->body) ? f : f.with_body(body);
}

int64_t shared_allocation_bytes(const Stmt& s) {
    int64_t total = 0;
    post_order_visit(s, [&](const Object* n) {
        if (n->node_type != NodeType::Allocate) return;
        const Buffer& b = static_cast<const Allocate*>(n)->buffer;
        if (b->scope != "shared") return;
        int64_t bytes = int64_t(b->dtype.bytes()) * b->dtype.lanes;
        for (const Expr& d : b->shape) {
            const int64_t* c = as_const_int(d);
            if (!c) return;
            bytes *= *c;
        }
        total += bytes;
    });
    return total;
}

}  // namespace tessera::tir
