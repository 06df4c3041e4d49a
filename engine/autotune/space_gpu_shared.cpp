// Shared-memory staging of the GPU sketch (Ansor's cooperative fetch): the
// reduction block's inputs cached in "shared" per R0 step, fetched by all
// threads of the block through a loop nested in the compute's thread loop.
#include <algorithm>

#include "engine/autotune/space_gpu.h"
#include "engine/schedule/query.h"
#include "engine/tir/passes/compact_shared.h"
#include "engine/tir/passes/lower_blocks.h"

namespace tessera::autotune {

std::vector<std::string> stage_shared(schedule::Schedule& s, const std::string& block,
                                      const std::string& reduce_loop, int64_t threads,
                                      int64_t fetch_vector) {
    const tir::Block* b = schedule::find_block(s.func(), block);
    if (!b) throw schedule::ScheduleError(-1, "gpu_shared", "no block named '" + block + "'");
    // The inputs: buffers read but not written by the block (not its accumulator).
    std::vector<std::string> inputs;
    for (const tir::BufferRegion& r : b->reads) {
        bool written = std::any_of(b->writes.begin(), b->writes.end(), [&](const auto& w) {
            return w.buffer.same_as(r.buffer);
        });
        if (!written) inputs.push_back(r.buffer->name);
    }
    std::vector<std::string> caches;
    for (const std::string& name : inputs) {
        const tir::Block* cur = schedule::find_block(s.func(), block);
        int index = -1;
        for (size_t i = 0; i < cur->reads.size(); ++i)
            if (cur->reads[i].buffer->name == name) index = int(i);
        if (index < 0) throw schedule::ScheduleError(-1, "gpu_shared", "lost read '" + name + "'");
        caches.push_back(s.cache_read(block, index, "shared"));
    }
    for (const std::string& cache : caches) {
        s.compute_at(cache, reduce_loop);
        std::vector<std::string> loops = s.get_loops(cache);
        auto at = std::find(loops.begin(), loops.end(), reduce_loop);
        std::vector<std::string> fetch(at + 1, loops.end());
        if (fetch.empty()) continue;  // one element: every thread stores the same value
        std::string fused = fetch.size() > 1 ? s.fuse(fetch) : fetch[0];
        int64_t n = schedule::loop_extent(s.func(), fused);
        if (fetch_vector > 1 && n % fetch_vector != 0)
            throw schedule::ScheduleError(-1, "gpu_shared",
                                          "fetch_vector " + std::to_string(fetch_vector) +
                                              " does not divide the " + std::to_string(n) +
                                              " elements of '" + cache + "'");
        std::vector<std::string> parts =
            fetch_vector > 1 ? s.split(fused, {-1, threads, fetch_vector})
                             : s.split(fused, {-1, threads});
        s.bind(parts[1], "threadIdx.x");
        if (fetch_vector > 1) s.vectorize(parts[2]);
    }
    return caches;
}

int64_t gpu_shared_bytes(const tir::PrimFunc& scheduled) {
    return tir::shared_allocation_bytes(
        tir::compact_shared_buffers(tir::lower_blocks(scheduled))->body);
}

}  // namespace tessera::autotune
