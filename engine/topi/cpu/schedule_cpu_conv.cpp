// The conv2d schedule rule (see schedule_cpu_conv.h): register-tiled direct
// and depthwise convolution in the blocked NCHW[x]c layout, the older NCHW
// rules, and the knobs they read.
#include "engine/topi/cpu/schedule_cpu_conv.h"

#include <algorithm>

#include "engine/schedule/query.h"
#include "engine/tir/functor.h"
#include "engine/tir/op.h"
#include "engine/tir/passes/inject_prefetch.h"
#include "engine/topi/cpu/schedule_cpu_util.h"

namespace tessera::topi {

using schedule::Schedule;
using Names = std::vector<std::string>;
using schedule::find_block;
using schedule::is_reduction;
using schedule::loop_extent;
using schedule::work;

namespace {


// Output planes smaller than this (in pixels) loop over rows inside channel blocks.
constexpr int64_t kSmallPlane = 400;


/// The reduction block of the conv (the one the tile loops belong to).
std::string conv_block_of(const Schedule& s, size_t iter_vars = 9) {
    for (const std::string& b : s.blocks()) {
        const tir::Block* blk = find_block(s.func(), b);
        if (blk && is_reduction(blk) && blk->iter_vars.size() == iter_vars) return b;
    }
    return "";
}

/// Output columns per tile of the grouped NCHW conv: the row when it fits
/// four vectors, else two vectors or one where they divide it.
int64_t grouped_columns(int64_t eow, int64_t v) {
    return eow <= 4 * v         ? eow
           : eow % (2 * v) == 0 ? 2 * v
           : eow % v == 0       ? v
                                : pick_factor(eow, v, 2 * v);
}

/// The reduction block of a flat depthwise conv (topi's conv2d_flat), "" if none.
std::string flat_conv_block(const Schedule& s) {
    for (const std::string& b : s.blocks())
        if (b.rfind("conv2d_flat", 0) == 0 && is_reduction(find_block(s.func(), b))) return b;
    return "";
}

/// Output rows per tile of the flat depthwise conv (q over the flattened
/// plane, `wp` per row): the most rows that divide the `eoh` rows and fit 4
/// vectors (a tile of whole rows: decompose_reduction proves a split of the
/// fused rows and columns only at a row's end). At least one row.
int64_t flat_rows(int64_t eoh, int64_t wp, int64_t v) {
    int64_t k = 1;
    for (int64_t r = 1; r <= eoh; ++r)
        if (eoh % r == 0 && r * wp <= 4 * v) k = r;
    return k;
}

/// Output rows per padded block of the grouped NCHW conv: up to 8 (a 3x3
/// window at stride 1 pads 10 input rows for 8 output rows).
int64_t grouped_row_block(int64_t eoh) { return pick_factor(eoh, 4, 8); }

/// A grouped NCHW conv with one output channel per group (depthwise) whose
/// padded input the conv's rule makes per block of output rows (knob
/// conv2d.pad_per_row).
bool pads_per_rows(const Schedule& s, const graph::Node& n, const CpuScheduleOptions& o) {
    const tir::Block* conv = find_block(s.func(), conv_block_of(s, 7));
    const int64_t groups = n.attr_int("groups", 1);
    return groups != 1 && conv && !conv->writes.empty() &&
           conv->writes[0].buffer->shape.size() == 4 &&
           tir::is_const_int(conv->writes[0].buffer->shape[1], groups) &&
           find_block(s.func(), "pad_temp") && o.knob("conv2d.pad_per_row", 1) != 0;
}

/// Loop order of the dense NCHW[x]c rule: 0 = output rows outermost, 1 =
/// output-channel blocks outermost (small planes: a block's weights stay in
/// cache over all rows), 2 = also the input-channel blocks outside the rows
/// (small planes with a window: ResNet-18's 3x3 7x7 layers ~12 % faster; a
/// 1x1 conv does too little per input block to reload its partial sums).
int64_t default_channels_outer(int64_t eoh, int64_t eow, int64_t window) {
    if (eoh * eow >= kSmallPlane) return 0;
    return window > 1 ? 2 : 1;
}

/// Whether the dense NCHW[x]c rule keeps its accumulators in a local buffer
/// compacted to one register tile (see ConvRule::to_local): with rows or
/// output-channel blocks outermost (loop orders 0, 1) the tile's partial sums
/// then never go to memory (MobileNetV2's 1x1 expand conv at 112x112: 0.42 ->
/// 0.31 ms); with input-channel blocks outside the rows (order 2) the plane of
/// partial sums is reloaded per block anyway, and the compacted buffer made
/// ResNet-18's 7x7 layers ~17 % slower.
int64_t default_local_accumulators(int64_t channels_outer) { return channels_outer != 2; }

/// Output-channel block vectors per register tile of the dense NCHW[x]c rule:
/// two where the blocks pair up, so one broadcast input value feeds two FMAs
/// (one block's tile is bound by its broadcasts: a load per FMA). With 16
/// registers (AVX2) that is up to 6 columns x 2 vectors (12 accumulators);
/// on a Zen 3 the tuner's confirmed finalists all took it over 1 vector x 7-8
/// columns: ResNet-18's 7x7/2 stem 6.8 -> 3.3-3.6 ms, its 3x3/2 convs 2.5 ->
/// 1.8 ms, the 7x7-plane convs 4.8 -> 4.5 and 3.8 -> 3.2 ms; ddddocr det's
/// 13-wide convs 6.1 -> 3.9 and 2.9 -> 1.8 ms.
int64_t default_oc_vectors(int64_t eoc) {
    return eoc % 2 == 0 ? 2 : 1;
}

/// Output columns per depthwise register tile: a divisor of ow in [4, 8]
/// where one exists (8 accumulators, 9 weight vectors and the input vectors
/// of a row fit 32 zmm / spill little with 16 ymm).
int64_t depthwise_columns(int64_t eow) { return pick_factor(eow, 4, 8); }

/// Depthwise loop order: channel blocks outermost (one block's weights and
/// input planes stay in cache) unless there are too few blocks for the
/// threads, then output rows outermost.
int64_t depthwise_rows_outer(int64_t eco, int64_t eoh, const CpuScheduleOptions& o) {
    const int64_t threads = o.threads == 1 ? 1 : 2;
    return eco < 2 * threads && eoh >= 2 * threads ? 1 : 0;
}

/// Output rows per depthwise row block (the padded input of a block is made
/// in cache right before it): 2 measured best of 1/2/4/8/14 on MobileNetV2's
/// shapes (within 5 %); a tail block costs more than it saves.
int64_t depthwise_row_block(int64_t eoh) { return eoh % 2 == 0 ? 2 : 1; }

/// `dflt` first, then the other values of `more` that lie in [1, hi], once each.
std::vector<int64_t> choices(int64_t dflt, const std::vector<int64_t>& more, int64_t hi) {
    std::vector<int64_t> c = {dflt};
    for (int64_t v : more)
        if (v >= 1 && v <= hi && std::find(c.begin(), c.end(), v) == c.end()) c.push_back(v);
    return c;
}

/// The loop orders 0, 1, 2 with `dflt` first.
std::vector<int64_t> order_choices(int64_t dflt) {
    std::vector<int64_t> c = {dflt};
    for (int64_t v : {0, 1, 2})
        if (v != dflt) c.push_back(v);
    return c;
}

/// Divisors of n up to hi, plus `extra` (tails are legal: the split guards them).
std::vector<int64_t> column_choices(int64_t n, int64_t hi, std::vector<int64_t> extra) {
    for (int64_t d = 1; d <= std::min(n, hi); ++d)
        if (n % d == 0) extra.push_back(d);
    std::sort(extra.begin(), extra.end());
    return extra;
}

/// Output rows per block of the dense NCHW[x]c rule when it pads the input
/// per block of rows, in cache (rows outermost only), or 0 for one padded
/// copy of the whole input before the conv. 0 by default: blocks of 4 rows
/// measured no faster on ResNet-18's 56x56 convs (2.59 vs 2.56 ms for four
/// convs, 2 threads); a knob for the tuner.
int64_t default_pad_rows(int64_t) { return 0; }

/// Whether the dense NCHW[x]c rule prefetches the next input-channel block's
/// weights (loop order 2 only).
int64_t default_weight_prefetch(int64_t eoh, int64_t eow) { return eoh * eow < kSmallPlane; }

struct ConvRule {
    Schedule& s;
    const CpuScheduleOptions& o;
    /// Output rows per padded block of the dense NCHW[x]c conv (rows
    /// outermost, with a padding stage), 0 when the input is padded whole.
    int64_t dense_pad_rows(const std::string& conv) const {
        if (!find_block(s.func(), "data_pad") || conv.empty()) return 0;
        Names l = s.get_loops(conv);
        if (l.size() != 9) return 0;
        const int64_t eoh = loop_extent(s.func(), l[2]), eow = loop_extent(s.func(), l[3]);
        const int64_t window = loop_extent(s.func(), l[6]) * loop_extent(s.func(), l[7]);
        if (o.knob("conv2d.channels_outer", default_channels_outer(eoh, eow, window)) != 0)
            return 0;
        return std::clamp<int64_t>(o.knob("conv2d.pad_rows", default_pad_rows(eoh)), 0, eoh);
    }
    /// The name of the weight buffer the conv block reads (its second read).
    std::string weight_buffer(const std::string& block) const {
        const tir::Block* b = find_block(s.func(), block);
        return b && b->reads.size() >= 2 ? b->reads[1].buffer->name : "";
    }
    bool parallel_ok(int64_t w) const { return o.threads != 1 && w >= kMinParallelWork; }
    /// Moves what `block` writes into a "local" buffer, the copy back to the
    /// original buffer inlined into its readers; compact_local_buffers then
    /// shrinks it to the region one iteration of the loop it is placed at
    /// touches (a register tile's accumulators, a block of padded rows):
    /// no full-size intermediate to write back to memory. Left as it was when
    /// the block's output is the function's (nothing to inline into).
    void to_local(const std::string& block) {
        if (!find_block(s.func(), block)) return;
        Schedule before = s;
        try {
            s.compute_inline(s.cache_write(block, 0, "local"));
        } catch (const schedule::ScheduleError&) {
            s = before;
        }
    }

