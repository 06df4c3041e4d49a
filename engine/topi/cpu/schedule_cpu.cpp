// Default CPU schedules per op class (see schedule_cpu.h). Every rule works
// on block and loop names through the Schedule API, so the result is a Trace.
#include "engine/topi/cpu/schedule_cpu.h"

#include <cstdlib>
#include <iostream>

#include <algorithm>
#include <optional>

#include "engine/schedule/query.h"
#include "engine/schedule/schedule.h"
#include "engine/schedule/schedule_util.h"
#include "engine/tir/functor.h"
#include "engine/tir/op.h"
#include "engine/topi/cpu/schedule_cpu_attention.h"
#include "engine/topi/cpu/schedule_cpu_conv.h"
#include "engine/topi/cpu/schedule_cpu_matmul.h"
#include "engine/topi/cpu/schedule_cpu_rows.h"
#include "engine/topi/cpu/schedule_cpu_winograd.h"
#include "engine/topi/cpu/schedule_cpu_util.h"

namespace tessera::topi {

using schedule::Schedule;
using Names = std::vector<std::string>;
using schedule::element_step;
using schedule::find_block;
using schedule::is_reduction;
using schedule::loop_extent;
using schedule::work;

namespace {




struct Rules {
    Schedule& s;
    const CpuScheduleOptions& o;
    bool parallel_ok(int64_t w) const { return o.threads != 1 && w >= kMinParallelWork; }

    // All loops fused; a vector-wide inner loop, a parallel outer one.
    // A row as vectors of `vf` lanes: up to 4 vectors one vector loop (run as
    // power-of-two pieces), a longer one split with its partial last vector
    // partitioned off.
    void vectorize_row(const std::string& loop, int64_t vf) {
        if (loop_extent(s.func(), loop) <= 4 * vf)
            s.vectorize(loop);
        else
            s.vectorize(s.split(loop, {-1, vf})[1]);
    }

    // The outer loops fused into one row loop (parallel when the work pays),
    // the innermost loop (of at least 4) a row of vectors of `vf` lanes.
    void rows_in_vectors(const Names& loops, int64_t vf) {
        const int64_t w = work(s, loops);
        const Names outer(loops.begin(), loops.end() - 1);
        const std::string rows = outer.size() > 1 ? s.fuse(outer) : outer[0];
        if (loop_extent(s.func(), loops.back()) >= 4) vectorize_row(loops.back(), vf);
        if (parallel_ok(w)) s.parallel(rows);
    }

    // Whether the block (loops bound to its variables in order) copies a
    // transpose: its one input read a cache line or more apart along the
    // innermost loop and one element apart along the loop above it.
    bool transposes_last_two(const std::string& block, const Names& loops) {
        const tir::Block* b = find_block(s.func(), block);
        const tir::BufferStore* store = b ? b->body.as<tir::BufferStore>() : nullptr;
        if (!store || b->iter_vars.size() != loops.size()) return false;
        std::vector<const tir::BufferLoad*> reads;
        tir::post_order_visit(tir::Evaluate::make(store->value), [&](const tir::Object* n) {
            if (n->node_type == tir::NodeType::BufferLoad)
                reads.push_back(static_cast<const tir::BufferLoad*>(n));
        });
        if (reads.size() != 1) return false;
        const tir::BufferLoad* load = reads[0];
        const size_t n = b->iter_vars.size();
        const std::optional<int64_t> inner = element_step(b, load, b->iter_vars[n - 1].var);
        const std::optional<int64_t> above = element_step(b, load, b->iter_vars[n - 2].var);
        const int64_t line = 64 / std::max(load->buffer->dtype.bytes(), 1);
        return inner && above && *above == 1 && std::abs(*inner) >= line;
    }

