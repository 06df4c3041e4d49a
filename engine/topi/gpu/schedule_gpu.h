// Default GPU schedules: how an operator's loop nests map onto CUDA blocks
// and threads when nobody tuned them.
#pragma once

#include "engine/graph/graph.h"
#include "engine/tir/stmt.h"

namespace tessera::topi {

struct GpuScheduleOptions {
    int64_t threads_per_block = 256;
    /// Reduction stages get the tiled rules: GEMM-shaped ones (matmul, dense,
    /// conv as implicit GEMM) the shared-memory SGEMM, other reductions over
    /// at least block_reduce_min_extent elements one thread block per output.
    bool tiled_rules = true;
    int64_t block_reduce_min_extent = 64;
    /// The SGEMM rule halves its 128 x 128 block tile (down to 32) while its
    /// grid has fewer blocks than this: enough to fill a large GPU (an H100
    /// or H200 has 132 SMs). 1 keeps the largest tile that fits the extents.
    int64_t gemm_min_blocks = 128;
    /// Inline injective intermediate stages (a conv's padding) into their
    /// readers first (inline_spatial_stages).
    bool inline_stages = true;
    /// Run an elementwise stage that follows a reduction over its output
    /// (bias + relu after a conv) in the reduction's kernel, where each
    /// output is stored: a fused group becomes one __global__.
    bool fuse_epilogues = true;
};

/// Every block that schedule::Schedule::compute_inline accepts (injective,
/// not a function output) inlined into its readers.
tir::PrimFunc inline_spatial_stages(const tir::PrimFunc& f);

/// Reduction stages first try the tiled rules (see GpuScheduleOptions).
/// Binds every other stage of a function made by te::create_prim_func to the GPU:
/// the stage's outer spatial loops are fused and split into blockIdx.x and
/// threadIdx.x (with a bounds guard when the split does not divide), so each
/// thread computes one output element; reduction loops stay serial inside
/// the thread. Stages become separate kernels (one launch each). Loops that
/// are already thread-bound are left alone (the function is returned as is).
tir::PrimFunc schedule_gpu_default(const tir::PrimFunc& f, const GpuScheduleOptions& options = {});

/// topi::lower_node followed by schedule_gpu_default.
tir::PrimFunc lower_node_gpu(const graph::Graph& g, int node,
                             const GpuScheduleOptions& options = {});

}  // namespace tessera::topi
