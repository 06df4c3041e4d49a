// Vendor libraries for side-by-side benchmarks: OpenBLAS sgemm and a oneDNN
// convolution primitive with `any` memory layouts (its fastest JIT kernel).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace tessera::bench {

/// C = A B, row-major fp32, on `threads` OpenBLAS threads. False if OpenBLAS
/// is not built in.
bool openblas_sgemm(int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* c,
                    int threads);

/// The kernel core OpenBLAS runs ("Haswell", "SkylakeX": openblas_get_corename()),
/// "none" without OpenBLAS.
std::string openblas_core();

/// The ISA oneDNN's JIT uses ("avx512_core", "avx2": dnnl_get_effective_cpu_isa()),
/// "none" without oneDNN.
std::string onednn_isa();

/// A warning when the environment pins a comparator to weaker kernels than
/// this CPU runs (OPENBLAS_CORETYPE=Haswell on an AVX-512 CPU makes OpenBLAS
/// run AVX2 kernels; ONEDNN_MAX_CPU_ISA likewise), else "".
std::string comparator_pin_warning();

/// A oneDNN forward-inference convolution (NCHW input / OIHW weights given
/// once; reorders into the primitive's chosen layouts happen at setup, so
/// run() times the convolution kernel alone). Output read back as NCHW.
class OneDnnConv {
public:
    OneDnnConv(int64_t n, int64_t c, int64_t h, int64_t w, int64_t k, int64_t r, int64_t s,
               int64_t stride, int64_t pad, const float* x, const float* weights, int threads);
    ~OneDnnConv();
    void run();
    /// Copies the result (NCHW) to `y`.
    void output(float* y);
    /// The implementation oneDNN picked ("jit:avx512_core", ...).
    const char* impl() const;

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

}  // namespace tessera::bench
