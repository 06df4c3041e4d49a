// The conv2d schedule rule (see schedule_cpu_conv.h): register-tiled direct
// convolution in the blocked NCHW[x]c layout, and the older NCHW rule.
#include "engine/topi/schedule_cpu_conv.h"

#include <algorithm>

#include "engine/schedule/query.h"
#include "engine/tir/functor.h"
#include "engine/tir/op.h"

namespace tessera::topi {

using schedule::Schedule;
using Names = std::vector<std::string>;
using schedule::find_block;
using schedule::is_reduction;
using schedule::loop_extent;
using schedule::work;

namespace {

// Kernels with less work than this stay on one thread (fork/join costs a few
// microseconds).
constexpr int64_t kMinParallelWork = 1 << 15;

// Output planes smaller than this (in pixels) loop over rows inside channel blocks.
constexpr int64_t kSmallPlane = 400;


/// Largest divisor of n in [lo, hi], or hi when there is none (a tail).
int64_t pick_factor(int64_t n, int64_t lo, int64_t hi) {
    if (n <= hi) return n;
    for (int64_t f = hi; f >= lo; --f)
        if (n % f == 0) return f;
    return hi;
}

/// The reduction block of the conv (the one the tile loops belong to).
std::string conv_block_of(const Schedule& s, size_t iter_vars = 9) {
    for (const std::string& b : s.blocks()) {
        const tir::Block* blk = find_block(s.func(), b);
        if (blk && is_reduction(blk) && blk->iter_vars.size() == iter_vars) return b;
    }
    return "";
}

struct ConvRule {
    Schedule& s;
    const CpuScheduleOptions& o;
    bool parallel_ok(int64_t w) const { return o.threads != 1 && w >= kMinParallelWork; }

    // (n, oco, oh, ow, oci, rco, ry, rx, rci) -> fused(n, oh, oco_o) ow_o |
    // rco ry rx rci | ow_i(unrolled) oco_i(unrolled) oci(vector). With two
    // output-channel blocks per tile, one broadcast input value feeds two
    // FMAs: 16 loads per 28 FMAs instead of 29 (loads, not FMAs, bound a
    // one-block tile).
    void nchwc(const std::string& block) {
        Names l = s.get_loops(block);
        const int64_t eoc = loop_extent(s.func(), l[1]);
        const int64_t eow = loop_extent(s.func(), l[3]);
        const int64_t w = work(s, l);
        const int64_t oc_tiles = o.vector_lanes >= 16 && eoc % 2 == 0 ? 2 : 1;
        const int64_t reg_n = conv_register_columns(eow, o.vector_lanes, oc_tiles);
        Names ocs = s.split(l[1], {-1, oc_tiles});
        Names ows = s.split(l[3], {-1, std::max<int64_t>(reg_n, 1)});
        // Output rows outside channel blocks: consecutive tiles read the same
        // input rows (measured ~10% faster than channel blocks outside).
        // Rows outermost and unfused (batch 1 in inference): the epilogue placed
        // at ow_o then covers exactly one tile; a fused (n, oh, oco_o) loop
        // defeats region inference and made every tile recompute all rows.
        // Small planes (deep layers, big weights): channel blocks outermost, so
        // one block's weights stay in cache across all rows.
        const int64_t eoh = loop_extent(s.func(), l[2]);
        if (eoh * eow < kSmallPlane) {
            s.reorder({ocs[0], l[0], l[2], ows[0], l[5], l[6], l[7], l[8], ows[1], ocs[1], l[4]});
            if (parallel_ok(w)) s.parallel(ocs[0]);
        } else {
            s.reorder({l[2], l[0], ocs[0], ows[0], l[5], l[6], l[7], l[8], ows[1], ocs[1], l[4]});
            if (parallel_ok(w)) s.parallel(l[2]);
        }
        std::string init = s.decompose_reduction(block, l[5]);
        Names il = s.get_loops(init);
        if (il.size() >= 2) s.vectorize(il.back());
        // rci stays a loop: LLVM's LICM keeps the accumulators in registers
        // only in loops with few memory accesses (licm-mssa-max-acc-promotion).
        s.unroll(ows[1]);
        s.unroll(ocs[1]);
        s.vectorize(l[4]);
        // A short rci (the first conv's 3 input channels) is unrolled by LLVM,
        // which leaves rx as the innermost loop with too many accesses for
        // accumulator promotion: fuse rx and rci into one longer loop instead.
        if (loop_extent(s.func(), l[8]) < 8) s.fuse({l[7], l[8]});
    }

    // Padding in NCHW[x]c: rows in parallel, the channel block as a vector.
    void pad(const std::string& block) {
        Names l = s.get_loops(block);
        if (l.size() != 5) return;
        const int64_t w = work(s, l);
        std::string par = s.fuse({l[0], l[1], l[2]});
        if (parallel_ok(w)) s.parallel(par);
        if (loop_extent(s.func(), l[4]) >= 4) s.vectorize(l[4]);
    }

    // Bias / fused elementwise stages: inside the conv's tile loop, vectorized
    // over the channel block. Falls back to the caller's rules if not possible.
    bool epilogue(const std::string& block, size_t conv_loops = 9) {
        std::string conv = conv_block_of(s, conv_loops);
        if (conv.empty()) return false;
        Names cl = s.get_loops(conv);
        if (cl.size() < 4) return false;
        s.reverse_compute_at(block, cl[3]);  // (oh n oco_o | oco_o n oh) ow_o: one tile
        Names l = s.get_loops(block);
        if (l.size() < 4) return true;
        s.vectorize(l.back());
        return true;
    }

