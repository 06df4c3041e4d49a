// thread_storage_sync: barriers for shared memory hazards under thread loops.
#include "engine/tir/passes/thread_storage_sync.h"

#include <set>

#include "engine/tir/functor.h"
#include "engine/tir/op.h"

namespace tessera::tir {

Stmt make_storage_sync(const std::string& scope) {
    (void)scope;  // only "shared" is synchronized
    return Evaluate::make(Call::make(DataType::int32(), "tir.tvm_storage_sync", {}));
}

bool is_storage_sync(const Stmt& s) {
    const Evaluate* e = s.as<Evaluate>();
    const Call* c = e ? e->value.as<Call>() : nullptr;
    return c && c->op == "tir.tvm_storage_sync";
}

namespace {

using BufSet = std::set<const BufferNode*>;

struct Access {
    BufSet reads, writes;
};

Access accesses_of(const Stmt& s) {
    Access a;
    post_order_visit(s, [&](const Object* n) {
        if (n->node_type == NodeType::BufferLoad) {
            const BufferLoad* l = static_cast<const BufferLoad*>(n);
            if (l->buffer->scope == "shared") a.reads.insert(l->buffer.get());
        } else if (n->node_type == NodeType::BufferStore) {
            const BufferStore* st = static_cast<const BufferStore*>(n);
            if (st->buffer->scope == "shared") a.writes.insert(st->buffer.get());
        }
    });
    return a;
}

bool intersects(const BufSet& a, const BufSet& b) {
    for (const BufferNode* x : a)
        if (b.count(x)) return true;
    return false;
}

// A write after a pending read or a read after a pending write needs a barrier.
bool conflicts(const Access& pending, const Access& next) {
    return intersects(pending.writes, next.reads) || intersects(pending.reads, next.writes);
}

class SyncPlanner : public IRMutator {
protected:
    using IRMutator::visit;

    Stmt visit(const For* op) override {
        bool thread = op->kind == ForKind::ThreadBinding;
        m_depth += thread;
        Stmt s = IRMutator::visit(op);
        m_depth -= thread;
        const For* loop = s.as<For>();
        if (m_depth == 0 || !loop || thread) return s;
        // A serial loop inside thread scope: iteration k+1's start after k's end.
        const SeqStmt* seq = loop->body.as<SeqStmt>();
        if (!seq) return s;
        Access tail, head;
        for (auto it = seq->seq.rbegin(); it != seq->seq.rend() && !is_storage_sync(*it); ++it) {
            Access a = accesses_of(*it);
            tail.reads.insert(a.reads.begin(), a.reads.end());
            tail.writes.insert(a.writes.begin(), a.writes.end());
        }
        for (const Stmt& x : seq->seq) {
            if (is_storage_sync(x)) break;
            Access a = accesses_of(x);
            head.reads.insert(a.reads.begin(), a.reads.end());
            head.writes.insert(a.writes.begin(), a.writes.end());
        }
        if (!conflicts(tail, head)) return s;
        std::vector<Stmt> body = seq->seq;
        body.push_back(make_storage_sync());
        return For::make(loop->loop_var, loop->min, loop->extent, loop->kind, SeqStmt::make(body),
                         loop->thread_tag, loop->annotations);
    }

    Stmt visit(const SeqStmt* op) override {
        Stmt s = IRMutator::visit(op);
        if (m_depth == 0) return s;
        const SeqStmt* seq = s.as<SeqStmt>();
        if (!seq) return s;
        std::vector<Stmt> out;
        Access pending;
        bool changed = false;
        for (const Stmt& x : seq->seq) {
            if (is_storage_sync(x)) {
                pending = {};
                out.push_back(x);
                continue;
            }
            Access a = accesses_of(x);
            if (conflicts(pending, a)) {
                out.push_back(make_storage_sync());
                pending = {};
                changed = true;
            }
            pending.reads.insert(a.reads.begin(), a.reads.end());
            pending.writes.insert(a.writes.begin(), a.writes.end());
            out.push_back(x);
        }
        return changed ? SeqStmt::make(out) : s;
    }

private:
    int m_depth = 0;
};

}  // namespace

PrimFunc thread_storage_sync(const PrimFunc& f) {
    Stmt body = SyncPlanner().mutate(f->body);
    return body.same_as(f->body) ? f : f.with_body(body);
}

}  // namespace tessera::tir
