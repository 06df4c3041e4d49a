// GPU rules of the autotuner (Ansor's GPU sketch): the kernel's reduction
// block tiled "SSSRRSRS" — five levels per spatial loop (S0 blockIdx, S1
// vthread, S2 threadIdx, S3, S4) and three per reduction loop (R0, R1, R2) in
// the order S0 S1 S2 R0 R1 S3 R2 S4 — with the levels S0 / S1 / S2 fused and
// bound to blockIdx.x / vthread.x / threadIdx.x, injective producers
// (padding) inlined, elementwise consumers computed at the thread loop, the
// inner levels optionally unrolled, and optionally the block's inputs staged
// in shared memory: one cache_read per input computed at the innermost R0
// loop, its loops fused and split by the thread count for a cooperative fetch
// (optionally vectorized). Candidates must then pass the CUDA verifier
// (thread and shared-memory limits) and NVRTC; measuring them needs a GPU.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "engine/schedule/schedule.h"

namespace tessera::autotune {

struct GpuSketch {
    std::string block;  // the tiled reduction block
    /// Factors per loop of the block (get_loops order): 5 for a spatial
    /// loop, 3 for a reduction loop; each product is the loop's extent.
    std::vector<std::vector<int64_t>> tiles;
    bool unroll = false;  // S3, R2 and S4 loops unrolled
    /// Inputs of the block staged in shared memory per R0 iteration, fetched
    /// cooperatively by the block's threads.
    bool shared = false;
    /// Elements per thread and fetch step of the cooperative fetch (1, 2 or
    /// 4; the innermost fetch loop vectorized when > 1). Needs `shared`.
    int64_t fetch_vector = 1;
    std::string to_json() const;
    /// UserError naming the problem on malformed text or invalid fields.
    /// Records without "shared" / "fetch_vector" parse with staging off.
    static GpuSketch from_json(const std::string& text);
    bool operator==(const GpuSketch& o) const = default;
};

struct GpuSpaceOptions {
    int64_t max_threads = 1024;  // per block (threadIdx.x extent)
    int64_t min_threads = 32;    // one warp at least, where the extents allow
    int64_t max_vthreads = 8;
    int64_t max_inner = 64;  // S3 * R2 * S4 work per thread and reduction step
    /// Shared memory per block that staged samples may use (the CUDA default).
    int64_t max_shared_bytes = 48 * 1024;
    /// Probability of shared-memory staging where it fits.
    double shared_probability = 0.5;
};

/// The reduction block the GPU sketch tiles: the kernel's only reduction
/// block after inlining; empty when there is none or several.
std::string gpu_sketch_block(const tir::PrimFunc& func);

/// Applies the sketch (throws ScheduleError when a step does not apply).
schedule::Schedule generate_gpu(const tir::PrimFunc& func, const GpuSketch& sketch);

/// Shared-memory staging of the block's inputs (sketch.shared): cache_read
/// to "shared" of every buffer the block reads but does not write, computed
/// at `reduce_loop`, the fetch loops fused, split by `threads` and bound to
/// threadIdx.x (nested in the compute's thread loop of the same extent),
/// the innermost `fetch_vector` elements vectorized. Returns the cache
/// blocks. Throws ScheduleError when a step does not apply.
std::vector<std::string> stage_shared(schedule::Schedule& s, const std::string& block,
                                      const std::string& reduce_loop, int64_t threads,
                                      int64_t fetch_vector);

/// Bytes of shared memory per block the scheduled function allocates once
/// lowered for CUDA (staged tiles compacted to one R0 step).
int64_t gpu_shared_bytes(const tir::PrimFunc& scheduled);

/// A random sketch within the options' limits that generates without
/// errors. UserError when the kernel has no single reduction block.
GpuSketch sample_gpu(const tir::PrimFunc& func, std::mt19937_64& rng,
                     const GpuSpaceOptions& options = {});

}  // namespace tessera::autotune
