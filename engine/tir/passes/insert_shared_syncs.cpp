// insert_syncs: conservative barrier insertion for shared-memory buffers.
#include "engine/tir/passes/insert_shared_syncs.h"

#include <set>

#include "engine/tir/functor.h"

namespace tessera::tir {

namespace {

struct Access {
    std::set<const BufferNode*> reads, writes;
};

// Shared buffers a statement reads and writes (anywhere below it).
Access shared_access(const Stmt& s) {
    Access a;
    post_order_visit(s, [&](const Object* n) {
        if (n->node_type == NodeType::BufferLoad) {
            auto* l = static_cast<const BufferLoad*>(n);
            if (l->buffer->scope == "shared") a.reads.insert(l->buffer.get());
        } else if (n->node_type == NodeType::BufferStore) {
            auto* st = static_cast<const BufferStore*>(n);
            if (st->buffer->scope == "shared") a.writes.insert(st->buffer.get());
        }
    });
    return a;
}

bool intersects(const std::set<const BufferNode*>& a, const std::set<const BufferNode*>& b) {
    for (auto* x : a)
        if (b.count(x)) return true;
    return false;
}

class SyncInserter : public IRMutator {
protected:
    using IRMutator::visit;

    Stmt visit(const SeqStmt* op) override {
        std::vector<Stmt> out;
        std::set<const BufferNode*> written, read;  // since the last barrier
        bool changed = false;
        for (const Stmt& child : op->seq) {
            if (is_storage_sync(child)) {
                written.clear();
                read.clear();
                out.push_back(child);
                continue;
            }
            Access a = shared_access(child);
            if (intersects(a.reads, written) || intersects(a.writes, read)) {
                out.push_back(make_storage_sync());
                written.clear();
                read.clear();
                changed = true;
            }
            Stmt c = mutate(child);
            changed = changed || !c.same_as(child);
            out.push_back(c);
            written.insert(a.writes.begin(), a.writes.end());
            read.insert(a.reads.begin(), a.reads.end());
        }
        return changed ? SeqStmt::make(out) : Stmt(op);
    }

    Stmt visit(const For* op) override {
        Stmt body = mutate(op->body);
        // A virtual-thread loop runs its iterations one after another in each
        // thread (CUDA C prints it as an unrolled loop): as serial as a serial one.
        bool vthread = op->kind == ForKind::ThreadBinding && op->thread_tag.rfind("vthread", 0) == 0;
        bool serial = op->kind == ForKind::Serial || op->kind == ForKind::Unrolled || vthread;
        if (serial) {
            Access a = shared_access(body);
            if (intersects(a.reads, a.writes)) {
                // Unless the body already ends with a barrier.
                const SeqStmt* seq = body.as<SeqStmt>();
                bool ends_with_sync = seq && is_storage_sync(seq->seq.back());
                if (!ends_with_sync) body = SeqStmt::make({body, make_storage_sync()});
            }
        }
        if (body.same_as(op->body)) return op;
        return For::make(op->loop_var, op->min, op->extent, op->kind, body, op->thread_tag,
                         op->annotations);
    }
};

}  // namespace

Stmt make_storage_sync() {
    return Evaluate::make(Call::make(DataType::int32(), "tir.tvm_storage_sync", {}));
}

bool is_storage_sync(const Stmt& s) {
    const Evaluate* e = s.as<Evaluate>();
    if (!e) return false;
    const Call* c = e->value.as<Call>();
    return c && c->op == "tir.tvm_storage_sync";
}

Stmt insert_shared_syncs(const Stmt& kernel_body) { return SyncInserter().mutate(kernel_body); }

namespace {

// Applies the inserter at each outermost thread-bound loop.
class KernelFinder : public IRMutator {
protected:
    using IRMutator::visit;
    Stmt visit(const For* op) override {
        if (op->kind == ForKind::ThreadBinding) return SyncInserter().mutate(Stmt(op));
        return IRMutator::visit(op);
    }
};

}  // namespace

PrimFunc insert_shared_syncs(const PrimFunc& f) {
    Stmt body = KernelFinder().mutate(f->body);
    return body.same_as(f->body) ? f : f.with_body(body);
}

}  // namespace tessera::tir
