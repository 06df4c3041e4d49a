// Static memory planning for the GraphExecutor: buffers whose lifetimes (over
// the kernel call order) do not overlap share bytes of one arena.
#pragma once

#include <cstdint>
#include <vector>

namespace tessera::runtime {

/// One buffer to place: its size and the first and last kernel call (inclusive)
/// during which it must hold its data. A buffer with size 0 still gets an offset.
struct BufferRequest {
    int64_t bytes = 0;
    int first_use = 0;
    int last_use = 0;
};

/// Where each request lives in the arena.
struct MemoryPlan {
    std::vector<int64_t> offsets;  // one per request, a multiple of the alignment
    int64_t arena_bytes = 0;       // the arena's size: the peak of the plan
    int64_t naive_bytes = 0;       // what one buffer per request would take
};

/// Greedy-by-size best-fit placement (TFLite's arena planner): buffers are
/// placed largest first, each into the smallest gap between already placed
/// buffers whose lifetimes overlap its own. Deterministic for equal inputs.
MemoryPlan plan_memory(const std::vector<BufferRequest>& requests, int64_t alignment = 64);

/// True when no two requests with overlapping lifetimes overlap in bytes.
bool plan_is_valid(const std::vector<BufferRequest>& requests, const MemoryPlan& plan);

}  // namespace tessera::runtime