    void injective(const std::string& block) {
        Names loops = s.get_loops(block);
        if (loops.empty()) return;
        const int64_t w = work(s, loops);
        const int64_t inner = loop_extent(s.func(), loops.back());
        // Knob "injective.vector_factor": the width of the vectorized inner loop.
        const int64_t vf = std::max<int64_t>(o.knob("injective.vector_factor", 2 * o.vector_lanes), 1);
        if (loops.size() > 2 && inner % vf == 0 && transposes_last_two(block, loops)) {
            // A transpose (K^T of attention heads: [S, H, D] -> [H, D, S]):
            // the output's row reads its input a row apart per element, the
            // loop above it one element apart. A row of vf columns across
            // all of that loop's values is a tile whose input lines stay in
            // L1 from one column to the next: (.., S / vf, D, vf). Row by
            // row, every element brought in a line that was gone again when
            // the next row needed it (sequence 2048: 3.0 ms for 4 MB).
            Names parts = s.split(loops.back(), {-1, vf});
            Names order(loops.begin(), loops.end() - 2);
            order.insert(order.end(), {parts[0], loops[loops.size() - 2], parts[1]});
            s.reorder(order);
            Names outer(loops.begin(), loops.end() - 2);
            outer.push_back(parts[0]);
            std::string fo = outer.size() > 1 ? s.fuse(outer) : outer[0];
            s.vectorize(parts[1]);
            if (parallel_ok(w)) s.parallel(fo);
            return;
        }
        if (loops.size() > 1 && inner % vf == 0) {
            // Rows fused, the long contiguous inner loop kept: its indices stay
            // linear (a fully fused index costs a div/mod per dimension).
            Names outer(loops.begin(), loops.end() - 1);
            std::string fo = outer.size() > 1 ? s.fuse(outer) : outer[0];
            Names parts = s.split(loops.back(), {-1, vf});
            s.vectorize(parts[1]);
            if (parallel_ok(w)) s.parallel(fo);
            return;
        }
        if (loops.size() > 1 && inner >= o.vector_lanes) {
            // A row of 28 or 56 (feature maps), 508: the same, the row in
            // vectors (a short row one vector loop run as power-of-two
            // pieces, 16 + 8 + 4; a long one split, its partial last vector
            // partitioned off). Fusing all loops instead put a div/mod and a
            // gather in every lane: a (128, 784) -> (1, 128, 28, 28) uint8
            // reshape ran at 1.1 GB/s, magika's unpacked conv output
            // (512 x 508) at 0.5 GB/s.
            rows_in_vectors(loops, vf);
            return;
        }
        std::string fused = loops.size() > 1 ? s.fuse(loops) : loops[0];
        const int64_t v = std::min<int64_t>(w, vf);
        if (w < 2) return;
        Names parts = s.split(fused, {-1, v});
        s.vectorize(parts[1]);
        if (parallel_ok(w)) s.parallel(parts[0]);
    }

    // The windows of an integer convolution (nn.im2col_int8x4, loops (n,)
    // word, p = OH*OW): p split into rows and columns so that the column
    // index is the loop variable (contiguous loads at stride 1, no div/mod
    // per element), the columns vectorized by a width that divides them.
    bool im2col(const std::string& block, const graph::Node& n) {
        Names l = s.get_loops(block);
        if (block.rfind("T_im2col_pad", 0) == 0 && l.size() >= 2) {
            // The padded copy, row by row at any width: one vector loop per
            // row, which loop_partition splits into the pad value at the
            // edges and a contiguous copy between them. Fused into one loop
            // with the rows (the injective rule's choice for rows shorter
            // than a vector: 7 x 7 planes padded to 9 x 9), every byte took a
            // div/mod and a select of its own, scalar.
            rows_in_vectors(l, 2 * int64_t(o.vector_lanes));
            return true;
        }
        const int64_t ow = n.attr_int("out_width", 0);
        if (l.size() < 2 || ow < 1 || loop_extent(s.func(), l.back()) % ow != 0) return false;
        Names rc = s.split(l.back(), {-1, ow});
        // A row up to 64 wide is one vector loop (power-of-two pieces), a
        // longer one vectors of a width that divides it.
        int64_t v = ow <= 64 ? ow : 0;
        for (int64_t c : {2 * int64_t(o.vector_lanes), int64_t(o.vector_lanes), int64_t(8), int64_t(4)})
            if (v == 0 && c > 1 && ow % c == 0) v = c;
        if (v > 0 && v < ow)
            s.vectorize(s.split(rc[1], {-1, v})[1]);
        else if (v == ow)
            s.vectorize(rc[1]);
        const Names outer(l.begin(), l.end() - 1);
        const std::string rows = outer.size() > 1 ? s.fuse(outer) : outer[0];
        if (parallel_ok(work(s, s.get_loops(block)))) s.parallel(rows);
        return true;
    }

