// Default GPU schedules: how an operator's loop nests map onto CUDA blocks
// and threads when nobody tuned them.
#pragma once

#include "engine/graph/graph.h"
#include "engine/tir/stmt.h"

namespace tessera::topi {

struct GpuScheduleOptions {
    int64_t threads_per_block = 256;
};

/// Binds every stage of a function made by te::create_prim_func to the GPU:
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
