// Compile-time operand packing for matmul kernels (see pack_gemm.h).
#include "engine/topi/cpu/pack_gemm.h"

#include <algorithm>
#include <cstring>
#include <set>

#include "engine/schedule/schedule.h"
#include "engine/schedule/schedule_util.h"
#include "engine/tir/functor.h"
#include "engine/tir/op.h"

namespace tessera::topi {

using namespace tessera::tir;
namespace {

// The packing block under a root statement (a nest of loops around one block
// realize), or null.
const Block* pack_block_of(const Stmt& s) {
    Stmt cur = s;
    while (const For* l = cur.as<For>()) cur = l->body;
    const BlockRealize* r = cur.as<BlockRealize>();
    if (!r) return nullptr;
    const Block* b = r->block_node();
    return b->annotations.count(schedule::kPackOperandAnnotation) ? b : nullptr;
}

}  // namespace

PrepackResult prepack_constant_operands(const PrimFunc& f,
                                        const std::function<bool(size_t)>& is_constant) {
    PrepackResult out{f, {}};
    const BlockRealize* root_r = f->body.as<BlockRealize>();
    if (!root_r) return out;
    const Block* root = root_r->block_node();
    std::vector<Stmt> seq = schedule::detail::sequence(root->body);
    std::vector<Buffer> params = f->params;
    std::vector<Buffer> allocs = root->alloc_buffers;
    std::vector<Stmt> kept;
    for (size_t i = 0; i < seq.size(); ++i) {
        const Block* pb = pack_block_of(seq[i]);
        const BufferStore* st = pb ? pb->body.as<BufferStore>() : nullptr;
        if (!st) {
            kept.push_back(seq[i]);
            continue;
        }
        const std::string& ann = pb->annotations.at(schedule::kPackOperandAnnotation);
        const size_t c1 = ann.rfind(':', ann.rfind(':') - 1), c2 = ann.rfind(':');
        const std::string src = ann.substr(0, c1);
        const int t = std::stoi(ann.substr(c1 + 1, c2 - c1 - 1));
        const int64_t F = std::stoll(ann.substr(c2 + 1));
        size_t pi = params.size();
        for (size_t p = 0; p < params.size(); ++p)
            if (params[p]->name == src) pi = p;
        const Buffer xp = st->buffer;
        auto alloc_it = std::find_if(allocs.begin(), allocs.end(),
                                     [&](const Buffer& a) { return a.same_as(xp); });
        bool ok = pi < params.size() && alloc_it != allocs.end() && is_constant(pi);
        if (ok) {
            // The source must be read by nothing but this nest.
            const Buffer x = params[pi];
            for (size_t j = 0; j < seq.size() && ok; ++j)
                if (j != i && loads_buffer(seq[j], x)) ok = false;
            if (ok) {
                out.operands.push_back(PrepackedOperand{pi, x.const_shape(), t, F});
                params[pi] = xp;
                allocs.erase(alloc_it);
                continue;  // drop the nest
            }
        }
        kept.push_back(seq[i]);
    }
    if (out.operands.empty()) return out;
    Stmt body = kept.size() == 1 ? kept[0] : SeqStmt::make(kept);
    Stmt rb = Block::make(root->name, root->iter_vars, root->reads, root->writes, root->init, body,
                          allocs, root->annotations);
    out.func = PrimFunc(f->name, params,
                        BlockRealize::make(root_r->iter_values, root_r->predicate, rb), f->attrs);
    return out;
}

std::vector<uint8_t> pack_panels(const void* x, const std::vector<int64_t>& shape,
                                 size_t elem_bytes, int tiled_dim, int64_t factor) {
    const int64_t dt = shape[size_t(tiled_dim)], d_o = shape[size_t(1 - tiled_dim)];
    const int64_t panels = (dt + factor - 1) / factor;
    std::vector<uint8_t> out(size_t(panels * d_o * factor) * elem_bytes, 0);
    const auto* src = static_cast<const uint8_t*>(x);
    for (int64_t p = 0; p < panels; ++p)
        for (int64_t o = 0; o < d_o; ++o)
            for (int64_t i = 0; i < factor; ++i) {
                const int64_t col = p * factor + i;
                if (col >= dt) break;
                const int64_t r = tiled_dim == 1 ? o : col, c = tiled_dim == 1 ? col : o;
                std::memcpy(&out[size_t((p * d_o + o) * factor + i) * elem_bytes],
                            src + size_t(r * shape[1] + c) * elem_bytes, elem_bytes);
            }
    return out;
}

}  // namespace tessera::topi
