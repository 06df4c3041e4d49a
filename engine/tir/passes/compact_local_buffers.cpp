// compact_local_buffers: local allocations moved to their accesses' innermost
// common loop and shrunk to the box they touch there (see the header).
#include "engine/tir/passes/compact_local_buffers.h"

#include <map>
#include <set>

#include "engine/arith/analyzer.h"
#include "engine/arith/linear_form.h"
#include "engine/tir/functor.h"
#include "engine/tir/op.h"

namespace tessera::tir {
namespace {

bool touches(const Stmt& s, const BufferNode* b) {
    bool found = false;
    post_order_visit(s, [&](const Object* o) {
        if (o->node_type == NodeType::BufferLoad)
            found |= static_cast<const BufferLoad*>(o)->buffer.get() == b;
        else if (o->node_type == NodeType::BufferStore)
            found |= static_cast<const BufferStore*>(o)->buffer.get() == b;
    });
    return found;
}

// The accesses of one buffer in a statement, and the variables defined there.
struct Accesses : IRVisitor {
    const BufferNode* buf = nullptr;
    std::vector<std::vector<Expr>> indices;
    std::map<const Variable*, Range> loops;
    std::set<const Variable*> lets;
    using IRVisitor::visit;
    void visit(const For* op) override {
        loops[op->loop_var.get()] = Range{op->min, op->extent};
        IRVisitor::visit(op);
    }
    void visit(const LetStmt* op) override {
        lets.insert(op->var.get());
        IRVisitor::visit(op);
    }
    void visit(const Let* op) override {
        lets.insert(op->var.get());
        IRVisitor::visit(op);
    }
    void visit(const BufferLoad* op) override {
        if (op->buffer.get() == buf) indices.push_back(op->indices);
        IRVisitor::visit(op);
    }
    void visit(const BufferStore* op) override {
        if (op->buffer.get() == buf) indices.push_back(op->indices);
        IRVisitor::visit(op);
    }
};

bool uses_any(const Expr& e, const std::set<const Variable*>& vars) {
    for (const Variable* v : vars)
        if (uses_var(e, v)) return true;
    return false;
}

class Rebase : public IRMutator {
public:
    Rebase(const BufferNode* from, Buffer to, std::vector<Expr> origin, arith::Analyzer& ana)
        : m_from(from), m_to(std::move(to)), m_origin(std::move(origin)), m_ana(ana) {}

protected:
    using IRMutator::visit;
    std::vector<Expr> shift(const std::vector<Expr>& idx) {
        std::vector<Expr> out;
        for (size_t d = 0; d < idx.size(); ++d) out.push_back(m_ana.simplify(idx[d] - m_origin[d]));
        return out;
    }
    Expr visit(const BufferLoad* op) override {
        Expr e = IRMutator::visit(op);
        const BufferLoad* l = e.as<BufferLoad>();
        if (l->buffer.get() != m_from) return e;
        return BufferLoad::make(m_to, shift(l->indices));
    }
    Stmt visit(const BufferStore* op) override {
        Stmt s = IRMutator::visit(op);
        const BufferStore* st = s.as<BufferStore>();
        if (st->buffer.get() != m_from) return s;
        return BufferStore::make(m_to, st->value, shift(st->indices));
    }

private:
    const BufferNode* m_from;
    Buffer m_to;
    std::vector<Expr> m_origin;
    arith::Analyzer& m_ana;
};

// The statement `p` with `buf` allocated inside it, shrunk to the box its
// accesses cover when the loops in `outer` take one value each; undefined
// when that box is not of constant size, not smaller than the buffer, or when
// an iteration of an outer loop could see another iteration's values.
Stmt compact_at(const Stmt& p, const Buffer& buf, const std::vector<const For*>& outer) {
    Accesses acc;
    acc.buf = buf.get();
    acc.visit_stmt(p);
    if (acc.indices.empty()) return Stmt();
    const std::vector<int64_t> shape = buf.const_shape();
    arith::Analyzer ana;
    for (const For* f : outer) ana.bind(f->loop_var, Range{f->min, f->extent});
    // Outer loops of one iteration are relaxed with the inner ones: their
    // variable is a constant (a batch of one written as i0 by one block and
    // 0 by another).
    for (const For* f : outer)
        if (const int64_t* e = as_const_int(f->extent); e && *e == 1)
            acc.loops[f->loop_var.get()] = Range{f->min, f->extent};
    std::set<const Variable*> inner = acc.lets;
    for (const auto& [v, r] : acc.loops) inner.insert(v);
    std::vector<Expr> origin;
    std::vector<int64_t> extent;
    for (size_t d = 0; d < shape.size(); ++d) {
        Expr base;
        int64_t lo = 0, hi = 0;
        for (const std::vector<Expr>& idx : acc.indices) {
            if (idx.size() != shape.size()) return Stmt();
            // An index of the outer loops alone is one point per iteration
            // (eval_set would widen a floordiv / floormod of a bound outer
            // variable to its whole range).
            const arith::IntSet s = uses_any(idx[d], inner)
                                        ? arith::eval_set(idx[d], acc.loops, ana)
                                        : arith::IntSet{idx[d], idx[d]};
            if (!s.bounded() || uses_any(s.min, inner) || uses_any(s.max, inner)) return Stmt();
            if (!base.defined()) base = s.min;
            const Expr from = ana.simplify(s.min - base), to = ana.simplify(s.max - base);
            const int64_t* a = as_const_int(from);
            const int64_t* b = as_const_int(to);
            if (!a || !b) return Stmt();
            lo = std::min(lo, *a);
            hi = std::max(hi, *b);
        }
        const int64_t n = hi - lo + 1;
        if (n >= shape[d]) {  // the whole dimension (guarded accesses may overhang)
            origin.push_back(make_const(base.dtype(), 0));
            extent.push_back(shape[d]);
        } else {
            origin.push_back(ana.simplify(base + make_const(base.dtype(), double(lo))));
            extent.push_back(n);
        }
    }
    int64_t before = 1, after = 1;
    for (size_t d = 0; d < shape.size(); ++d) before *= shape[d], after *= extent[d];
    if (after >= before) return Stmt();
    // Each outer loop must move the box by at least its size in some
    // dimension, or its row-major offset by at least the span of the box in
    // the buffer (a loop over fused rows, decomposed by // and %: a softmax's
    // (head, row) at fused // 512, fused % 512 starts at 512 * fused): its
    // iterations then touch disjoint elements.
    auto moves_by_at_least = [](const Expr& e, const Var& v, int64_t size) {
        int64_t c = 0;
        for (const arith::LinearTerm& t : arith::to_linear(e).terms) {
            if (t.term.as<Variable>() == v.get()) c = t.coeff;
            else if (uses_var(t.term, v.get())) return false;
        }
        return c >= size || -c >= size;
    };
    Expr flat = make_const(origin[0].dtype(), 0);
    int64_t stride = 1, span = 1;
    for (size_t d = shape.size(); d-- > 0;) {
        flat = flat + origin[d] * make_const(origin[d].dtype(), double(stride));
        span += (extent[d] - 1) * stride;
        stride *= shape[d];
    }
    flat = ana.simplify(flat);
    for (const For* f : outer) {
        const int64_t* ext = as_const_int(f->extent);
        if (ext && *ext == 1) continue;
        bool disjoint = moves_by_at_least(flat, f->loop_var, span);
        for (size_t d = 0; d < shape.size() && !disjoint; ++d)
            disjoint = moves_by_at_least(origin[d], f->loop_var, extent[d]);
        if (!disjoint) return Stmt();
    }
    std::vector<Expr> new_shape;
    for (int64_t e : extent) new_shape.push_back(make_const(buf->shape[0].dtype(), double(e)));
    Buffer small(buf->name, buf->dtype, new_shape, buf->scope);
    Rebase rb(buf.get(), small, origin, ana);
    return Allocate::make(small, rb.mutate(p));
}

class Compactor : public IRMutator {
protected:
    using IRMutator::visit;
    Stmt visit(const Allocate* op) override {
        Stmt body = mutate(op->body);
        const Buffer& buf = op->buffer;
        bool const_shape = !buf->shape.empty();
        for (const Expr& d : buf->shape) const_shape &= as_const_int(d) != nullptr;
        if (buf->scope != "local" || !const_shape) return rebuild(op, body);
        // The chain of statements down to the innermost one holding every
        // access (through loops, sequences and other buffers' allocations).
        std::vector<Stmt> chain = {body};
        std::vector<size_t> child;  // chain[i + 1] is child[i] of a SeqStmt chain[i]
        for (;;) {
            const Stmt& s = chain.back();
            if (const For* f = s.as<For>();
                f && (f->kind == ForKind::Serial || f->kind == ForKind::Parallel)) {
                chain.push_back(f->body);
                child.push_back(0);
                continue;
            }
            if (const Allocate* a = s.as<Allocate>()) {  // another buffer's scope
                chain.push_back(a->body);
                child.push_back(0);
                continue;
            }
            if (const SeqStmt* q = s.as<SeqStmt>()) {
                size_t which = 0, n = 0;
                for (size_t i = 0; i < q->seq.size(); ++i)
                    if (touches(q->seq[i], buf.get())) which = i, ++n;
                if (n == 1) {
                    chain.push_back(q->seq[which]);
                    child.push_back(which);
                    continue;
                }
            }
            break;
        }
        for (size_t depth = chain.size(); depth-- > 0;) {
            std::vector<const For*> outer;
            for (size_t i = 0; i < depth; ++i)
                if (const For* f = chain[i].as<For>()) outer.push_back(f);
            Stmt cur = compact_at(chain[depth], buf, outer);
            if (!cur.defined()) continue;
            for (size_t i = depth; i-- > 0;) {
                if (const For* f = chain[i].as<For>()) {
                    cur = For::make(f->loop_var, f->min, f->extent, f->kind, cur, f->thread_tag,
                                    f->annotations);
                } else if (const Allocate* a = chain[i].as<Allocate>()) {
                    cur = Allocate::make(a->buffer, cur);
                } else {
                    std::vector<Stmt> seq = chain[i].as<SeqStmt>()->seq;
                    seq[child[i]] = cur;
                    cur = SeqStmt::make(seq);
                }
            }
            return cur;
        }
        return rebuild(op, body);
    }

private:
    static Stmt rebuild(const Allocate* op, const Stmt& body) {
        if (body.same_as(op->body)) return Stmt(op);
        return Allocate::make(op->buffer, body);
    }
};

}  // namespace

PrimFunc compact_local_buffers(const PrimFunc& f) {
    Compactor c;
    Stmt body = c.mutate(f->body);
    if (body.same_as(f->body)) return f;
    return f.with_body(body);
}

}  // namespace tessera::tir
