// Internal to the CUDA back end: a PrimFunc split into device kernels, each
// with its launch dimensions, checked against the device limits.
#pragma once

#include <map>

#include "engine/codegen/cuda/cuda_codegen.h"

namespace tessera::codegen {

/// One kernel before printing: its body still holds the thread-bound loops
/// (the printer turns them into blockIdx/threadIdx reads).
struct DeviceKernel {
    CudaKernel info;
    tir::Stmt body;
    std::vector<tir::Buffer> arg_buffers;  // same order as info.args
    std::vector<bool> arg_written;         // the kernel stores into the buffer
};

struct LoweredFunc {
    CudaFunction func;
    std::vector<DeviceKernel> kernels;
};

/// Lowers blocks, flattens buffers, simplifies, splits the body into kernels
/// (each top-level statement outside global allocations is one kernel),
/// inserts barriers and verifies the limits (UserError naming the function
/// and kernel when one is exceeded).
LoweredFunc lower_to_kernels(const tir::PrimFunc& f, const CudaLimits& limits);

/// "blockIdx.x" -> 0..2 for blockIdx, 3..5 for threadIdx, 6..8 for vthread;
/// -1 for anything else.
int thread_tag_slot(const std::string& tag);

/// Prints one kernel as an extern "C" __global__ function. `helpers`
/// collects the names of device helper functions the text uses.
std::string emit_kernel(const DeviceKernel& k, bool fast_math, std::map<std::string, std::string>& helpers);

}  // namespace tessera::codegen