    // A reduction whose output rows are long and whose reduction loops come
    // last (a transposed convolution: n, k, oh, ow, rc): the reduction moved
    // outside the output row, which becomes a vector loop accumulating in
    // place (its reads gather). PP-OCRv4 det's 2x2/2 deconvolution of 24
    // channels at 160 x 224: 32 ms scalar. Rows shorter than `min_row` stay.
    // With `contiguous_row`, only where every read's last index is the output
    // row's variable (the row is contiguous in memory, no gather).
    bool accumulate_rows(const std::string& block, int64_t min_row, bool contiguous_row = false) {
        Names l = s.get_loops(block);
        const tir::Block* b = find_block(s.func(), block);
        if (!b || l.size() != b->iter_vars.size() || l.size() < 3) return false;
        size_t spatial = 0;
        while (spatial < l.size() && b->iter_vars[spatial].kind == tir::IterKind::Spatial) ++spatial;
        for (size_t i = spatial; i < l.size(); ++i)
            if (b->iter_vars[i].kind != tir::IterKind::Reduce) return false;
        if (spatial < 2 || spatial == l.size()) return false;
        if (contiguous_row) {
            const tir::Var& j = b->iter_vars[spatial - 1].var;
            for (const tir::BufferRegion& r : b->reads)
                for (const auto& idx : schedule::detail::load_indices(b, r.buffer))
                    if (idx.empty() || idx.back().as<tir::Variable>() != j.get()) return false;
        }
        const int64_t row = loop_extent(s.func(), l[spatial - 1]);
        if (row < min_row) return false;
        Names order(l.begin(), l.begin() + long(spatial) - 1);
        order.insert(order.end(), l.begin() + long(spatial), l.end());
        order.push_back(l[spatial - 1]);
        s.reorder(order);
        const std::string init = s.decompose_reduction(block, l[spatial]);
        vectorize_row(s.get_loops(init).back(), 2 * int64_t(o.vector_lanes));
        vectorize_row(l[spatial - 1], 2 * int64_t(o.vector_lanes));
        Names outer(l.begin(), l.begin() + long(spatial) - 1);
        const std::string rows = outer.size() > 1 ? s.fuse(outer) : outer[0];
        if (parallel_ok(work(s, s.get_loops(block)))) s.parallel(rows);
        return true;
    }

    // Max pooling in NCHW (the int8 path keeps NCHW; float pools between
    // convs run in NCHW[16]c): the window loops outside the output row, which
    // is one vector loop (strided taps gather). The default reduction rule
    // ran one output at a time: YOLOX's 13x13 SPP pool over 20 x 20 took
    // 6.5 ms (0.8 GFLOP/s). Only for windows without a padding select
    // (topi's clamped windows): a select on loads keeps the row scalar.
    bool pool_rows(const std::string& block) {
        Names l = s.get_loops(block);
        const tir::Block* b = find_block(s.func(), block);
        if (l.size() != 6 || !b || b->iter_vars.size() != 6 ||
            b->iter_vars[3].kind != tir::IterKind::Spatial ||
            b->iter_vars[4].kind != tir::IterKind::Reduce ||
            b->iter_vars[5].kind != tir::IterKind::Reduce)
            return false;
        bool select = false;
        tir::post_order_visit(b->body, [&](const tir::Object* n) {
            select = select || n->node_type == tir::NodeType::Select;
        });
        return !select && accumulate_rows(block, 8);
    }