    /// A depthwise rule's accumulators and, with its padding `pad` placed per
    /// block of output rows (pad_here), those padded rows in compacted local
    /// buffers (before the pad is placed: cache_write needs a root-level
    /// block); then the output rows `oh` in blocks of conv2d.row_block
    /// (default `rows`): the padded input rows a block reads are made right
    /// before it (in cache) instead of a padded copy of the whole input; rows
    /// that two blocks share are padded twice. Returns oh's loops (one
    /// without blocks).
    Names local_row_blocks(const std::string& block, const std::string& pad, bool pad_here,
                           const std::string& oh, int64_t rows) {
        const bool local = o.knob("conv2d.local_buffers", 1) != 0;
        if (local && pad_here) to_local(pad);
        if (local) to_local(block);
        const int64_t eoh = loop_extent(s.func(), oh);
        if (pad_here) rows = std::clamp<int64_t>(o.knob("conv2d.row_block", rows), 1, eoh);
        return pad_here && rows > 1 ? s.split(oh, {-1, rows}) : Names{oh};
    }

    /// The reduction's init before loop `at` (its innermost loop
    /// vectorized), and the window loops ry, rx unrolled where `small` and
    /// conv2d.unroll_window (default 1) allow: a register tile's FMAs in
    /// straight-line code.
    void init_and_window(const std::string& block, const std::string& at, const std::string& ry,
                         const std::string& rx, bool small) {
        std::string init = s.decompose_reduction(block, at);
        Names il = s.get_loops(init);
        if (il.size() >= 2) s.vectorize(il.back());
        if (small && o.knob("conv2d.unroll_window", 1)) {
            s.unroll(ry);
            s.unroll(rx);
        }
    }

