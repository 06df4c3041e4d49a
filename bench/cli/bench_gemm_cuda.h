// `tessera bench gemm --target cuda [--compare cublas] [--records DB]`: the
// default (or tuned) GPU schedule's SGEMM against cublasSgemm (libcublas
// loaded with dlopen).
#pragma once

#include <cstdint>
#include <string>

namespace tessera::cli {

struct CudaGemmBench {
    int64_t m = 1024, n = 1024, k = 1024;
    std::string compare;  // "" or "cublas"
    int rounds = 3;       // alternate ours and theirs; median of all runs
    bool json = false;
    /// Tuning database: the best "cuda" record of this GEMM's task
    /// (tessera tune --target cuda --gemm MxNxK) replaces the default schedule.
    std::string records;
};

/// Compiles the kernel with NVRTC (always), then times it on device 0 with
/// CUDA events. Returns 2 (user error) with a message naming the reason when
/// no CUDA device is available or cuBLAS cannot be loaded.
int run_gemm_cuda_bench(const CudaGemmBench& b);

}  // namespace tessera::cli
