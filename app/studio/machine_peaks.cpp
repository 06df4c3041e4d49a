// FMA peak: independent vector FMA chains (AVX2+FMA when the CPU has them);
// bandwidth: a triad over arrays much larger than the caches, with OpenMP-free
// std::thread workers so that it runs on every core.
#include "app/studio/machine_peaks.h"

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace tessera::studio {
namespace {

using Clock = std::chrono::steady_clock;

double seconds(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

#if defined(__x86_64__)
// 10 independent 8-wide FMA chains hide the FMA latency: returns flops done.
__attribute__((target("avx2,fma"))) double fmaKernelAvx2(long iterations, float* sink) {
    __m256 acc[10];
    for (int i = 0; i < 10; ++i) acc[i] = _mm256_set1_ps(0.001f * float(i + 1));
    const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
    for (long it = 0; it < iterations; ++it)
        for (int i = 0; i < 10; ++i) acc[i] = _mm256_fmadd_ps(acc[i], a, b);
    __m256 total = acc[0];
    for (int i = 1; i < 10; ++i) total = _mm256_add_ps(total, acc[i]);
    float out[8];
    _mm256_storeu_ps(out, total);
    *sink = out[0];
    return double(iterations) * 10 * 8 * 2;
}
#endif

double fmaKernelPortable(long iterations, float* sink) {
    float acc[8][8] = {};
    for (long it = 0; it < iterations; ++it)
        for (int i = 0; i < 8; ++i)
            for (int j = 0; j < 8; ++j) acc[i][j] = acc[i][j] * 0.999999f + 1e-7f;
    *sink = acc[0][0] + acc[7][7];
    return double(iterations) * 64 * 2;
}

double fmaGflops(long iterations) {
    float sink = 0;
    const auto t0 = Clock::now();
#if defined(__x86_64__)
    const double flops = __builtin_cpu_supports("fma") && __builtin_cpu_supports("avx2")
                             ? fmaKernelAvx2(iterations, &sink)
                             : fmaKernelPortable(iterations, &sink);
#else
    const double flops = fmaKernelPortable(iterations, &sink);
#endif
    const double s = seconds(t0);
    volatile float keep = sink;
    (void)keep;
    return flops / s / 1e9;
}

}  // namespace

MachinePeaks measureMachinePeaks() {
    MachinePeaks peaks;
    const long iterations = 4'000'000;
    for (int rep = 0; rep < 3; ++rep) peaks.gflopsOneCore = std::max(peaks.gflopsOneCore, fmaGflops(iterations));

    const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
    for (int rep = 0; rep < 2; ++rep) {
        std::vector<double> per(threads);
        std::vector<std::thread> workers;
        for (unsigned t = 0; t < threads; ++t)
            workers.emplace_back([&per, t, iterations]() { per[t] = fmaGflops(iterations); });
        for (auto& w : workers) w.join();
        double total = 0;
        for (double g : per) total += g;
        peaks.gflops = std::max(peaks.gflops, total);
    }

    const size_t n = size_t(16) << 20;  // 3 arrays x 64 MiB
    std::vector<float> a(n, 1.0f), b(n, 2.0f), c(n, 0.5f);
    for (int rep = 0; rep < 3; ++rep) {
        const auto t0 = Clock::now();
        std::vector<std::thread> workers;
        for (unsigned t = 0; t < threads; ++t)
            workers.emplace_back([&, t]() {
                const size_t lo = n * t / threads, hi = n * (t + 1) / threads;
                for (size_t i = lo; i < hi; ++i) a[i] = b[i] + 3.0f * c[i];
            });
        for (auto& w : workers) w.join();
        const double s = seconds(t0);
        peaks.gbps = std::max(peaks.gbps, 3.0 * double(n) * sizeof(float) / s / 1e9);
    }
    return peaks;
}

}  // namespace tessera::studio
