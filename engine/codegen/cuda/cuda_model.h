// A whole graph compiled for the GPU: one function per node with its
// default GPU schedule, one CUDA C module, PTX from NVRTC, and the launch
// list that a CudaGraphExecutor runs.
#pragma once

#include <memory>

#include "engine/codegen/cuda/cuda_codegen.h"
#include "engine/graph/graph.h"
#include "engine/runtime/cuda_executor.h"

namespace tessera::codegen {

struct CudaModel {
    graph::Graph graph;
    std::vector<tir::PrimFunc> kernels;  // scheduled functions, one per node
    CompiledCuda compiled;
    std::vector<runtime::CudaCall> calls;
    double compile_seconds = 0;
    double total_flops = 0;

    /// An executor on device 0; throws UserError ("no CUDA device is
    /// available (...)") without a driver or device.
    std::shared_ptr<runtime::CudaGraphExecutor> make_executor() const;
};

/// Lowers every node with topi::lower_node_gpu and compiles them all with
/// NVRTC (no device needed). UserError names the node that fails.
std::shared_ptr<CudaModel> build_cuda(const graph::Graph& g, const CudaOptions& options = {});

/// The CUDA C of the given nodes with their default GPU schedules.
std::string cuda_source_of_nodes(const graph::Graph& g, const std::vector<int>& nodes,
                                 const CudaOptions& options = {});

}  // namespace tessera::codegen
