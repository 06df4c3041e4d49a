// CUDA back end for loop IR: lowering of thread-bound loop nests to kernels,
// readable CUDA C source, and NVRTC compilation to PTX. Plain C++: no CUDA
// header is needed to use it, and nothing here needs a GPU.
//
//   CompiledCuda c = compile_cuda({scheduled_func});   // PTX for compute_90
//   std::cout << c.source;
//   c.funcs[0].kernels[0].grid                          // launch dimensions
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/tir/stmt.h"

namespace tessera::codegen {

/// Per-block limits a kernel must respect. The defaults are those of every
/// CUDA device since compute capability 7.0 without opt-in shared memory.
struct CudaLimits {
    int64_t max_threads_per_block = 1024;
    std::array<int64_t, 3> max_block_dims{1024, 1024, 64};
    std::array<int64_t, 3> max_grid_dims{2147483647, 65535, 65535};
    int64_t max_shared_bytes = 48 * 1024;
    /// 32-bit registers per thread: local (register) arrays above this would
    /// spill to local memory, which the verifier rejects.
    int64_t max_registers_per_thread = 255;
};

struct CudaOptions {
    /// NVRTC virtual architecture, "compute_90"; empty: the device's, or
    /// compute_90 when no device is present.
    std::string arch;
    /// Fast math intrinsics (__expf, __logf, ...) and --use_fast_math.
    bool fast_math = true;
    /// 32-bit index arithmetic in kernels whose buffers all have fewer than
    /// 2^31 elements (and whose loops and launch fit); int64 otherwise.
    bool int32_indices = true;
    CudaLimits limits;
};

/// One `extern "C" __global__` function and how to launch it.
struct CudaKernel {
    std::string name;
    std::array<int64_t, 3> grid{1, 1, 1};   // blockIdx extents
    std::array<int64_t, 3> block{1, 1, 1};  // threadIdx extents
    int64_t shared_bytes = 0;               // static __shared__ memory per block
    int64_t local_bytes = 0;                // per-thread register arrays
    /// The kernel's pointer arguments: index into the function's params,
    /// then (from params.size() on) into its workspaces.
    std::vector<int> args;
};

/// A PrimFunc as a sequence of kernel launches. Global buffers allocated
/// inside the function (intermediate stages) become workspaces that the
/// runtime allocates in device memory.
struct CudaFunction {
    std::string name;
    std::vector<tir::Buffer> params;
    std::vector<tir::Buffer> workspaces;
    std::vector<CudaKernel> kernels;  // launched in order
};

struct CompiledCuda {
    std::string source;  // the CUDA C of every function
    std::string ptx;     // NVRTC output (empty from emit_cuda_source)
    std::string arch;    // "compute_90"
    std::string log;     // NVRTC's log (warnings)
    std::vector<CudaFunction> funcs;
};

/// Lowers the functions (blocks, buffer flattening, host/device split, sync
/// insertion), checks them against the limits and prints CUDA C. Throws
/// UserError naming the function and kernel when a limit is exceeded or a
/// thread binding is invalid.
CompiledCuda lower_cuda(const std::vector<tir::PrimFunc>& funcs, const CudaOptions& options = {});

/// Just the CUDA C text of lower_cuda().
std::string emit_cuda_source(const std::vector<tir::PrimFunc>& funcs,
                             const CudaOptions& options = {});

/// lower_cuda() plus NVRTC compilation to PTX. Throws UserError with the
/// NVRTC log when the source does not compile.
CompiledCuda compile_cuda(const std::vector<tir::PrimFunc>& funcs, const CudaOptions& options = {});

/// Compiles CUDA C text with NVRTC for `arch`; returns PTX. Throws UserError
/// with the log on failure; `log` receives warnings.
std::string nvrtc_compile(const std::string& source, const std::string& arch, bool fast_math,
                          std::string* log = nullptr);

/// The architecture to compile for: the first device's "compute_XY" when a
/// CUDA driver and device are present, else "compute_90".
std::string default_cuda_arch();

/// "NVRTC 13.0": the version of the loaded NVRTC library ("NVRTC not found"
/// when there is none; see nvrtc_library.h).
std::string nvrtc_version();

}  // namespace tessera::codegen
