// A whole graph compiled for the GPU: one function per fused group (one per
// node without fuse_ops) with its default GPU schedule, one CUDA C module,
// PTX from NVRTC, and the launch list that a CudaGraphExecutor runs.
#pragma once

#include <functional>
#include <memory>

#include "engine/codegen/cuda/cuda_codegen.h"
#include "engine/graph/graph.h"
#include "engine/runtime/cuda_executor.h"

namespace tessera::codegen {

struct CudaModel {
    graph::Graph graph;
    std::vector<tir::PrimFunc> kernels;  // scheduled functions, one per fused group
    CompiledCuda compiled;
    std::vector<runtime::CudaCall> calls;
    double compile_seconds = 0;
    double total_flops = 0;

    /// An executor on device 0; throws UserError ("no CUDA device is
    /// available (...)") without a driver or device.
    std::shared_ptr<runtime::CudaGraphExecutor> make_executor() const;
};

/// The graph passes for the GPU: passes::resolve_pipeline(spec, opt_level)
/// without convert_layout (its NCHWc blocking serves CPU vector units; the
/// GPU rules run NCHW convolutions as implicit GEMM).
std::vector<std::string> cuda_pass_pipeline(const std::vector<std::string>& spec, int opt_level);

/// Schedules a fused group's unscheduled function for the GPU (tuning
/// records); a null PrimFunc leaves it to the default GPU schedule.
using GpuScheduleFn = std::function<tir::PrimFunc(const tir::PrimFunc& unscheduled)>;

/// Lowers each fused group of `g` (passes::fused_groups; run the passes
/// first) with topi::lower_group and the default GPU schedule (or what
/// `schedule`, when given, returns for it), and compiles them all into one
/// module with NVRTC (no device needed). UserError names the node that fails.
std::shared_ptr<CudaModel> build_cuda(const graph::Graph& g, const CudaOptions& options = {},
                                      const GpuScheduleFn& schedule = nullptr);

}  // namespace tessera::codegen
