// transform_layout: the dimensions of a buffer the function allocates (an
// intermediate, e.g. a matmul's local accumulator) in another order. Every
// load, store and access region of it is rewritten; what the function
// computes does not change, which index runs contiguous in memory does.
#include <algorithm>

#include "engine/schedule/primitives.h"
#include "engine/schedule/schedule_util.h"
#include "engine/tir/functor.h"

namespace tessera::schedule::detail {

using namespace tir;

namespace {

template <typename T>
std::vector<T> permuted(const std::vector<T>& v, const std::vector<int64_t>& perm) {
    std::vector<T> out;
    out.reserve(perm.size());
    for (int64_t p : perm) out.push_back(v[size_t(p)]);
    return out;
}

// Accesses to `from` become accesses to `to` with the indices permuted.
class PermuteBuffer : public IRMutator {
public:
    PermuteBuffer(Buffer from, Buffer to, std::vector<int64_t> perm)
        : m_from(std::move(from)), m_to(std::move(to)), m_perm(std::move(perm)) {}

protected:
    using IRMutator::visit;
    Expr visit(const BufferLoad* op) override {
        Expr e = IRMutator::visit(op);
        const BufferLoad* l = e.as<BufferLoad>();
        if (!l || !l->buffer.same_as(m_from)) return e;
        return BufferLoad::make(m_to, permuted(l->indices, m_perm));
    }
    Stmt visit(const BufferStore* op) override {
        Stmt s = IRMutator::visit(op);
        const BufferStore* st = s.as<BufferStore>();
        if (!st || !st->buffer.same_as(m_from)) return s;
        return BufferStore::make(m_to, st->value, permuted(st->indices, m_perm));
    }
    Stmt visit(const Block* op) override {
        Stmt s = IRMutator::visit(op);
        const Block* b = s.as<Block>();
        auto regions = [&](std::vector<BufferRegion> rs) {
            for (BufferRegion& r : rs)
                if (r.buffer.same_as(m_from)) {
                    r.buffer = m_to;
                    r.region = permuted(r.region, m_perm);
                }
            return rs;
        };
        std::vector<Buffer> allocs = b->alloc_buffers;
        for (Buffer& a : allocs)
            if (a.same_as(m_from)) a = m_to;
        return Block::make(b->name, b->iter_vars, regions(b->reads), regions(b->writes), b->init,
                           b->body, allocs, b->annotations);
    }

private:
    Buffer m_from, m_to;
    std::vector<int64_t> m_perm;
};

}  // namespace

PrimFunc transform_layout(const PrimFunc& f, const std::string& buffer,
                          const std::vector<int64_t>& perm) {
    Buffer x;
    for (const BlockRealize* r : blocks_under(f->body))
        for (const Buffer& a : r->block_node()->alloc_buffers)
            if (a->name == buffer) x = a;
    if (!x.defined()) {
        const bool param = std::any_of(f->params.begin(), f->params.end(),
                                       [&](const Buffer& p) { return p->name == buffer; });
        TS_SCHED_CHECK(!param, "buffer '" << buffer
                                          << "' is a parameter: its layout is the caller's "
                                             "(pack_operand copies a matmul operand into panels)");
        TS_SCHED_CHECK(false, "no buffer named '" << buffer << "' is allocated in the function");
    }
    const size_t rank = x->shape.size();
    TS_SCHED_CHECK(perm.size() == rank, "buffer '" << buffer << "' has " << rank
                                                   << " dimensions; the permutation names "
                                                   << perm.size());
    std::vector<bool> seen(rank, false);
    for (int64_t p : perm) {
        TS_SCHED_CHECK(p >= 0 && p < int64_t(rank),
                       "dimension " << p << " is out of range [0, " << rank << ")");
        TS_SCHED_CHECK(!seen[size_t(p)], "dimension " << p << " appears twice in the permutation");
        seen[size_t(p)] = true;
    }
    Buffer y(x->name, x->dtype, permuted(x->shape, perm), x->scope);
    PermuteBuffer m(x, y, perm);
    return f.with_body(m.mutate(f->body));
}

}  // namespace tessera::schedule::detail
