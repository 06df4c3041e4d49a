// Greedy-by-size best-fit arena planning over buffer lifetimes.
#include "engine/runtime/memory_plan.h"

#include <algorithm>
#include <numeric>

#include "engine/core/error.h"

namespace tessera::runtime {

namespace {

int64_t round_up(int64_t v, int64_t a) { return (v + a - 1) / a * a; }

bool lifetimes_overlap(const BufferRequest& a, const BufferRequest& b) {
    return a.first_use <= b.last_use && b.first_use <= a.last_use;
}

}  // namespace

MemoryPlan plan_memory(const std::vector<BufferRequest>& requests, int64_t alignment) {
    TS_CHECK(alignment > 0) << "alignment must be positive";
    const size_t n = requests.size();
    MemoryPlan plan;
    plan.offsets.assign(n, -1);
    std::vector<int64_t> sizes(n);
    for (size_t i = 0; i < n; ++i) {
        const BufferRequest& r = requests[i];
        TS_CHECK(r.bytes >= 0 && r.first_use <= r.last_use)
            << "bad buffer request " << i << ": " << r.bytes << " bytes, uses " << r.first_use
            << ".." << r.last_use;
        sizes[i] = std::max<int64_t>(alignment, round_up(r.bytes, alignment));
        plan.naive_bytes += sizes[i];
    }
    // Largest first; ties broken by earlier first use, then index (deterministic).
    std::vector<size_t> order(n);
    std::iota(order.begin(), order.end(), size_t(0));
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        if (sizes[a] != sizes[b]) return sizes[a] > sizes[b];
        return requests[a].first_use < requests[b].first_use;
    });
    std::vector<size_t> placed;
    for (size_t i : order) {
        // Intervals [offset, offset + size) of placed buffers alive at the same time.
        std::vector<std::pair<int64_t, int64_t>> busy;
        for (size_t j : placed)
            if (lifetimes_overlap(requests[i], requests[j]))
                busy.emplace_back(plan.offsets[j], plan.offsets[j] + sizes[j]);
        std::sort(busy.begin(), busy.end());
        int64_t best = -1, best_gap = -1, cursor = 0;
        for (const auto& [lo, hi] : busy) {
            int64_t gap = lo - cursor;
            if (gap >= sizes[i] && (best_gap < 0 || gap < best_gap)) {
                best = cursor;
                best_gap = gap;
            }
            cursor = std::max(cursor, hi);
        }
        plan.offsets[i] = best >= 0 ? best : cursor;  // a gap, or the end of the busy ones
        plan.arena_bytes = std::max(plan.arena_bytes, plan.offsets[i] + sizes[i]);
        placed.push_back(i);
    }
    return plan;
}

bool plan_is_valid(const std::vector<BufferRequest>& requests, const MemoryPlan& plan) {
    if (plan.offsets.size() != requests.size()) return false;
    for (size_t i = 0; i < requests.size(); ++i) {
        if (plan.offsets[i] < 0 || plan.offsets[i] + requests[i].bytes > plan.arena_bytes)
            return false;
        for (size_t j = i + 1; j < requests.size(); ++j) {
            if (!lifetimes_overlap(requests[i], requests[j])) continue;
            if (requests[i].bytes == 0 || requests[j].bytes == 0) continue;
            bool apart = plan.offsets[i] + requests[i].bytes <= plan.offsets[j] ||
                         plan.offsets[j] + requests[j].bytes <= plan.offsets[i];
            if (!apart) return false;
        }
    }
    return true;
}

}  // namespace tessera::runtime
