// storage_rewrite: hoist allocations per scope and share memory between
// temporaries whose live intervals do not overlap.
#include "engine/tir/passes/storage_rewrite.h"

#include <algorithm>

#include "engine/tir/functor.h"
#include "engine/tir/op.h"

namespace tessera::tir {
namespace {

bool const_shape(const Buffer& b) {
    for (const Expr& d : b->shape)
        if (!as_const_int(d)) return false;
    return true;
}

bool is_scope_boundary(const For* op) {
    return op->kind == ForKind::Parallel || op->kind == ForKind::Vectorized ||
           op->kind == ForKind::ThreadBinding;
}

Stmt rewrite_scope(const Stmt& body);

// Removes hoistable Allocates (recording their buffers) up to scope boundaries.
class Lifter : public IRMutator {
public:
    std::vector<Buffer> lifted;

protected:
    using IRMutator::visit;
    Stmt visit(const Allocate* op) override {
        if (!const_shape(op->buffer)) return IRMutator::visit(op);
        bool seen = false;  // the same buffer allocated twice (e.g. unrolled copies)
        for (const Buffer& b : lifted) seen |= b.same_as(op->buffer);
        if (!seen) lifted.push_back(op->buffer);
        return mutate(op->body);
    }
    Stmt visit(const For* op) override {
        if (!is_scope_boundary(op)) return IRMutator::visit(op);
        Stmt body = rewrite_scope(op->body);
        if (body.same_as(op->body)) return op;
        return For::make(op->loop_var, op->min, op->extent, op->kind, body, op->thread_tag,
                         op->annotations);
    }
};

class BufferRemapper : public IRMutator {
public:
    explicit BufferRemapper(const std::map<const BufferNode*, Buffer>& m) : m_map(m) {}

protected:
    using IRMutator::visit;
    Buffer remap(const Buffer& b) {
        auto it = m_map.find(b.get());
        return it == m_map.end() ? b : it->second;
    }
    Expr visit(const BufferLoad* op) override {
        Expr e = IRMutator::visit(op);
        const BufferLoad* l = e.as<BufferLoad>();
        Buffer b = remap(l->buffer);
        return b.same_as(l->buffer) ? e : BufferLoad::make(b, l->indices);
    }
    Stmt visit(const BufferStore* op) override {
        Stmt s = IRMutator::visit(op);
        const BufferStore* st = s.as<BufferStore>();
        Buffer b = remap(st->buffer);
        return b.same_as(st->buffer) ? s : BufferStore::make(b, st->value, st->indices);
    }

private:
    const std::map<const BufferNode*, Buffer>& m_map;
};

struct Slot {
    std::vector<Buffer> members;
    int64_t size = 0;
    int last = -1;
};

bool compatible(const Slot& s, const Buffer& b) {
    const Buffer& r = s.members.front();
    if (r->scope != b->scope || r->dtype != b->dtype) return false;
    if (r->shape.size() == 1 && b->shape.size() == 1) return true;
    if (r->shape.size() != b->shape.size()) return false;
    for (size_t i = 0; i < r->shape.size(); ++i)
        if (*as_const_int(r->shape[i]) != *as_const_int(b->shape[i])) return false;
    return true;
}

Stmt rewrite_scope(const Stmt& body) {
    Lifter lifter;
    Stmt lifted_body = lifter.mutate(body);
    if (lifter.lifted.empty()) return lifted_body;
    // Live interval of each buffer over the scope's top-level statements.
    std::vector<Stmt> top;
    if (const SeqStmt* seq = lifted_body.as<SeqStmt>())
        top = seq->seq;
    else
        top = {lifted_body};
    std::map<const BufferNode*, std::pair<int, int>> live;
    for (const Buffer& b : lifter.lifted) live[b.get()] = {int(top.size()), -1};
    for (int i = 0; i < int(top.size()); ++i) {
        post_order_visit(top[size_t(i)], [&](const Object* n) {
            const BufferNode* b = nullptr;
            if (n->node_type == NodeType::BufferLoad)
                b = static_cast<const BufferLoad*>(n)->buffer.get();
            else if (n->node_type == NodeType::BufferStore)
                b = static_cast<const BufferStore*>(n)->buffer.get();
            auto it = b ? live.find(b) : live.end();
            if (it == live.end()) return;
            it->second.first = std::min(it->second.first, i);
            it->second.second = std::max(it->second.second, i);
        });
    }
    std::vector<Buffer> order = lifter.lifted;
    std::stable_sort(order.begin(), order.end(), [&](const Buffer& a, const Buffer& b) {
        return live[a.get()].first < live[b.get()].first;
    });
    std::vector<Slot> slots;
    for (const Buffer& b : order) {
        auto [first, last] = live[b.get()];
        if (last < 0) first = last = 0;  // never used
        Slot* chosen = nullptr;
        for (Slot& s : slots)
            if (s.last < first && compatible(s, b)) {
                chosen = &s;
                break;
            }
        if (!chosen) {
            slots.push_back({});
            chosen = &slots.back();
        }
        chosen->members.push_back(b);
        chosen->size = std::max(chosen->size, b.num_elements());
        chosen->last = std::max(chosen->last, last);
    }
    std::map<const BufferNode*, Buffer> remap;
    std::vector<Buffer> allocs;
    for (const Slot& s : slots) {
        Buffer rep = s.members.front();
        if (s.members.size() > 1 && rep->shape.size() == 1 && rep.num_elements() != s.size)
            rep = Buffer(rep->name, rep->dtype, {IntImm::make(DataType::int64(), s.size)},
                         rep->scope);
        for (const Buffer& m : s.members)
            if (!m.same_as(rep)) remap[m.get()] = rep;
        allocs.push_back(rep);
    }
    Stmt out = remap.empty() ? lifted_body : BufferRemapper(remap).mutate(lifted_body);
    for (auto it = allocs.rbegin(); it != allocs.rend(); ++it) out = Allocate::make(*it, out);
    return out;
}

}  // namespace

PrimFunc storage_rewrite(const PrimFunc& f) {
    Stmt body = rewrite_scope(f->body);
    // Same allocations in the same places: keep the function as it was.
    if (body.same_as(f->body)) return f;
    return f.with_body(body);
}

}  // namespace tessera::tir