    // (n, oco, oh, ow, oci, rco, ry, rx, rci) -> fused(n, oh, oco_o) ow_o |
    // rco ry rx rci | ow_i(unrolled) oco_i(unrolled) oci(vector). With two
    // output-channel blocks per tile, one broadcast input value feeds two
    // FMAs: 16 loads per 28 FMAs instead of 29 (loads, not FMAs, bound a
    // one-block tile).
    void nchwc(const std::string& block) {
        const int64_t pad_rows = dense_pad_rows(block);
        Names l = s.get_loops(block);
        const int64_t eoc = loop_extent(s.func(), l[1]);
        const int64_t eow = loop_extent(s.func(), l[3]);
        const int64_t w = work(s, l);
        const int64_t oc_tiles =
            std::clamp<int64_t>(o.knob("conv2d.oc_vectors", default_oc_vectors(eoc)), 1, eoc);
        // A block of 17-31 channels is two vectors (convert_layout's output_block).
        const int64_t block_vectors =
            (loop_extent(s.func(), l[4]) + o.vector_lanes - 1) / o.vector_lanes;
        const int64_t reg_n = std::clamp<int64_t>(
            o.knob("conv2d.reg_cols",
                   conv_register_columns(eow, o.vector_lanes, oc_tiles * block_vectors)),
            1, eow);
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
        const int64_t window = loop_extent(s.func(), l[6]) * loop_extent(s.func(), l[7]);
        const int64_t outer =
            o.knob("conv2d.channels_outer", default_channels_outer(eoh, eow, window));
        if (o.knob("conv2d.local_buffers", default_local_accumulators(outer)) != 0) to_local(block);
        if (outer == 2) {
            // Input-channel blocks outside the rows: one block's weights (KH x
            // KW x ib x ob x oc_tiles) stay in L1 across the whole small plane,
            // whose partial sums stay in L1 too.
            s.reorder({ocs[0], l[0], l[5], l[2], ows[0], l[6], l[7], l[8], ows[1], ocs[1], l[4]});
            if (parallel_ok(w)) s.parallel(ocs[0]);
        } else if (outer == 1) {
            s.reorder({ocs[0], l[0], l[2], ows[0], l[5], l[6], l[7], l[8], ows[1], ocs[1], l[4]});
            if (parallel_ok(w)) s.parallel(ocs[0]);
        } else if (const int64_t rows = pad_rows; rows > 0) {
            // Blocks of output rows, the padded input rows a block reads made
            // right before it (in cache) instead of a padded copy of the whole
            // input (one more pass over memory); shared rows are padded twice.
            Names ohs = s.split(l[2], {-1, rows});
            s.reorder({ohs[0], l[0], ohs[1], ocs[0], ows[0], l[5], l[6], l[7], l[8], ows[1],
                       ocs[1], l[4]});
            if (parallel_ok(w)) s.parallel(ohs[0]);
            s.compute_at("data_pad", l[0]);
            Names pl = s.get_loops("data_pad");
            if (!pl.empty() && loop_extent(s.func(), pl.back()) >= 4) s.vectorize(pl.back());
        } else {
            s.reorder({l[2], l[0], ocs[0], ows[0], l[5], l[6], l[7], l[8], ows[1], ocs[1], l[4]});
            if (parallel_ok(w)) s.parallel(l[2]);
        }
        // Small planes stream big weights once: while one input-channel block's
        // weights are used from cache, the next block's are prefetched (the
        // hardware prefetchers stall while the rows reuse a block from L1).
        if (outer == 2 && o.knob("conv2d.prefetch", default_weight_prefetch(eoh, eow)))
            s.annotate(l[5], tir::kPrefetchAnnotation, weight_buffer(block) + ":1");
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

    // Depthwise NCHW[b]c: (n, c, oh, ow, i, ry, rx) ->
    // c n oh ow_o | ry rx ow_i i (or oh n c ow_o ...): a register tile of
    // reg_n output columns, each a vector of the channel block; every tap is
    // one weight vector times reg_n contiguous input vectors (stride 2 reads
    // every other vector: no gathers). The window loops are unrolled so the
    // whole tile is straight-line FMAs whose input loads LLVM shares between
    // neighbouring columns.
    void depthwise(const std::string& block) {
        Names l = s.get_loops(block);
        const int64_t eco = loop_extent(s.func(), l[1]);
        const int64_t eoh = loop_extent(s.func(), l[2]);
        const int64_t eow = loop_extent(s.func(), l[3]);
        const int64_t w = work(s, l);
        const int64_t reg_n =
            std::clamp<int64_t>(o.knob("conv2d.reg_cols", depthwise_columns(eow)), 1, eow);
        Names ows = s.split(l[3], {-1, reg_n});
        const bool rows_outer = o.knob("conv2d.rows_outer", depthwise_rows_outer(eco, eoh, o)) != 0;
        const tir::Block* pad = find_block(s.func(), "data_pad");
        const bool pad_here = pad && o.knob("conv2d.pad_per_row", 1);
        Names ohs = local_row_blocks(block, "data_pad", pad_here, l[2], depthwise_row_block(eoh));
        const std::string& oh_in = ohs.back();
        if (rows_outer) {
            Names order = {ohs[0], l[0], l[1]};
            if (ohs.size() > 1) order.push_back(oh_in);
            for (const std::string& x : {ows[0], l[5], l[6], ows[1], l[4]}) order.push_back(x);
            s.reorder(order);
            if (parallel_ok(w)) s.parallel(ohs[0]);
            if (pad_here) s.compute_at("data_pad", l[1]);
        } else {
            Names order = {l[1], l[0]};
            for (const std::string& x : ohs) order.push_back(x);
            for (const std::string& x : {ows[0], l[5], l[6], ows[1], l[4]}) order.push_back(x);
            s.reorder(order);
            if (parallel_ok(w)) s.parallel(l[1]);
            if (pad_here) s.compute_at("data_pad", ohs[0]);
        }
        if (pad_here) {
            Names pl = s.get_loops("data_pad");
            if (!pl.empty() && loop_extent(s.func(), pl.back()) >= 4) s.vectorize(pl.back());
        }
        init_and_window(block, l[5], l[5], l[6], true);
        s.unroll(ows[1]);
        s.vectorize(l[4]);
    }

    // Blocked pools (max over a window, or the sum of a global average):
    // (n, c, oh, ow, i, ry, rx) -> fused(n, c, oh) ow | ry rx | i(vector),
    // the window unrolled when small.
    void blocked_pool(const std::string& block) {
        Names l = s.get_loops(block);
        const int64_t w = work(s, l);
        s.reorder({l[0], l[1], l[2], l[3], l[5], l[6], l[4]});
        std::string par = s.fuse({l[0], l[1], l[2]});
        if (parallel_ok(w)) s.parallel(par);
        std::string init = s.decompose_reduction(block, l[5]);
        Names il = s.get_loops(init);
        if (il.size() >= 2) s.vectorize(il.back());
        if (loop_extent(s.func(), l[5]) * loop_extent(s.func(), l[6]) <= 16) {
            s.unroll(l[5]);
            s.unroll(l[6]);
        }
        s.vectorize(l[4]);
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
    // The epilogue goes to the loop just outside the conv's outermost
    // reduction loop (te names reduction loops r*, spatial ones i*): one
    // register tile ((oh n oco_o | oco_o n oh) ow_o), or with the input
    // channel blocks outside the rows, the whole plane of a channel block.
    bool epilogue(const std::string& block, size_t conv_loops = 9) {
        std::string conv = conv_block_of(s, conv_loops);
        if (conv.empty()) return false;
        Names cl = s.get_loops(conv);
        size_t k = 0;
        while (k < cl.size() && cl[k].rfind('r', 0) != 0) ++k;
        if (k == 0 || k == cl.size()) return false;
        s.reverse_compute_at(block, cl[k - 1]);
        Names l = s.get_loops(block);
        if (l.size() < 4) return true;
        s.vectorize(l.back());
        return true;
    }

    // Grouped (depthwise) NCHW conv: (n, oc, oh, ow, rc, ry, rx) ->
    // oc n oh_o oh_i ow_o | rc ry rx ow_i(vector): each tile's accumulators
    // stay in vector registers (a local buffer) across the unrolled window.
    // With one output channel per group (depthwise) the padded input rows of
    // a block of output rows are made right before it, in L1, instead of a
    // padded copy of the whole input (one more pass over memory); rows that
    // two blocks share are padded twice.
    void grouped(const std::string& block, const graph::Node& n) {
        Names l = s.get_loops(block);
        const int64_t eoh = loop_extent(s.func(), l[2]);
        const int64_t eow = loop_extent(s.func(), l[3]);
        const int64_t w = work(s, l);
        const int64_t owb = std::clamp<int64_t>(
            o.knob("conv2d.ow_block", grouped_columns(eow, o.vector_lanes)), 1, eow);
        Names ows = s.split(l[3], {-1, owb});
        const bool pad_here = pads_per_rows(s, n, o);
        Names ohs = local_row_blocks(block, "pad_temp", pad_here, l[2], grouped_row_block(eoh));
        // Unfused (n oc oh ow_o): the epilogue placed at ow_o covers one tile.
        Names order = {l[1], l[0]};
        for (const std::string& x : ohs) order.push_back(x);
        for (const std::string& x : {ows[0], l[4], l[5], l[6], ows[1]}) order.push_back(x);
        s.reorder(order);
        if (parallel_ok(w)) s.parallel(l[1]);
        if (pad_here) {
            s.compute_at("pad_temp", ohs[0]);
            Names pl = s.get_loops("pad_temp");
            if (!pl.empty()) vectorize_in_pieces(pl.back(), 4, o.vector_lanes);
        }
        init_and_window(block, l[4], l[5], l[6],
                        loop_extent(s.func(), l[5]) * loop_extent(s.func(), l[6]) <= 49);
        s.vectorize(ows[1]);
    }

    // Depthwise conv of bytes over the flattened padded plane (n, c, oh, ow,
    // ry, rx) -> c n q_o | ry rx q_i(vector), q = fused (oh, ow) over the
    // padded width: a tile of whole rows of q (up to 4 vectors) in
    // registers across the unrolled window, parallel over channels; the
    // channel's padded plane is made right before it (a few hundred floats),
    // its rows as vectors.
    void flat_depthwise(const std::string& block) {
        Names l = s.get_loops(block);
        const int64_t row = loop_extent(s.func(), l[3]);  // the padded width
        const int64_t eoh = loop_extent(s.func(), l[2]);
        const int64_t w = work(s, l);
        const int64_t tile =
            row * std::clamp<int64_t>(
                      o.knob("conv2d.row_block", flat_rows(eoh, row, o.vector_lanes)), 1, eoh);
        if (o.knob("conv2d.local_buffers", 1) != 0) {
            to_local("pad_temp");
            to_local(block);
        }
        s.reorder({l[1], l[0], l[2], l[3], l[4], l[5]});
        if (parallel_ok(w)) s.parallel(l[1]);
        Names qs = s.split(s.fuse({l[2], l[3]}), {-1, tile});
        s.reorder({qs[0], l[4], l[5], qs[1]});
        if (find_block(s.func(), "pad_temp")) {
            s.compute_at("pad_temp", l[0]);
            Names pl = s.get_loops("pad_temp");
            if (!pl.empty() && row > 1) vectorize_in_pieces(pl.back(), row + 1, row);
        }
        init_and_window(block, l[4], l[4], l[5], true);
        s.vectorize(qs[1]);
    }

    // A stage after the flat depthwise conv (its output with the bias, the
    // fused activations): per channel, after the channel's whole plane.
    bool flat_epilogue(const std::string& block) {
        std::string conv = flat_conv_block(s);
        if (conv.empty()) return false;
        Names cl = s.get_loops(conv);
        if (cl.size() < 2) return false;
        s.reverse_compute_at(block, cl[1]);
        // Its column loop covers the conv's padded width, guarded to the
        // output's: split at the output's width, the first part unguarded
        // (vectorized), the rest never runs its body.
        Names l = s.get_loops(block);
        const tir::Block* b = find_block(s.func(), block);
        const int64_t* ow = b && !b->iter_vars.empty()
                                ? tir::as_const_int(b->iter_vars.back().dom.extent)
                                : nullptr;
        if (l.size() < 4 || !ow) return true;
        if (loop_extent(s.func(), l.back()) > *ow) {
            Names cols = s.split(l.back(), {-1, *ow});
            s.vectorize(cols[1]);
        } else {
            s.vectorize(l.back());
        }
        return true;
    }

    // NCHW padding: planes' rows in parallel, the row as a vector.
    void pad_nchw(const std::string& block) {
        Names l = s.get_loops(block);
        if (l.size() != 4 && l.size() != 5) return;
        const int64_t w = work(s, l);
        std::string par = s.fuse(Names(l.begin(), l.end() - 1));
        if (parallel_ok(w)) s.parallel(par);
        vectorize_in_pieces(l.back(), 4, o.vector_lanes);
    }

    /// A padding stage's row loop `row` as vectors of up to `width` lanes
    /// (a split, its inner loop vectorized) when it has at least `min`
    /// iterations.
    void vectorize_in_pieces(const std::string& row, int64_t min, int64_t width) {
        const int64_t e = loop_extent(s.func(), row);
        if (e < min) return;
        Names ws = s.split(row, {-1, std::min<int64_t>(e, width)});
        s.vectorize(ws[1]);
    }

    // Direct NCHW conv: (n, oc, oh, ow, rc, ry, rx) ->
    // fused(n, oc_o, oh) ow_o rc ry rx oc_i(unrolled) ow_i(vector).
    void nchw(const std::string& block) {
        Names loops = s.get_loops(block);
        const int64_t eoc = loop_extent(s.func(), loops[1]);
        const int64_t eow = loop_extent(s.func(), loops[3]);
        const int64_t w = work(s, loops);
        const int64_t ocb = std::clamp<int64_t>(
            o.knob("conv2d.oc_block", std::min<int64_t>(eoc, o.vector_lanes >= 16 ? 8 : 4)), 1,
            eoc);
        const int64_t owb = std::clamp<int64_t>(
            o.knob("conv2d.ow_block", pick_factor(eow, o.vector_lanes, 2 * o.vector_lanes)), 1,
            eow);
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
    const int64_t v = std::max<int64_t>(oc_vectors, 1);
    const int64_t hi = (lanes >= 16 ? 28 : 12) / v;
    if (lanes >= 16 || v == 1) return pick_factor(ow, 4, hi);
    if (ow <= hi) return ow;
    // AVX2, several vectors: the column count c in [4, hi] whose tiles do the
    // most useful FMAs per load (v c FMAs per c broadcasts and v weight
    // loads), a tail tile counted as a whole one: 6 for widths 112, 56 and
    // 28 (a tail of 4 or 2), 4 for 7, 5 for 14.
    int64_t best = hi;
    double best_score = 0;
    for (int64_t c = 4; c <= hi; ++c) {
        const double useful = double(ow) / double((ow + c - 1) / c * c);
        const double score = useful * double(v * c) / double(c + v);
        if (score > best_score + 1e-9) best = c, best_score = score;
    }
    return best;
}

bool schedule_conv2d_block(Schedule& s, const std::string& block, const graph::Node& n,
                           const CpuScheduleOptions& options) {
    const tir::Block* b = find_block(s.func(), block);
    if (!b) return false;
    ConvRule r{s, options};
    const size_t loops = s.get_loops(block).size();
    if (n.op == "nn.max_pool2d_NCHWc" || n.op == "nn.global_avg_pool2d_NCHWc") {
        if (!is_reduction(b) || loops != 7) return false;
        r.blocked_pool(block);
        return true;
    }
    if (n.op == "nn.conv2d_NCHWc") {
        const bool dw = n.attr_int("groups", 1) != 1;
        if (is_reduction(b)) {
            if (loops != (dw ? 7u : 9u)) return false;
            if (dw)
                r.depthwise(block);
            else
                r.nchwc(block);
            return true;
        }
        if (block.rfind("data_pad", 0) == 0) {
            // Placed per block of output rows by the conv's rule (depthwise;
            // dense with rows outermost), else padded whole.
            const bool per_rows = dw ? options.knob("conv2d.pad_per_row", 1) != 0
                                     : r.dense_pad_rows(conv_block_of(s, 9)) > 0;
            if (!per_rows) r.pad(block);
            return true;
        }
        // A stage after the conv (reads its output): computed per tile.
        Names producers = s.get_producers(block);
        if (loops == 5 && !producers.empty()) {
            Schedule before = s;
            try {
                if (r.epilogue(block, dw ? 7 : 9)) return true;
            } catch (const schedule::ScheduleError&) {
                s = before;
            }
        }
        return false;
    }
    if (n.op == "nn.conv2d" && block.rfind("conv2d_flat", 0) == 0 && is_reduction(b) &&
        loops == 6) {
        r.flat_depthwise(block);
        return true;
    }
    if (n.op == "nn.conv2d" && block.rfind("pad_temp", 0) == 0 && loops == 3)
        return true;  // placed per channel by flat_depthwise
    if (n.op == "nn.conv2d" && loops == 4 && !flat_conv_block(s).empty() &&
        !s.get_producers(block).empty()) {
        Schedule before = s;
        try {
            if (r.flat_epilogue(block)) return true;
        } catch (const schedule::ScheduleError&) {
            s = before;
        }
        return false;
    }
    if (n.op == "nn.conv2d" && is_reduction(b) && loops == 7) {
        if (n.attr_int("groups", 1) != 1)
            r.grouped(block, n);
        else
            r.nchw(block);
        return true;
    }
    if (n.op == "nn.conv2d" && block.rfind("pad_temp", 0) == 0 && (loops == 4 || loops == 5)) {
        // Placed per block of rows by a depthwise conv's rule, else padded
        // whole (5 loops: split by column phase, phase_split_depthwise_conv2d).
        if (!pads_per_rows(s, n, options)) r.pad_nchw(block);
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
    const CpuScheduleOptions& o = options;
    Schedule s(f);
    if (n.op == "nn.conv2d_NCHWc" && n.attr_int("groups", 1) != 1) {
        std::string b = conv_block_of(s, 7);
        if (b.empty()) return {};
        Names l = s.get_loops(b);
        const int64_t eco = loop_extent(s.func(), l[1]), eoh = loop_extent(s.func(), l[2]);
        const int64_t eow = loop_extent(s.func(), l[3]);
        const int64_t rows = depthwise_rows_outer(eco, eoh, o);
        std::vector<CpuKnob> k = {
            {"conv2d.reg_cols",
             choices(depthwise_columns(eow), column_choices(eow, 16, {4, 6, 8, 12, 16}), eow)},
            {"conv2d.rows_outer", {rows, 1 - rows}},
            {"conv2d.unroll_window", {1, 0}},
            {"conv2d.local_buffers", {1, 0}}};
        if (find_block(s.func(), "data_pad")) {
            k.push_back({"conv2d.pad_per_row", {1, 0}});
            k.push_back(
                {"conv2d.row_block", choices(depthwise_row_block(eoh), {1, 2, 4, 7, 8}, eoh)});
        }
        return k;
    }
    if (n.op == "nn.conv2d_NCHWc") {
        std::string b = conv_block_of(s, 9);
        if (b.empty()) return {};
        Names l = s.get_loops(b);
        const int64_t eoc = loop_extent(s.func(), l[1]), eoh = loop_extent(s.func(), l[2]);
        const int64_t eow = loop_extent(s.func(), l[3]);
        const int64_t ocv = default_oc_vectors(eoc);
        std::vector<int64_t> ocs = {1};
        for (int64_t v : {2, 4})
            if (eoc % v == 0) ocs.push_back(v);
        const int64_t outer = default_channels_outer(
            eoh, eow, loop_extent(s.func(), l[6]) * loop_extent(s.func(), l[7]));
        return {{"conv2d.reg_cols",
                 choices(conv_register_columns(
                             eow, o.vector_lanes,
                             ocv * ((loop_extent(s.func(), l[4]) + o.vector_lanes - 1) /
                                    o.vector_lanes)),
                         column_choices(eow, 28, {4, 6, 8, 12, 14, 16, 28}), eow)},
                {"conv2d.oc_vectors", choices(ocv, ocs, eoc)},
                {"conv2d.channels_outer", order_choices(outer)},
                {"conv2d.prefetch",
                 {default_weight_prefetch(eoh, eow), 1 - default_weight_prefetch(eoh, eow)}},
                {"conv2d.pad_rows", choices(default_pad_rows(eoh), {0, 2, 4, 7, 8}, eoh)},
                {"conv2d.local_buffers",
                 {default_local_accumulators(outer), 1 - default_local_accumulators(outer)}}};
    }
    if (const std::string flat = flat_conv_block(s); n.op == "nn.conv2d" && !flat.empty()) {
        Names l = s.get_loops(flat);
        const int64_t eoh = loop_extent(s.func(), l[2]), row = loop_extent(s.func(), l[3]);
        std::vector<int64_t> rows;
        for (int64_t r = 1; r <= eoh; ++r)
            if (eoh % r == 0 && r * row <= 8 * o.vector_lanes) rows.push_back(r);
        return {{"conv2d.row_block", choices(flat_rows(eoh, row, o.vector_lanes), rows, eoh)},
                {"conv2d.unroll_window", {1, 0}},
                {"conv2d.local_buffers", {1, 0}}};
    }
    if (n.op == "nn.conv2d" && n.attr_int("groups", 1) != 1) {
        std::string b = conv_block_of(s, 7);
        if (b.empty()) return {};
        const int64_t eow = loop_extent(s.func(), s.get_loops(b)[3]);
        const int64_t owb = grouped_columns(eow, o.vector_lanes);
        std::vector<CpuKnob> k = {
            {"conv2d.ow_block",
             choices(owb, {4, 8, 16, 32, o.vector_lanes, 2 * o.vector_lanes}, eow)},
            {"conv2d.unroll_window", {1, 0}},
            {"conv2d.local_buffers", {1, 0}}};
        if (pads_per_rows(s, n, o)) {
            const int64_t eoh = loop_extent(s.func(), s.get_loops(b)[2]);
            k.push_back({"conv2d.pad_per_row", {1, 0}});
            k.push_back({"conv2d.row_block",
                         choices(grouped_row_block(eoh), {1, 2, 4, 7, 8, 14, 16}, eoh)});
        }
        return k;
    }
    if (n.op == "nn.conv2d" && n.attr_int("groups", 1) == 1) {
        std::string b = conv_block_of(s, 7);
        if (b.empty()) return {};
        Names l = s.get_loops(b);
        const int64_t eoc = loop_extent(s.func(), l[1]), eow = loop_extent(s.func(), l[3]);
        return {
            {"conv2d.oc_block",
             choices(std::min<int64_t>(eoc, o.vector_lanes >= 16 ? 8 : 4), {1, 2, 4, 8, 16}, eoc)},
            {"conv2d.ow_block", choices(pick_factor(eow, o.vector_lanes, 2 * o.vector_lanes),
                                        {4, 8, 16, 32, o.vector_lanes, 2 * o.vector_lanes}, eow)}};
    }
    return {};
}

}  // namespace tessera::topi
