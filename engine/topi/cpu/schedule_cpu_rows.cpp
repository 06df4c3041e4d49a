// Row-wise reductions and the chains they form (see schedule_cpu_rows.h).
#include "engine/topi/cpu/schedule_cpu_rows.h"

#include <algorithm>

#include "engine/schedule/query.h"
#include "engine/schedule/schedule_util.h"
#include "engine/tir/functor.h"
#include "engine/topi/cpu/schedule_cpu_util.h"

namespace tessera::topi {

using schedule::find_block;
using schedule::loop_extent;
using schedule::Schedule;
using schedule::work;
using Names = std::vector<std::string>;

int64_t row_vector_width(int64_t extent, const CpuScheduleOptions& o) {
    const int64_t lanes = std::max(o.vector_lanes, 4);
    int64_t w = extent % (2 * lanes) == 0 ? 2 * lanes : extent % lanes == 0 ? lanes : 0;
    // A long row no whole vector divides: the widest power of two from 4
    // that does, part of a vector, rather than a scalar loop (an ALBERT
    // tagger's ArgMax over 3,788 classes: 4 lanes, 1.3 -> 0.4 ms). A row
    // shorter than four vectors stays scalar.
    if (extent >= 4 * lanes)
        for (int64_t c = lanes / 2; w == 0 && c >= 4; c /= 2)
            if (extent % c == 0) w = c;
    return w > 0 && extent >= 2 * w ? w : 0;
}

namespace {

/// Whether `block` reduces its innermost loop over the last dimension of
/// every buffer it reads, all its other loops spatial.
bool is_row_reduction(const Schedule& s, const std::string& block) {
    Names loops = s.get_loops(block);
    const tir::Block* b = find_block(s.func(), block);
    if (loops.size() < 2 || !b || b->iter_vars.size() != loops.size()) return false;
    const size_t n = loops.size();
    for (size_t i = 0; i + 1 < n; ++i)
        if (b->iter_vars[i].kind != tir::IterKind::Spatial) return false;
    if (b->iter_vars[n - 1].kind != tir::IterKind::Reduce) return false;
    const tir::Var& k = b->iter_vars[n - 1].var;
    for (const tir::BufferRegion& r : b->reads)
        for (const auto& idx : schedule::detail::load_indices(b, r.buffer))
            for (size_t d = 0; d < idx.size(); ++d)
                if (tir::uses_var(idx[d], k.get()) &&
                    (d + 1 != idx.size() || idx[d].as<tir::Variable>() != k.get()))
                    return false;
    return true;
}

bool parallel_ok(const CpuScheduleOptions& o, int64_t w) {
    return o.threads != 1 && w >= kMinParallelWork;
}

}  // namespace

std::string rfactor_row(Schedule& s, const std::string& block, int64_t w) {
    Names loops = s.get_loops(block);
    const tir::Block* b = find_block(s.func(), block);
    const int out_rank = int(b->writes.front().buffer->shape.size());
    Names ks = s.split(loops.back(), {-1, w});
    return s.rfactor(ks[1], out_rank);
}

void decompose_rf(Schedule& s, const std::string& rf) {
    Names l = s.get_loops(rf);
    s.decompose_reduction(rf, l[l.size() - 2]);
}

bool vectorize_row_reduction(Schedule& s, const std::string& block, const CpuScheduleOptions& o,
                             bool fuse_rows) {
    if (!is_row_reduction(s, block)) return false;
    Names loops = s.get_loops(block);
    const int64_t w = row_vector_width(loop_extent(s.func(), loops.back()), o);
    if (w == 0) return false;
    const std::string rf = rfactor_row(s, block, w);
    decompose_rf(s, rf);
    for (const std::string& b : s.blocks())
        if (b == rf || b.rfind(rf + "_init", 0) == 0) s.vectorize(s.get_loops(b).back());
    if (!fuse_rows) return true;
    Names rows(loops.begin(), loops.end() - 1);
    const std::string fused = rows.size() > 1 ? s.fuse(rows) : rows[0];
    if (parallel_ok(o, work(s, s.get_loops(rf))) && loop_extent(s.func(), fused) > 1)
        s.parallel(fused);
    return true;
}

bool schedule_row_chain(Schedule& s, const CpuScheduleOptions& o) {
    const Schedule before = s;
    try {
        Names blocks = s.blocks();
        if (blocks.size() < 2) return false;
        const std::string out = blocks.back();
        Names out_loops = s.get_loops(out);
        if (out_loops.size() < 2) return false;
        const int64_t row = loop_extent(s.func(), out_loops.back());
        const int64_t w = row_vector_width(row, o);
        if (w == 0) return false;
        // Row-sized intermediates (softmax's exponentials) in "local"
        // buffers that compact_local_buffers shrinks to one row: written and
        // read back in cache, never sent to memory.
        for (const std::string& b : blocks) {
            const tir::Block* bb = find_block(s.func(), b);
            if (b == out || !bb || schedule::is_reduction(bb)) continue;
            const Schedule keep = s;
            try {
                s.compute_inline(s.cache_write(b, 0, "local"));
            } catch (const schedule::ScheduleError&) {
                s = keep;
            }
        }
        blocks = s.blocks();
        // Every reduction a row reduction of that length, rfactor'ed.
        Names rfs, stats;
        for (const std::string& b : blocks) {
            const tir::Block* bb = find_block(s.func(), b);
            if (!bb || !schedule::is_reduction(bb)) continue;
            if (!is_row_reduction(s, b) || loop_extent(s.func(), s.get_loops(b).back()) != row) {
                s = before;
                return false;
            }
            stats.push_back(b);
            rfs.push_back(rfactor_row(s, b, w));
        }
        if (rfs.empty()) {
            s = before;
            return false;
        }
        // The row statistics and their W-wide partial results local too:
        // one row's worth inside the row loop, not [rows.., W] in memory.
        stats.insert(stats.end(), rfs.begin(), rfs.end());
        for (const std::string& b : stats) {
            const Schedule keep = s;
            try {
                s.compute_inline(s.cache_write(b, 0, "local"));
            } catch (const schedule::ScheduleError&) {
                s = keep;
            }
        }
        // Everything computed inside the output's innermost row loop, the
        // producers in reverse order so each lands before its readers.
        Names rows(out_loops.begin(), out_loops.end() - 1);
        blocks = s.blocks();
        for (auto it = blocks.rbegin(); it != blocks.rend(); ++it)
            if (*it != out) s.compute_at(*it, rows.back());
        for (const std::string& rf : rfs) decompose_rf(s, rf);
        // Vector loops: each block's innermost loop over the row (W wide in
        // the rf blocks, the whole row split by W elsewhere); write-backs
        // (one element per row) stay scalar.
        for (const std::string& b : s.blocks()) {
            Names l = s.get_loops(b);
            if (l.size() <= rows.size()) continue;
            const int64_t e = loop_extent(s.func(), l.back());
            if (e != w && e != row) continue;
            const Schedule keep = s;
            try {
                s.vectorize(e == w ? l.back() : s.split(l.back(), {-1, w})[1]);
            } catch (const schedule::ScheduleError&) {
                s = keep;  // a write-back's reduction loop stays serial
            }
        }
        // Leading rows of extent 1 (a batch of one) stay outside the fused
        // loop: its index stays the row itself.
        Names live(std::find_if(rows.begin(), rows.end() - 1,
                                [&](const std::string& l) { return loop_extent(s.func(), l) > 1; }),
                   rows.end());
        const std::string fused = live.size() > 1 ? s.fuse(live) : live[0];
        if (parallel_ok(o, work(s, s.get_loops(out))) && loop_extent(s.func(), fused) > 1)
            s.parallel(fused);
        return true;
    } catch (const schedule::ScheduleError&) {
        s = before;
        return false;
    }
}

}  // namespace tessera::topi
