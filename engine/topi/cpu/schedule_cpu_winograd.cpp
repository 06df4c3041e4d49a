// The Winograd conv schedule rule (see schedule_cpu_winograd.h).
#include "engine/topi/cpu/schedule_cpu_winograd.h"

#include <algorithm>
#include <utility>

#include "engine/schedule/query.h"
#include "engine/tir/op.h"
#include "engine/topi/cpu/schedule_cpu_util.h"

namespace tessera::topi {

using schedule::Schedule;
using Names = std::vector<std::string>;
using schedule::find_block;
using schedule::is_reduction;
using schedule::loop_extent;
using schedule::work;

namespace {

/// Transformed weights (alpha^2 x IC x OC floats) above which M is computed
/// for the whole plane at once (gemm_whole) rather than per row of tiles.
/// ResNet-18, 1 thread, per kernel: 14x14 256-ch (U 4 MiB) 1.55 -> 1.01 ms
/// (direct conv 1.39 ms); 28x28 128-ch (U 1 MiB) 0.87 either way; 56x56
/// 64-ch (U 256 KiB) 0.92 -> 1.15 ms, so it stays per row.
constexpr int64_t kWholePlaneWeightBytes = 2 << 20;

bool starts_with(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }

/// The extent of iteration variable `i` of `block`.
int64_t iter_extent(const Schedule& s, const std::string& block, size_t i) {
    const tir::Block* b = find_block(s.func(), block);
    const int64_t* e = b && i < b->iter_vars.size() ? tir::as_const_int(b->iter_vars[i].dom.extent)
                                                    : nullptr;
    if (!e) throw schedule::ScheduleError(0, "winograd", "block '" + block + "' has no constant dim " +
                                                             std::to_string(i));
    return *e;
}

/// The innermost loops of `block` after compute_at, one per iteration variable
/// in `dims` (indices into its iteration variables), "" for a variable of
/// extent 1: compute_at makes no loop for those (with 16-lane vectors a conv
/// of up to 16 input or output channels has one channel block).
Names own_loops(const Schedule& s, const std::string& block, const std::vector<size_t>& dims) {
    size_t present = 0;
    for (size_t d : dims) present += iter_extent(s, block, d) > 1 ? 1 : 0;
    const Names all = s.get_loops(block);
    if (all.size() < present)
        throw schedule::ScheduleError(0, "winograd", "block '" + block + "' has too few loops");
    Names own;
    size_t k = all.size() - present;
    for (size_t d : dims) own.push_back(iter_extent(s, block, d) > 1 ? all[k++] : std::string());
    return own;
}

/// `names` without the empty ones.
Names present(std::initializer_list<std::string> names) {
    Names out;
    for (const std::string& n : names)
        if (!n.empty()) out.push_back(n);
    return out;
}


/// The first block whose name starts with `prefix`.
std::string block_named(const Schedule& s, const char* prefix) {
    for (const std::string& b : s.blocks())
        if (starts_with(b, prefix) && !starts_with(b, (std::string(prefix) + "_init").c_str()))
            return b;
    return "";
}

/// Output-channel vectors per register tile: 2, or 4 where a row has fewer
/// than 10 tiles (14x14 planes at F(2,3), 28x28 at F(4,3)) so that the
/// accumulators still fill the register file.
int64_t default_oc_vectors(int64_t eoc, int64_t tiles, const CpuScheduleOptions& o) {
    if (o.vector_lanes < 16) return 1;
    if (tiles < 10 && eoc % 4 == 0) return 4;
    return eoc % 2 == 0 ? 2 : 1;
}

/// Tiles per register tile: accumulators (tiles x oc vectors) + the weight
/// vectors + a broadcast fit the register file.
int64_t default_tile_cols(int64_t tiles, const CpuScheduleOptions& o, int64_t ocv) {
    const int64_t hi = (o.vector_lanes >= 16 ? 28 : 12) / std::max<int64_t>(ocv, 1);
    return pick_factor(tiles, 4, hi);
}

struct WinogradRule {
    Schedule& s;
    const CpuScheduleOptions& o;
    int64_t m;

    bool parallel_ok(int64_t w) const { return o.threads != 1 && w >= kMinParallelWork; }

