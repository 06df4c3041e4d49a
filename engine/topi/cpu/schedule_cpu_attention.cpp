// The nn.attention rule (see schedule_cpu_attention.h).
#include "engine/topi/cpu/schedule_cpu_attention.h"

#include <algorithm>
#include <cstdlib>
#include <iostream>

#include "engine/schedule/query.h"
#include "engine/schedule/schedule_util.h"
#include "engine/topi/cpu/schedule_cpu_rows.h"
#include "engine/topi/cpu/schedule_cpu_util.h"

namespace tessera::topi {

using schedule::loop_extent;
using schedule::Schedule;
using Names = std::vector<std::string>;

namespace {

/// Query rows per block: the largest of 8 (with 32 vector registers), 4, 2
/// and 1 that divides n. Eight rows read each key and value vector for twice
/// the products of four, which a head's 128 KB of K and V streamed from L2
/// for every block held back (AVX-512 Zen 5, 1 thread: BERT-base's fused
/// attention at sequence 512 4.6 -> 4.4 ms, the causal decoder at 2048
/// 93-95 -> 86-87 ms, the terrain UNet 110 -> 104 ms; with 16 registers the
/// Q K^T tile of 8 rows would spill).
int64_t row_block(int64_t n, int64_t registers) {
    for (int64_t r : {8, 4, 2})
        if (n % r == 0 && (r < 8 || registers >= 32)) return r;
    return 1;
}

/// `loop` split so its inner part is `lanes` wide (when it divides), vectorized.
void vectorize_by(Schedule& s, const std::string& loop, int64_t lanes) {
    const int64_t e = loop_extent(s.func(), loop);
    if (e <= lanes) {
        s.vectorize(loop);
    } else if (e % lanes == 0) {
        s.vectorize(s.split(loop, {-1, lanes})[1]);
    }
}

/// A product block with loops (rows, cols, k) from loop `outer` on:
/// reordered to (cols / W, k, rows, W) with the rows unrolled and W
/// vectorized, its init before the k loop. With `acc` (a copy block from a
/// cache_write of the product), the copy moves under the column block, so
/// the R x W accumulators are a local tile LLVM keeps in registers.
void register_tile(Schedule& s, const std::string& block, size_t outer, int64_t w,
                   const std::string& acc = "") {
    // (rows, cols, k) from `outer` on; a row block of one has no rows loop.
    Names l = s.get_loops(block);
    if (l.size() != outer + 2 && l.size() != outer + 3)
        throw schedule::ScheduleError(-1, "attention rule",
                                      "block '" + block + "' is not a product under the row block");
    const std::string rows = l.size() == outer + 3 ? l[outer] : "";
    const std::string cols = l[l.size() - 2], k = l.back();
    const int64_t ce = loop_extent(s.func(), cols);
    // W, else half of it, else W with a guarded tail.
    const int64_t width = ce <= w || ce % w == 0 ? std::min(w, ce) : ce % (w / 2) == 0 ? w / 2 : w;
    Names cs = width < ce ? s.split(cols, {-1, width}) : Names{cols};
    Names order = cs.size() == 2 ? Names{cs[0], k} : Names{k};
    if (!rows.empty()) order.push_back(rows);
    order.push_back(cs.back());
    s.reorder(order);
    s.decompose_reduction(block, k);
    if (!rows.empty()) s.unroll(rows);
    s.vectorize(cs.back());
    for (const std::string& b : s.blocks())
        if (b.rfind(block + "_init", 0) == 0) {
            Names il = s.get_loops(b);
            s.vectorize(il.back());
            if (!rows.empty()) s.unroll(il[il.size() - 2]);
        }
    if (acc.empty() || cs.size() != 2) return;
    s.reverse_compute_at(acc, cs[0]);
    Names al = s.get_loops(acc);
    s.vectorize(al.back());
    if (!rows.empty()) s.unroll(al[al.size() - 2]);
}

}  // namespace

bool schedule_attention(Schedule& s, const CpuScheduleOptions& o) {
    const Schedule before = s;
    const std::string qk = "T_attn_qk", mx = "T_attn_max", ex = "T_attn_exp", sm = "T_attn_sum",
                      pv = "T_attn_pv", out = "T_attention";
    const Names blocks = s.blocks();
    for (const std::string& b : {qk, mx, ex, sm, pv, out})
        if (std::find(blocks.begin(), blocks.end(), b) == blocks.end()) return false;
    try {
        const int64_t lanes = std::max(o.vector_lanes, 4);
        // The score rows, the exponentials and P V's accumulators in "local"
        // buffers that compact_local_buffers shrinks to one row block; Q K^T
        // accumulates in a second local tile, copied into its rows.
        for (const std::string& b : {qk, ex, pv}) s.compute_inline(s.cache_write(b, 0, "local"));
        const std::string qk_acc = s.cache_write(qk, 0, "local");
        // The row max and sum as W-wide partial results (rf blocks).
        const int64_t sk = loop_extent(s.func(), s.get_loops(sm).back());
        const int64_t w = row_vector_width(sk, o);
        Names rfs;
        if (w > 0)
            for (const std::string& b : {mx, sm}) rfs.push_back(rfactor_row(s, b, w));
        // The row statistics and their partial vectors local too.
        Names stats = rfs;
        stats.insert(stats.end(), {mx, sm});
        for (const std::string& b : stats) s.compute_inline(s.cache_write(b, 0, "local"));
        Names ol = s.get_loops(out);
        const size_t outer = ol.size() - 2;  // batch dims before (rows, columns)
        const int64_t sq = loop_extent(s.func(), ol[outer]);
        const int64_t registers = lanes >= 16 ? 32 : 16;
        const int64_t block_rows = row_block(sq, registers);
        const Names rows = s.split(ol[outer], {-1, block_rows});
        const Names all = s.blocks();
        for (auto it = all.rbegin(); it != all.rend(); ++it)
            if (*it != out) s.compute_at(*it, rows[0]);
        for (const std::string& rf : rfs) decompose_rf(s, rf);
        for (const std::string& b : s.blocks()) {  // the rf blocks' W-wide loops
            const bool rf = std::any_of(rfs.begin(), rfs.end(),
                                        [&](const std::string& r) { return b.rfind(r, 0) == 0; });
            if (rf) s.vectorize(s.get_loops(b).back());
        }
        register_tile(s, qk, outer + 1, 2 * lanes, qk_acc);
        const int64_t dv = loop_extent(s.func(), s.get_loops(out).back());
        // P V's accumulators (a row block x W vectors) in half of the
        // vector registers: 2 vectors for 8 rows with AVX-512's 32, 2 for 4
        // rows with AVX2's 16 (4 x 4 spilled to the stack on every step:
        // BERT-base at sequence 512 on a Zen 3, the fused kernel 23 -> 14.5 ms).
        const int64_t pv_vectors =
            std::clamp<int64_t>(registers / 2 / std::max<int64_t>(block_rows, 4), 1, 4);
        register_tile(s, pv, outer + 1, std::min<int64_t>(dv, pv_vectors * lanes));
        vectorize_by(s, s.get_loops(ex).back(), lanes);
        vectorize_by(s, s.get_loops(out).back(), lanes);
        // The batches and row blocks in parallel.
        Names par(ol.begin(), ol.begin() + std::ptrdiff_t(outer));
        par.push_back(rows[0]);
        const std::string fused = par.size() > 1 ? s.fuse(par) : par[0];
        if (o.threads != 1 && loop_extent(s.func(), fused) > 1) s.parallel(fused);
        return true;
    } catch (const schedule::ScheduleError& e) {
        s = before;
        if (const char* debug = std::getenv("TESSERA_DEBUG"); debug && std::atoi(debug) >= 1)
            std::cerr << "// attention rule did not apply: " << e.what() << "\n";
        return false;
    }
}

}  // namespace tessera::topi
