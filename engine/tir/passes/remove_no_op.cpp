// remove_no_op: drops statements without effect, bottom-up.
#include "engine/tir/passes/remove_no_op.h"

#include "engine/tir/functor.h"
#include "engine/tir/op.h"
#include "engine/tir/passes/simplify.h"

namespace tessera::tir {

bool is_no_op(const Stmt& s) {
    if (!s.defined()) return true;
    const Evaluate* e = s.as<Evaluate>();
    return e && (e->value.as<IntImm>() || e->value.as<FloatImm>());
}

namespace {

Stmt no_op() { return Evaluate::make(Expr(0)); }

class NoOpRemover : public IRMutator {
protected:
    using IRMutator::visit;

    Stmt visit(const BufferStore* op) override {
        if (const BufferLoad* l = op->value.as<BufferLoad>();
            l && l->buffer.same_as(op->buffer) && l->indices.size() == op->indices.size()) {
            bool same = true;
            for (size_t i = 0; i < l->indices.size(); ++i)
                same = same && structural_equal(l->indices[i], op->indices[i]);
            if (same) return no_op();
        }
        return IRMutator::visit(op);
    }

    Stmt visit(const For* op) override {
        if (const int64_t* e = as_const_int(op->extent); e && *e <= 0) return no_op();
        Stmt s = IRMutator::visit(op);
        if (const For* f = s.as<For>(); f && is_no_op(f->body)) return no_op();
        return s;
    }

    Stmt visit(const SeqStmt* op) override {
        std::vector<Stmt> seq;
        bool changed = false;
        for (const Stmt& s : op->seq) {
            Stmt m = mutate(s);
            changed |= !m.same_as(s);
            if (is_no_op(m)) {
                changed = true;
                continue;
            }
            seq.push_back(m);
        }
        if (!changed) return op;
        if (seq.empty()) return no_op();
        return SeqStmt::make(std::move(seq));
    }

    Stmt visit(const IfThenElse* op) override {
        if (const IntImm* c = op->condition.as<IntImm>()) {
            if (c->value) return mutate(op->then_case);
            return op->else_case.defined() ? mutate(op->else_case) : no_op();
        }
        Stmt t = mutate(op->then_case), e = mutate(op->else_case);
        bool else_empty = !op->else_case.defined() || is_no_op(e);
        if (is_no_op(t) && else_empty) return no_op();
        if (is_no_op(t))  // if (c) {} else { e }  ->  if (!c) { e }
            return IfThenElse::make(simplify(Not::make(op->condition)), e);
        Stmt el = op->else_case.defined() && is_no_op(e) ? Stmt() : e;
        if (t.same_as(op->then_case) && el.same_as(op->else_case)) return op;
        return IfThenElse::make(op->condition, t, el);
    }

    Stmt visit(const LetStmt* op) override {
        Stmt s = IRMutator::visit(op);
        if (const LetStmt* l = s.as<LetStmt>(); l && is_no_op(l->body)) return no_op();
        return s;
    }

    Stmt visit(const Allocate* op) override {
        Stmt s = IRMutator::visit(op);
        if (const Allocate* a = s.as<Allocate>(); a && is_no_op(a->body)) return no_op();
        return s;
    }

    Stmt visit(const Evaluate* op) override {
        // Evaluate of a pure expression without calls does nothing.
        if (is_no_op(Stmt(op))) return op;
        bool has_call = false;
        post_order_visit(Stmt(op), [&](const Object* n) {
            if (n->node_type == NodeType::Call || n->node_type == NodeType::BufferLoad)
                has_call = true;
        });
        return has_call ? Stmt(op) : no_op();
    }
};

}  // namespace

Stmt remove_no_op(const Stmt& s) { return NoOpRemover().mutate(s); }

PrimFunc remove_no_op(const PrimFunc& f) {
    Stmt body = remove_no_op(f->body);
    return body.same_as(f->body) ? f : f.with_body(body);
}

}  // namespace tessera::tir