    // layout_transform between NCHW and NCHW[b]c: loops kept unfused (a
    // fused index costs a div/mod per element); the contiguous side's rows
    // are walked in order and the strided side is a vector gather.
    bool layout(const std::string& block) {
        Names l = s.get_loops(block);
        const int64_t w = work(s, l);
        if (block.rfind("T_layout_pack", 0) == 0 && l.size() == 5) {
            // (n, co, h, w, ci): ci reads b channel planes at one pixel.
            std::string par = s.fuse({l[0], l[1], l[2]});
            if (parallel_ok(w)) s.parallel(par);
            if (loop_extent(s.func(), l[4]) >= 4) s.vectorize(l[4]);
            return true;
        }
        if (block.rfind("T_layout_unpack", 0) == 0 && l.size() == 4) {
            const tir::Block* b = find_block(s.func(), block);
            int64_t cb = 0;  // the channel block: the reads' last extent
            if (b && !b->reads.empty() && !b->reads[0].buffer->shape.empty())
                if (const int64_t* e = tir::as_const_int(b->reads[0].buffer->shape.back())) cb = *e;
            const int64_t ec = loop_extent(s.func(), l[1]);
            if (cb < 1 || ec % cb != 0) cb = 1;
            // (n, co, h, ci, w): w contiguous in the output, a gather of stride b.
            Names cs = s.split(l[1], {-1, cb});
            s.reorder({l[0], cs[0], l[2], cs[1], l[3]});
            std::string par = s.fuse({l[0], cs[0], l[2]});
            if (parallel_ok(w)) s.parallel(par);
            const int64_t ew = loop_extent(s.func(), l[3]);
            if (ew >= 4) {
                Names ws = s.split(l[3], {-1, std::min<int64_t>(ew, o.vector_lanes)});
                s.vectorize(ws[1]);
            }
            return true;
        }
        return false;
    }

    // A reduction over an outer axis of rows it reads contiguously (a
    // LayerNorm written out over axis 1 of [1, 512, 256]: sum over 512 rows
    // of 256): the output row, innermost in memory, becomes the vector loop
    // accumulating in place, the reduction outside it. Each output ran as a
    // scalar sum over a column 1 KB apart (magika: 0.11 ms per sum).
    bool column_reduction(const std::string& block) {
        return accumulate_rows(block, o.vector_lanes, /*contiguous_row=*/true);
    }

    // Whole planes reduced to one value per channel (a global average pool,
    // ReduceMean over H and W: (N, C, H, W) -> (N, C, 1, 1)) where a plane
    // is too short for a vector row (7 x 7): each channel's sum was one
    // chain of dependent adds, a few cycles per element (MobileNetV2's
    // 1280 planes of 49: 0.065 ms). The channel loop split by 8, that part
    // innermost and unrolled: 8 independent sums, each element read once.
    bool interleaved_planes(const std::string& block) {
        Names l = s.get_loops(block);
        const tir::Block* b = find_block(s.func(), block);
        if (!b || l.size() != b->iter_vars.size()) return false;
        size_t spatial = 0;
        while (spatial < l.size() && b->iter_vars[spatial].kind == tir::IterKind::Spatial)
            ++spatial;
        if (spatial == 0 || spatial == l.size()) return false;
        for (size_t i = spatial; i < l.size(); ++i)
            if (b->iter_vars[i].kind != tir::IterKind::Reduce) return false;
        size_t c = spatial - 1;  // the channel: the last spatial loop longer than 1
        while (c > 0 && loop_extent(s.func(), l[c]) == 1) --c;
        constexpr int64_t kSums = 8;
        const int64_t channels = loop_extent(s.func(), l[c]);
        if (channels < 2 * kSums || channels % kSums != 0) return false;
        // The sums in a local buffer, their reader (the mean) inlined into
        // its write-back and placed under the channel loop: the local
        // buffer shrinks to the 8 sums in registers.
        std::vector<std::string> readers;
        {
            Schedule before = s;
            try {
                const std::string wb = s.cache_write(block, 0, "local");
                readers = s.get_consumers(wb);
                if (readers.size() == 1) s.reverse_compute_inline(readers[0]);
                readers = s.get_consumers(block);
            } catch (const schedule::ScheduleError&) {
                s = before;
                readers.clear();
            }
        }
        Names cs = s.split(l[c], {-1, kSums});
        Names order(l.begin(), l.begin() + long(c));
        order.push_back(cs[0]);
        order.insert(order.end(), l.begin() + long(c) + 1, l.end());
        order.push_back(cs[1]);
        s.reorder(order);
        s.decompose_reduction(block, l[spatial]);
        s.unroll(cs[1]);
        Names outer(l.begin(), l.begin() + long(c));
        outer.push_back(cs[0]);
        const std::string rows = outer.size() > 1 ? s.fuse(outer) : outer[0];
        if (readers.size() == 1) s.reverse_compute_at(readers[0], rows);
        if (parallel_ok(work(s, s.get_loops(block)))) s.parallel(rows);
        return true;
    }

