// The matmul schedule rule (see schedule_cpu_matmul.h).
#include "engine/topi/schedule_cpu_matmul.h"

#include <algorithm>

#include "engine/schedule/primitives.h"
#include "engine/schedule/schedule_util.h"
#include "engine/tir/functor.h"
#include "engine/tir/op.h"

namespace tessera::topi {

using schedule::Schedule;
using Names = std::vector<std::string>;

namespace {

constexpr int64_t kMinParallelWork = 1 << 15;
// Blocking: a KC x NR panel of B (at most kPanelBytes) is reused by the
// MC / MR register tiles of an MC x KC block of A (in L2). Measured on an
// AVX-512 Xeon (48 KiB L1, 2 MiB L2): a 64 KiB panel (KC = 512, streamed
// from L2) is no slower than an L1-sized one at 1024^3 and 2048^3 and halves
// the passes over C (each pass over K re-reads and re-writes C); MC = 64
// rows was a little faster than 128 or 256 at 2048^3; packing A as well did
// not pay for its copy.
constexpr int64_t kPanelBytes = 64 * 1024;
constexpr int64_t kMcRows = 64;
// B with at least this many elements is packed by all threads.
constexpr int64_t kParallelPackElements = 1 << 18;
// B smaller than this stays in L1 unpacked: packing does not pay.
constexpr int64_t kPackMinBytes = 48 * 1024;

const tir::Block* find_block(const tir::PrimFunc& f, const std::string& name) {
    auto p = schedule::detail::find_block(f->body, name);
    return p ? p->back().as<tir::BlockRealize>()->block_node() : nullptr;
}

int64_t loop_extent(const tir::PrimFunc& f, const std::string& name) {
    auto p = schedule::detail::find_loop(f->body, name);
    if (!p) return -1;
    const int64_t* c = tir::as_const_int(p->back().as<tir::For>()->extent);
    return c ? *c : -1;
}

/// Largest divisor of n in [lo, hi], or hi when there is none (a tail).
int64_t pick_factor(int64_t n, int64_t lo, int64_t hi) {
    if (n <= hi) return n;
    for (int64_t f = hi; f >= lo; --f)
        if (n % f == 0) return f;
    return hi;
}

bool is_var(const tir::Expr& e, const tir::Var& v) {
    return e.as<tir::Variable>() == v.get();
}

/// The rank-2 parameter the block reads as X[k, j] or X[j, k] (the B
/// operand); its name and the dimension indexed by j. Empty when none.
std::pair<std::string, int> find_b_operand(const tir::PrimFunc& f, const tir::Block* b) {
    const auto& iv = b->iter_vars;
    if (iv.size() < 3 || iv.back().kind != tir::IterKind::Reduce) return {"", -1};
    const tir::Var& vj = iv[iv.size() - 2].var;
    const tir::Var& vk = iv.back().var;
    for (const tir::BufferRegion& r : b->reads) {
        const tir::Buffer& x = r.buffer;
        if (x->shape.size() != 2 || !schedule::detail::is_param(f, x)) continue;
        auto all = schedule::detail::load_indices(b, x);
        if (all.size() != 1) continue;
        const auto& idx = all[0];
        if (is_var(idx[0], vk) && is_var(idx[1], vj)) return {x->name, 1};
        if (is_var(idx[0], vj) && is_var(idx[1], vk)) return {x->name, 0};
    }
    return {"", -1};
}

}  // namespace

// Computes the elementwise consumers of `block` at `loop` (after the
// reduction of the tile is complete), innermost loop vectorized. A consumer
// that cannot move keeps its own loops (the generic rules schedule it).
void place_epilogues(Schedule& s, const std::string& block, const std::string& loop, int lanes,
                     std::vector<std::string>* placed) {
    for (const std::string& c : s.get_consumers(block)) {
        const tir::Block* cb = find_block(s.func(), c);
        if (!cb || cb->iter_vars.empty()) continue;
        bool reduces = false;
        for (const tir::IterVar& iv : cb->iter_vars) reduces |= iv.kind != tir::IterKind::Spatial;
        if (reduces) continue;
        Schedule before = s;
        try {
            s.reverse_compute_at(c, loop);
            Names cl = s.get_loops(c);
            const std::string inner = cl.back();
            const int64_t e = loop_extent(s.func(), inner);
            if (inner != loop && e > 1) {
                Names parts = s.split(inner, {-1, std::min<int64_t>(e, 2 * lanes)});
                s.vectorize(parts[1]);
            }
            if (placed) placed->push_back(c);
        } catch (const schedule::ScheduleError&) {
            s = before;
        }
    }
}

void schedule_matmul_block(Schedule& s, const std::string& block, const CpuScheduleOptions& o,
                           std::vector<PackSpec>* packs, std::vector<std::string>* epilogues) {
    Names loops = s.get_loops(block);
    const tir::Block* b = find_block(s.func(), block);
    if (loops.size() < 3 || !b) return;
    const size_t n = loops.size();
    const std::string i = loops[n - 3], j = loops[n - 2], k = loops[n - 1];
    const int64_t ei = loop_extent(s.func(), i), ej = loop_extent(s.func(), j),
                  ek = loop_extent(s.func(), k);
    int64_t w = 1;
    for (const std::string& l : loops) w *= std::max<int64_t>(loop_extent(s.func(), l), 1);
    const bool par = o.threads != 1 && w >= kMinParallelWork;
    const int lanes = std::max(o.vector_lanes, 4);
    // Register tile: MR rows x NR = 2 vectors; accumulators 2 MR of 32 (AVX-512) / 16 registers.
    const int64_t mr_full = lanes >= 16 ? 8 : 6;
    const int64_t mr = std::min<int64_t>(ei, mr_full);
    const int64_t nr = std::min<int64_t>(ej, 2 * lanes);

    auto [bname, bdim] = find_b_operand(s.func(), b);
    const bool pack = n == 3 && !bname.empty() && ei >= 4 * mr_full && ej >= 2 * lanes &&
                      ek * ej * 4 >= kPackMinBytes;
    if (pack) {
        const int64_t kcmax = kPanelBytes / (nr * 4);
        const int64_t kc = pick_factor(ek, kcmax / 2, kcmax);
        const int64_t mc_tiles = std::clamp<int64_t>(kMcRows / mr, 1, (ei + mr - 1) / mr);
        Names is = s.split(i, {-1, mc_tiles, mr});
        Names js = s.split(j, {-1, nr});
        Names ks = s.split(k, {-1, kc});
        s.reorder({is[0], ks[0], js[0], is[1], ks[1], is[2], js[1]});
        std::string init = s.decompose_reduction(block, ks[0]);
        Names init_loops = s.get_loops(init);
        if (init_loops.size() >= 2) s.vectorize(init_loops.back());
        if (par) {
            if (loop_extent(s.func(), is[0]) >= 2)
                s.parallel(is[0]);
            else
                s.parallel(js[0]);
        }
        if (mr > 1) s.unroll(is[2]);
        s.vectorize(js[1]);
        place_epilogues(s, block, is[0], lanes, epilogues);
        // The packing nest (1-3 % of the work) runs in parallel only when it
        // is large: a second fork/join costs more than a small copy, the
        // more so when the other core is busy.
        const bool par_pack = par && ek * ej >= kParallelPackElements;
        if (packs) packs->push_back(PackSpec{block, bname, bdim, nr, par_pack, lanes});
        return;
    }

    Names is = s.split(i, {-1, mr});
    Names js = s.split(j, {-1, nr});
    Names order(loops.begin(), loops.end() - 3);
    // jo outside io: consecutive tiles reuse one K x NR panel of B from cache.
    order.insert(order.end(), {js[0], is[0], k, is[1], js[1]});
    s.reorder(order);
    Names outer(loops.begin(), loops.end() - 3);
    outer.insert(outer.end(), {js[0], is[0]});
    // Never fused: separate loops keep the tile indices linear for LLVM, and
    // let region inference give an epilogue placed at io exactly one tile (a
    // fused loop made it recompute whole rows per tile). Parallel: the
    // outermost loop with more than one iteration.
    std::string fused = is[0];
    if (par)
        for (const std::string& l : outer)
            if (loop_extent(s.func(), l) >= 2) {
                s.parallel(l);
                break;
            }
    std::string init = s.decompose_reduction(block, k);
    Names init_loops = s.get_loops(init);
    if (init_loops.size() >= 2) s.vectorize(init_loops.back());
    if (mr > 1) s.unroll(is[1]);
    s.vectorize(js[1]);
    place_epilogues(s, block, fused, lanes, epilogues);
}

tir::PrimFunc apply_packs(const tir::PrimFunc& f, const std::vector<PackSpec>& packs) {
    tir::PrimFunc out = f;
    for (const PackSpec& p : packs)
        if (auto r = pack_matmul_operand(out, p)) out = r->func;
    return out;
}

std::vector<CpuKnob> matmul_knobs(const tir::PrimFunc& f, const graph::Node& n,
                                  const CpuScheduleOptions& options) {
    (void)f;
    (void)n;
    (void)options;
    return {};
}

}  // namespace tessera::topi