    // Y (n, oco, oh, ow, oci) -> n oh_o(parallel) | oco ow_o oh_i ow_i oci,
    // with V and M computed at oh_o (one row of tiles, in cache).
    void output(const std::string& y) {
        Names l = s.get_loops(y);
        const int64_t w = work(s, l);
        Names ohs = s.split(l[2], {-1, m});
        Names ows = s.split(l[3], {-1, m});
        s.reorder({l[0], ohs[0], l[1], ows[0], ohs[1], ows[1], l[4]});
        if (parallel_ok(w)) s.parallel(ohs[0]);
        s.unroll(ohs[1]);
        s.unroll(ows[1]);
        s.vectorize(l[4]);

        const std::string mm = block_named(s, "winograd_M");
        const std::string v = block_named(s, "winograd_V");
        const std::string pad = block_named(s, "data_pad");
        // V and M live in "local" buffers (the copies back to the full-size
        // ones inlined into their readers), which compact_local_buffers
        // shrinks to one row of tiles: no full-plane buffers to allocate and
        // page in on every call.
        s.compute_inline(s.cache_write(mm, 0, "local"));
        s.compute_inline(s.cache_write(v, 0, "local"));
        const bool whole = whole_plane(mm);
        if (whole) {
            gemm_whole(mm);
            transform_whole(v);
        } else {
            s.compute_at(mm, ohs[0]);
            gemm(mm);
            s.compute_at(v, ohs[0]);
            transform(v);
        }
        if (!pad.empty()) {
            if (!whole && o.knob("winograd.pad_per_row", 0)) {
                s.compute_at(pad, ohs[0]);
                Names pl = s.get_loops(pad);
                if (loop_extent(s.func(), pl.back()) >= 4) s.vectorize(pl.back());
            } else {
                Names pl = s.get_loops(pad);
                std::string par = s.fuse({pl[0], pl[1], pl[2]});
                if (parallel_ok(work(s, pl))) s.parallel(par);
                if (loop_extent(s.func(), pl[4]) >= 4) s.vectorize(pl[4]);
            }
        }
    }

    /// The batched GEMM's register tile for `eoc` output-channel blocks and
    /// `etw` tiles in a row: (channel vectors, tiles), from the winograd.* knobs.
    /// A block of 17-31 channels (`block_vectors` 2) counts as two vectors.
    std::pair<int64_t, int64_t> register_tile(int64_t eoc, int64_t etw,
                                              int64_t block_vectors) const {
        const int64_t ocv = std::clamp<int64_t>(
            o.knob("winograd.oc_vectors", default_oc_vectors(eoc, etw, o)), 1, eoc);
        const int64_t p = std::clamp<int64_t>(
            o.knob("winograd.tile_cols", default_tile_cols(etw, o, ocv * block_vectors)), 1, etw);
        return {ocv, p};
    }
    int64_t block_vectors(int64_t block) const {
        return (block + o.vector_lanes - 1) / o.vector_lanes;
    }

    // M's own loops (e, nu, oco, tw, oci, rco, rci) -> e nu oco_o tw_o |
    // rco rci | tw_i(unrolled) oco_i(unrolled) oci(vector); a channel block
    // count of 1 (oco or rco) has no loop.
    void gemm(const std::string& mm) {
        // M's iteration variables: n th e nu oco tw oci rco rci.
        const Names l = own_loops(s, mm, {2, 3, 4, 5, 6, 7, 8});
        const int64_t eoc = iter_extent(s, mm, 4);
        const int64_t etw = loop_extent(s.func(), l[3]);
        const auto [ocv, p] = register_tile(eoc, etw, block_vectors(iter_extent(s, mm, 6)));
        Names ocs = l[2].empty() ? Names{"", ""} : s.split(l[2], {-1, ocv});
        Names tws = s.split(l[3], {-1, p});
        s.reorder(present({l[0], l[1], ocs[0], tws[0], l[5], l[6], tws[1], ocs[1], l[4]}));
        std::string init = s.decompose_reduction(mm, l[5].empty() ? l[6] : l[5]);
        Names il = s.get_loops(init);
        if (!il.empty()) s.vectorize(il.back());
        s.unroll(tws[1]);
        if (!ocs[1].empty()) s.unroll(ocs[1]);
        s.vectorize(l[4]);
    }

    // Whole-plane GEMM where U outgrows the caches (kWholePlaneWeightBytes):
    // M per row of tiles would stream all of U from memory once per row;
    // instead each (e, nu, oc block) slice of U is applied to every tile of
    // the plane while it is in cache (V and M are then plane-sized).
    bool whole_plane(const std::string& mm) const {
        Names l = s.get_loops(mm);  // n th e nu oco tw oci rco rci, at the root
        int64_t bytes = 4;
        for (size_t i : {2, 3, 4, 6, 7, 8}) bytes *= loop_extent(s.func(), l[i]);
        // Batch > 1: plane-sized V and M of every image outgrow the caches
        // (ResNet-18 batch 16, 1 thread: 355 ms per row vs 390 ms whole).
        const bool dflt = bytes > kWholePlaneWeightBytes && loop_extent(s.func(), l[0]) == 1;
        return o.knob("winograd.whole_plane", dflt) != 0;
    }

    // M (n, th, e, nu, oco, tw, oci, rco, rci) -> e.nu(parallel) oco_o th tw_o | rco rci |
    // tw_i oco_i oci(vector).
    void gemm_whole(const std::string& mm) {
        Names l = s.get_loops(mm);
        const int64_t eoc = loop_extent(s.func(), l[4]);
        const int64_t etw = loop_extent(s.func(), l[5]);
        const auto [ocv, p] = register_tile(eoc, etw, block_vectors(loop_extent(s.func(), l[6])));
        Names ocs = s.split(l[4], {-1, ocv});
        Names tws = s.split(l[5], {-1, p});
        s.reorder({l[2], l[3], l[0], ocs[0], l[1], tws[0], l[7], l[8], tws[1], ocs[1], l[6]});
        std::string init = s.decompose_reduction(mm, l[7]);
        Names il = s.get_loops(init);
        if (!il.empty()) s.vectorize(il.back());
        const int64_t w = work(s, s.get_loops(mm));
        std::string en = s.fuse({l[2], l[3]});
        if (parallel_ok(w)) s.parallel(en);
        s.unroll(tws[1]);
        s.unroll(ocs[1]);
        s.vectorize(l[6]);
    }