    // Grouped (depthwise) NCHW conv: (n, oc, oh, ow, rc, ry, rx) ->
    // oc n oh ow_o rc ry rx ow_i(vector): each row's accumulators
    // stay in vector registers across the small window.
    void grouped(const std::string& block) {
        Names l = s.get_loops(block);
        const int64_t eow = loop_extent(s.func(), l[3]);
        const int64_t w = work(s, l);
        const int64_t v = o.vector_lanes;
        const int64_t owb = eow <= 2 * v         ? eow
                            : eow % (2 * v) == 0 ? 2 * v
                            : eow % v == 0       ? v
                                                 : pick_factor(eow, v, 2 * v);
        Names ows = s.split(l[3], {-1, owb});
        // Unfused (n oc oh ow_o): the epilogue placed at ow_o covers one tile.
        s.reorder({l[1], l[0], l[2], ows[0], l[4], l[5], l[6], ows[1]});
        if (parallel_ok(w)) s.parallel(l[1]);
        std::string init = s.decompose_reduction(block, l[4]);
        Names il = s.get_loops(init);
        if (il.size() >= 2) s.vectorize(il.back());
        s.vectorize(ows[1]);
    }

    // NCHW padding: planes' rows in parallel, the row as a vector.
    void pad_nchw(const std::string& block) {
        Names l = s.get_loops(block);
        if (l.size() != 4) return;
        const int64_t w = work(s, l);
        std::string par = s.fuse({l[0], l[1], l[2]});
        if (parallel_ok(w)) s.parallel(par);
        const int64_t ew = loop_extent(s.func(), l[3]);
        if (ew >= 4) {
            Names ws = s.split(l[3], {-1, std::min<int64_t>(ew, o.vector_lanes)});
            s.vectorize(ws[1]);
        }
    }

    // Direct NCHW conv: (n, oc, oh, ow, rc, ry, rx) ->
    // fused(n, oc_o, oh) ow_o rc ry rx oc_i(unrolled) ow_i(vector).
    void nchw(const std::string& block) {
        Names loops = s.get_loops(block);
        const int64_t eoc = loop_extent(s.func(), loops[1]);
        const int64_t eow = loop_extent(s.func(), loops[3]);
        const int64_t w = work(s, loops);
        const int64_t ocb = std::min<int64_t>(eoc, o.vector_lanes >= 16 ? 8 : 4);
        const int64_t owb = pick_factor(eow, o.vector_lanes, 2 * o.vector_lanes);
        Names ocs = s.split(loops[1], {-1, ocb});
        Names ows = s.split(loops[3], {-1, owb});
        s.reorder(
            {loops[0], ocs[0], loops[2], ows[0], loops[4], loops[5], loops[6], ocs[1], ows[1]});
        std::string par = s.fuse({loops[0], ocs[0], loops[2]});
        if (parallel_ok(w)) s.parallel(par);
        std::string init = s.decompose_reduction(block, loops[4]);
        Names init_loops = s.get_loops(init);
        if (init_loops.size() >= 2) s.vectorize(init_loops.back());
        if (ocb > 1) s.unroll(ocs[1]);
        s.vectorize(ows[1]);
    }
};

}  // namespace

int64_t conv_register_columns(int64_t ow, int lanes, int64_t oc_vectors) {
    // Accumulators + the weight vectors + a broadcast must fit the register
    // file (32 zmm with AVX-512, 16 ymm with AVX2).
    const int64_t hi = (lanes >= 16 ? 28 : 12) / std::max<int64_t>(oc_vectors, 1);
    return pick_factor(ow, 4, hi);
}

bool schedule_conv2d_block(Schedule& s, const std::string& block, const graph::Node& n,
                           const CpuScheduleOptions& options) {
    const tir::Block* b = find_block(s.func(), block);
    if (!b) return false;
    ConvRule r{s, options};
    const size_t loops = s.get_loops(block).size();
    if (n.op == "nn.conv2d_NCHWc") {
        if (is_reduction(b)) {
            if (loops != 9) return false;
            r.nchwc(block);
            return true;
        }
        if (block.rfind("data_pad", 0) == 0) {
            r.pad(block);
            return true;
        }
        // A stage after the conv (reads its output): computed per tile.
        Names producers = s.get_producers(block);
        if (loops == 5 && !producers.empty()) {
            Schedule before = s;
            try {
                if (r.epilogue(block)) return true;
            } catch (const schedule::ScheduleError&) {
                s = before;
            }
        }
        return false;
    }
    if (n.op == "nn.conv2d" && is_reduction(b) && loops == 7) {
        if (n.attr_int("groups", 1) != 1)
            r.grouped(block);
        else
            r.nchw(block);
        return true;
    }
    if (n.op == "nn.conv2d" && block.rfind("pad_temp", 0) == 0 && loops == 4) {
        r.pad_nchw(block);
        return true;
    }
    // Bias and activations after a grouped conv: computed per row tile.
    if (n.op == "nn.conv2d" && n.attr_int("groups", 1) != 1 && loops == 4 &&
        !s.get_producers(block).empty()) {
        Schedule before = s;
        try {
            if (r.epilogue(block, 7)) return true;
        } catch (const schedule::ScheduleError&) {
            s = before;
        }
    }
    return false;
}

std::vector<CpuKnob> conv2d_knobs(const tir::PrimFunc& f, const graph::Node& n,
                                  const CpuScheduleOptions& options) {
    (void)f;
    (void)n;
    (void)options;
    return {};
}

}  // namespace tessera::topi
