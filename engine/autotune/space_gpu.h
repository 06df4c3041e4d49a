// GPU rules of the autotuner (Ansor's GPU sketch, without shared-memory
// staging yet): the kernel's reduction block tiled "SSSRRSRS" — five levels
// per spatial loop (S0 blockIdx, S1 vthread, S2 threadIdx, S3, S4) and three
// per reduction loop (R0, R1, R2) in the order S0 S1 S2 R0 R1 S3 R2 S4 —
// with the levels S0 / S1 / S2 fused and bound to blockIdx.x / vthread.x /
// threadIdx.x, injective producers (padding) inlined, elementwise consumers
// computed at the thread loop, and the inner levels optionally unrolled.
// Candidates must then pass the CUDA verifier (thread and shared-memory
// limits) and NVRTC; measuring them needs a GPU.
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
    std::string to_json() const;
    /// UserError naming the problem on malformed text.
    static GpuSketch from_json(const std::string& text);
    bool operator==(const GpuSketch& o) const = default;
};

struct GpuSpaceOptions {
    int64_t max_threads = 1024;  // per block (threadIdx.x extent)
    int64_t min_threads = 32;    // one warp at least, where the extents allow
    int64_t max_vthreads = 8;
    int64_t max_inner = 64;  // S3 * R2 * S4 work per thread and reduction step
};

/// The reduction block the GPU sketch tiles: the kernel's only reduction
/// block after inlining; empty when there is none or several.
std::string gpu_sketch_block(const tir::PrimFunc& func);

/// Applies the sketch (throws ScheduleError when a step does not apply).
schedule::Schedule generate_gpu(const tir::PrimFunc& func, const GpuSketch& sketch);

/// A random sketch within the options' limits that generates without
/// errors. UserError when the kernel has no single reduction block.
GpuSketch sample_gpu(const tir::PrimFunc& func, std::mt19937_64& rng,
                     const GpuSpaceOptions& options = {});

}  // namespace tessera::autotune
