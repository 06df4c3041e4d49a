// A whole graph compiled for the GPU: one function per fused group with its
// default GPU schedule (or a tuning record's, or a hand trace's), one CUDA C
// module, PTX from NVRTC, and the launch list that a CudaGraphExecutor runs.
// driver::build with target "cuda" makes it (CompiledModel::cuda); the
// functions here are its steps.
#pragma once

#include <functional>
#include <memory>

#include "engine/codegen/cuda/cuda_codegen.h"
#include "engine/graph/graph.h"
#include "engine/runtime/cuda_executor.h"

namespace tessera::driver {

struct CudaModel {
    graph::Graph graph;
    std::vector<tir::PrimFunc> kernels;  // scheduled functions, one per fused group
    std::vector<std::vector<int>> kernel_nodes;  // the nodes of `graph` each function runs
    codegen::CompiledCuda compiled;  // empty (no source, no PTX) when built with jit = false
    std::vector<runtime::CudaCall> calls;  // empty when built with jit = false
    double compile_seconds = 0;
    double total_flops = 0;

    /// An executor on device 0; throws UserError ("no CUDA device is
    /// available (...)") without a driver or device.
    std::shared_ptr<runtime::CudaGraphExecutor> make_executor() const;
};

/// Schedules a fused group's unscheduled function for the GPU (tuning
/// records, hand traces); a null PrimFunc leaves it to the default GPU
/// schedule, which also binds what a returned function leaves unbound.
using GpuScheduleFn = std::function<tir::PrimFunc(const tir::PrimFunc& unscheduled,
                                                  const std::vector<int>& nodes)>;

/// Lowers each fused group of `g` (passes::fused_groups; run the passes
/// first) with topi::lower_group and the default GPU schedule (or what
/// `schedule`, when given, returns for it) and, when `compile`, compiles them
/// all into one module with NVRTC (no device needed). UserError names the
/// node that fails. driver::build is the entry point; this is its GPU step.
std::shared_ptr<CudaModel> build_cuda(const graph::Graph& g, const codegen::CudaOptions& options = {},
                                      const GpuScheduleFn& schedule = nullptr, bool compile = true);

}  // namespace tessera::driver