    // V (n, th, e, nu, c, tw, i) at root -> n th(parallel) c tw | e nu | i.
    void transform_whole(const std::string& v) {
        Names l = s.get_loops(v);
        const int64_t w = work(s, l);
        s.reorder({l[0], l[1], l[4], l[5], l[2], l[3], l[6]});
        if (parallel_ok(w)) s.parallel(l[1]);
        s.unroll(l[2]);
        s.unroll(l[3]);
        s.vectorize(l[6]);
    }

    // V's own loops (e, nu, c, tw, i) -> c tw | e nu (unrolled) i(vector):
    // one alpha x alpha input tile of a channel block in, alpha^2 vectors out
    // (one channel block: no c loop).
    void transform(const std::string& v) {
        // V's iteration variables: n th e nu c tw i.
        const Names l = own_loops(s, v, {2, 3, 4, 5, 6});
        s.reorder(present({l[2], l[3], l[0], l[1], l[4]}));
        s.unroll(l[0]);
        s.unroll(l[1]);
        s.vectorize(l[4]);
    }

    // Fused elementwise stages after Y: per output tile (m x m pixels).
    void epilogue(const std::string& block) {
        const Names readers = s.get_consumers(block_named(s, "winograd_M"));
        if (readers.size() != 1) throw schedule::ScheduleError(0, "winograd", "no output stage");
        Names yl = s.get_loops(readers[0]);
        if (yl.size() != 7) throw schedule::ScheduleError(0, "winograd", "output not tiled");
        s.reverse_compute_at(block, yl[3]);
        Names l = s.get_loops(block);
        s.vectorize(l.back());
    }
};

}  // namespace

bool schedule_winograd_block(Schedule& s, const std::string& block, const graph::Node& n,
                             const CpuScheduleOptions& options) {
    if (n.op != "nn.conv2d_winograd_NCHWc") return false;
    const tir::Block* b = find_block(s.func(), block);
    if (!b) return false;
    WinogradRule r{s, options, n.attr_int("tile", 2)};
    // data_pad, V and M are placed by the output stage's rule.
    if (starts_with(block, "data_pad") || starts_with(block, "winograd_V") ||
        starts_with(block, "winograd_M"))
        return true;
    // The inverse transform (with the fused epilogue inlined into it, or
    // under its own name when it is the kernel's output): M's reader.
    const std::string mm = block_named(s, "winograd_M");
    if (!mm.empty()) {
        const Names readers = s.get_consumers(mm);
        if (std::find(readers.begin(), readers.end(), block) != readers.end()) {
            r.output(block);
            return true;
        }
    }
    if (s.get_loops(block).size() == 5 && !s.get_producers(block).empty()) {
        Schedule before = s;
        try {
            r.epilogue(block);
            return true;
        } catch (const schedule::ScheduleError&) {
            s = before;
        }
    }
    return false;
}

std::vector<CpuKnob> winograd_knobs(const tir::PrimFunc& f, const graph::Node& n,
                                    const CpuScheduleOptions& o) {
    if (n.op != "nn.conv2d_winograd_NCHWc") return {};
    Schedule s(f);
    const std::string mm = block_named(s, "winograd_M");
    if (mm.empty()) return {};
    Names l = s.get_loops(mm);
    if (l.size() != 9) return {};
    const int64_t eoc = loop_extent(s.func(), l[4]), etw = loop_extent(s.func(), l[5]);
    const int64_t ocv = default_oc_vectors(eoc, etw, o);
    std::vector<int64_t> ocs = {ocv};
    for (int64_t v : {1, 2, 4})
        if (v != ocv && eoc % v == 0) ocs.push_back(v);
    const int64_t vectors = (loop_extent(s.func(), l[6]) + o.vector_lanes - 1) / o.vector_lanes;
    std::vector<int64_t> cols = {default_tile_cols(etw, o, ocv * vectors)};
    for (int64_t c : {4, 6, 7, 8, 12, 14, 16, 28})
        if (c <= etw && std::find(cols.begin(), cols.end(), c) == cols.end()) cols.push_back(c);
    int64_t bytes = 4;
    for (size_t i : {2, 3, 4, 6, 7, 8}) bytes *= loop_extent(s.func(), l[i]);
    const int64_t whole = bytes > kWholePlaneWeightBytes && loop_extent(s.func(), l[0]) == 1;
    return {{"winograd.tile_cols", cols}, {"winograd.oc_vectors", ocs},
            {"winograd.pad_per_row", {0, 1}}, {"winograd.whole_plane", {whole, 1 - whole}}};
}

}  // namespace tessera::topi