    // Parallel over the outermost spatial loop (softmax rows, pooled planes);
    // a row reduction over contiguous elements accumulates in vectors.
    void reduction(const std::string& block) {
        if (vectorize_row_reduction(s, block, o, true)) return;
        if (column_reduction(block)) return;
        if (interleaved_planes(block)) return;
        Names loops = s.get_loops(block);
        const tir::Block* b = find_block(s.func(), block);
        if (loops.empty() || !b) return;
        if (!parallel_ok(work(s, loops)) || b->iter_vars.front().kind != tir::IterKind::Spatial)
            return;
        // A batch of one: the batch and the next spatial loop together (a
        // max pool over 64 channels ran on one thread).
        std::string outer = loops[0];
        if (loop_extent(s.func(), outer) == 1 && loops.size() > 1 && b->iter_vars.size() > 1 &&
            b->iter_vars[1].kind == tir::IterKind::Spatial)
            outer = s.fuse({loops[0], loops[1]});
        if (loop_extent(s.func(), outer) > 1) s.parallel(outer);
    }

};

Schedule build(const tir::PrimFunc& f, const graph::Node& n, const CpuScheduleOptions& o,
               std::vector<PackSpec>* packs) {
    Schedule s(f);
    if ((n.op == "nn.softmax" || n.op == "nn.log_softmax" || n.op == "nn.layer_norm") &&
        schedule_row_chain(s, o))
        return s;
    if (n.op == "nn.attention" && schedule_attention(s, o)) return s;
    const CpuOpClass cls = cpu_op_class(n);
    std::vector<std::string> done;  // epilogues already placed by the matmul rule
    for (const std::string& block : s.blocks()) {
        const tir::Block* b = find_block(s.func(), block);
        if (!b || b->iter_vars.empty()) continue;
        if (std::find(done.begin(), done.end(), block) != done.end()) continue;
        Schedule before = s;
        const size_t npacks = packs ? packs->size() : 0;
        try {
            Rules r{s, o};
            // Grouped convs (class Injective for the tuner) and blocked pools
            // use the conv rules too.
            if (schedule_winograd_block(s, block, n, o)) continue;
            if ((cls == CpuOpClass::Conv2d || n.op == "nn.conv2d" ||
                 n.op.find("_NCHWc") != std::string::npos) &&
                schedule_conv2d_block(s, block, n, o))
                continue;
            if (n.op == "layout_transform" && r.layout(block)) continue;
            if (n.op == "nn.im2col_int8x4" && r.im2col(block, n)) continue;
            if (n.op == "nn.max_pool2d" && r.pool_rows(block)) continue;
            if (block == "conv2d_transpose_nchw" && r.accumulate_rows(block, o.vector_lanes)) continue;
            if (!is_reduction(b))
                r.injective(block);
            else if (cls == CpuOpClass::Matmul)
                schedule_matmul_block(s, block, o, packs, &done);
            else
                r.reduction(block);
        } catch (const schedule::ScheduleError& e) {
            s = before;  // this block keeps its default loops
            if (packs) packs->resize(npacks);
            // A rule that does not fit a block is normal (another one or the
            // default loops take it); TESSERA_DEBUG=1 says which and why.
            if (const char* debug = std::getenv("TESSERA_DEBUG"); debug && std::atoi(debug) >= 1)
                std::cerr << "// schedule rule for block '" << block << "' of node '" << n.name
                          << "' (" << n.op << ") did not apply: " << e.what() << "\n";
        }
    }
    if (packs) apply_packs(s, *packs);
    return s;
}

}  // namespace

CpuOpClass cpu_op_class(const graph::Node& n) {
    if (n.op == "nn.matmul" || n.op == "nn.gemm" || n.op == "nn.dense" ||
        n.op == "nn.batch_matmul" || graph::is_integer_gemm(n.op))
        return CpuOpClass::Matmul;
    if (n.op == "nn.conv2d" && n.attr_int("groups", 1) == 1) return CpuOpClass::Conv2d;
    if (n.op == "nn.conv2d_NCHWc" || n.op == "nn.conv2d_winograd_NCHWc") return CpuOpClass::Conv2d;
    return CpuOpClass::Injective;  // per block: reductions are detected from the loop nest
}

tir::PrimFunc schedule_cpu_default(const tir::PrimFunc& f, const graph::Node& n,
                                   const CpuScheduleOptions& options) {
    return cpu_default_schedule(f, n, options).func();
}

schedule::Schedule cpu_default_schedule(const tir::PrimFunc& f, const graph::Node& n,
                                        const CpuScheduleOptions& options) {
    std::vector<PackSpec> packs;
    return build(f, n, options, &packs);
}

namespace {

std::vector<CpuKnob> rule_knobs(const tir::PrimFunc& f, const graph::Node& n,
                                const CpuScheduleOptions& options) {
    switch (cpu_op_class(n)) {
        case CpuOpClass::Matmul: return matmul_knobs(f, n, options);
        case CpuOpClass::Conv2d:
            if (n.op == "nn.conv2d_winograd_NCHWc") return winograd_knobs(f, n, options);
            return conv2d_knobs(f, n, options);
        default: {
            // The injective rule's vector width (when the kernel has an elementwise block).
            Schedule s(f);
            bool elementwise = false;
            for (const std::string& block : s.blocks()) {
                const tir::Block* b = find_block(s.func(), block);
                if (b && !b->iter_vars.empty() && !is_reduction(b) && !s.get_loops(block).empty())
                    elementwise = true;
            }
            if (!elementwise || n.op == "layout_transform" || n.op == "nn.conv2d") return {};
            const int64_t l = std::max(options.vector_lanes, 1);
            return {CpuKnob{"injective.vector_factor", {2 * l, l, 4 * l}}};
        }
    }
}

}  // namespace

std::vector<CpuKnob> cpu_schedule_knobs(const tir::PrimFunc& f, const graph::Node& n,
                                        const CpuScheduleOptions& options) {
    std::vector<CpuKnob> knobs = rule_knobs(f, n, options);
    // A knob the options already set (the driver's choices for the kernel's
    // context, autotune::default_rule_options: a B computed at run time is
    // not packed) is the rule's default here too: the tuner's default
    // candidate is then the default kernel.
    for (CpuKnob& k : knobs) {
        auto set = options.knobs.find(k.name);
        if (set == options.knobs.end()) continue;
        auto at = std::find(k.choices.begin(), k.choices.end(), set->second);
        if (at != k.choices.end()) std::rotate(k.choices.begin(), at, at + 1);
    }
    return knobs;
}

schedule::Trace cpu_default_trace(const tir::PrimFunc& f, const graph::Node& n,
                                  const CpuScheduleOptions& options) {
    return cpu_default_schedule(f, n, options).trace();
}

}  // namespace tessera::topi
