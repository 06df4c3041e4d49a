// FMA peak (and 8-bit dot-product peak): independent vector chains, all threads started together
// and timed by the wall clock of the whole team; bandwidth: a triad a = b + s*c over working sets
// sized to each cache level (sysconf) and to memory, every thread on its own arrays, compiled for
// the CPU's vector width.
#include "app/studio/machine_peaks.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <limits>
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

enum class Isa { Scalar, Avx2, Avx512 };

Isa hostIsa() {
#if defined(__x86_64__)
    if (__builtin_cpu_supports("avx512f")) return Isa::Avx512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return Isa::Avx2;
#endif
    return Isa::Scalar;
}

#if defined(__x86_64__)
// Enough independent chains to cover the FMA latency on two FMA ports.
__attribute__((target("avx512f"))) double fmaAvx512(long iterations, float* sink) {
    __m512 acc[12];
    for (int i = 0; i < 12; ++i) acc[i] = _mm512_set1_ps(0.001f * float(i + 1));
    const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
    for (long it = 0; it < iterations; ++it)
#pragma GCC unroll 16
        for (int i = 0; i < 12; ++i) acc[i] = _mm512_fmadd_ps(acc[i], a, b);
    __m512 total = acc[0];
    for (int i = 1; i < 12; ++i) total = _mm512_add_ps(total, acc[i]);
    float out[16];
    _mm512_storeu_ps(out, total);
    *sink = out[0];
    return double(iterations) * 12 * 16 * 2;
}

__attribute__((target("avx2,fma"))) double fmaAvx2(long iterations, float* sink) {
    __m256 acc[10];
    for (int i = 0; i < 10; ++i) acc[i] = _mm256_set1_ps(0.001f * float(i + 1));
    const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
    for (long it = 0; it < iterations; ++it)
#pragma GCC unroll 16
        for (int i = 0; i < 10; ++i) acc[i] = _mm256_fmadd_ps(acc[i], a, b);
    __m256 total = acc[0];
    for (int i = 1; i < 10; ++i) total = _mm256_add_ps(total, acc[i]);
    float out[8];
    _mm256_storeu_ps(out, total);
    *sink = out[0];
    return double(iterations) * 10 * 8 * 2;
}

// The accumulator loops are unrolled whatever the optimization level: at -O2
// (the sanitize preset) an array of accumulators left in a loop lives on the
// stack and every chain waits for a store and a load, halving the ceiling.

// 8-bit dot products (vpdpbusd: 4 byte products per int32 lane), counted
// as 2 operations per product like the integer GEMMs' work.
__attribute__((target("avx512f,avx512vnni"))) double dotAvx512Vnni(long iterations, float* sink) {
    __m512i acc[12];
    for (int i = 0; i < 12; ++i) acc[i] = _mm512_set1_epi32(i);
    const __m512i a = _mm512_set1_epi32(0x01020304), b = _mm512_set1_epi32(0x01ff01ff);
    for (long it = 0; it < iterations; ++it)
#pragma GCC unroll 16
        for (int i = 0; i < 12; ++i) acc[i] = _mm512_dpbusd_epi32(acc[i], a, b);
    __m512i total = acc[0];
    for (int i = 1; i < 12; ++i) total = _mm512_add_epi32(total, acc[i]);
    alignas(64) int out[16];
    _mm512_store_si512(out, total);
    *sink = float(out[0]);
    return double(iterations) * 12 * 16 * 4 * 2;
}

__attribute__((target("avx2,avxvnni"))) double dotAvxVnni(long iterations, float* sink) {
    __m256i acc[10];
    for (int i = 0; i < 10; ++i) acc[i] = _mm256_set1_epi32(i);
    const __m256i a = _mm256_set1_epi32(0x01020304), b = _mm256_set1_epi32(0x01ff01ff);
    for (long it = 0; it < iterations; ++it)
#pragma GCC unroll 16
        for (int i = 0; i < 10; ++i) acc[i] = _mm256_dpbusd_avx_epi32(acc[i], a, b);
    __m256i total = acc[0];
    for (int i = 1; i < 10; ++i) total = _mm256_add_epi32(total, acc[i]);
    alignas(32) int out[8];
    _mm256_store_si256(reinterpret_cast<__m256i*>(out), total);
    *sink = float(out[0]);
    return double(iterations) * 10 * 8 * 4 * 2;
}

__attribute__((target("avx512f"))) void triadAvx512(float* a, const float* b, const float* c,
                                                    size_t n) {
    for (size_t i = 0; i < n; ++i) a[i] = b[i] + 3.0f * c[i];
}
__attribute__((target("avx2,fma"))) void triadAvx2(float* a, const float* b, const float* c,
                                                   size_t n) {
    for (size_t i = 0; i < n; ++i) a[i] = b[i] + 3.0f * c[i];
}
#endif

double fmaScalar(long iterations, float* sink) {
    float acc[8][8] = {};
    for (long it = 0; it < iterations; ++it)
        for (int i = 0; i < 8; ++i)
            for (int j = 0; j < 8; ++j) acc[i][j] = acc[i][j] * 0.999999f + 1e-7f;
    *sink = acc[0][0] + acc[7][7];
    return double(iterations) * 64 * 2;
}

void triadScalar(float* a, const float* b, const float* c, size_t n) {
    for (size_t i = 0; i < n; ++i) a[i] = b[i] + 3.0f * c[i];
}

double fmaRun(Isa isa, long iterations, float* sink) {
#if defined(__x86_64__)
    if (isa == Isa::Avx512) return fmaAvx512(iterations, sink);
    if (isa == Isa::Avx2) return fmaAvx2(iterations, sink);
#endif
    return fmaScalar(iterations, sink);
}

enum class DotIsa { None, Avx512Vnni, AvxVnni };

DotIsa hostDotIsa() {
#if defined(__x86_64__)
    if (__builtin_cpu_supports("avx512vnni")) return DotIsa::Avx512Vnni;
    if (__builtin_cpu_supports("avxvnni")) return DotIsa::AvxVnni;
#endif
    return DotIsa::None;
}

double dotRun(DotIsa isa, long iterations, float* sink) {
#if defined(__x86_64__)
    if (isa == DotIsa::Avx512Vnni) return dotAvx512Vnni(iterations, sink);
    if (isa == DotIsa::AvxVnni) return dotAvxVnni(iterations, sink);
#endif
    (void)iterations;
    (void)sink;
    return 0;
}

void triad(Isa isa, float* a, const float* b, const float* c, size_t n) {
#if defined(__x86_64__)
    if (isa == Isa::Avx512) return triadAvx512(a, b, c, n);
    if (isa == Isa::Avx2) return triadAvx2(a, b, c, n);
#endif
    triadScalar(a, b, c, n);
}

// Runs `work(thread)` on `threads` threads released together; returns the
// wall-clock seconds from the release to the last one's end.
template <typename Work>
double together(int threads, const Work& work) {
    std::atomic<int> ready{0};
    std::atomic<bool> go{false};
    std::vector<std::thread> team;
    for (int t = 0; t < threads; ++t)
        team.emplace_back([&, t]() {
            ready++;
            while (!go.load()) std::this_thread::yield();
            work(t);
        });
    while (ready.load() < threads) std::this_thread::yield();
    const auto t0 = Clock::now();
    go = true;
    for (auto& th : team) th.join();
    return seconds(t0);
}

// G operations per second of `run` (returning its operation count) on `threads` threads.
template <typename Run>
double teamGops(int threads, const Run& run) {
    std::vector<float> sinks(static_cast<size_t>(threads) * 16, 0.0f);
    std::vector<double> flops(static_cast<size_t>(threads), 0.0);
    const double s =
        together(threads, [&](int t) { flops[size_t(t)] = run(&sinks[size_t(t) * 16]); });
    double total = 0;
    for (double f : flops) total += f;
    return total / s / 1e9;
}

double fmaGflops(Isa isa, int threads, long iterations) {
    return teamGops(threads, [&](float* sink) { return fmaRun(isa, iterations, sink); });
}

double dotGops(DotIsa isa, int threads, long iterations) {
    return teamGops(threads, [&](float* sink) { return dotRun(isa, iterations, sink); });
}

// Triad bandwidth of `threads` threads, each over its own working set of `bytes`.
double triadGbps(Isa isa, int threads, size_t bytes) {
    const size_t n = std::max<size_t>(bytes / (3 * sizeof(float)), 64);
    const auto count = static_cast<size_t>(threads);
    std::vector<std::vector<float>> a(count), b(count), c(count);
    for (int t = 0; t < threads; ++t) {
        a[size_t(t)].assign(n, 0.5f);
        b[size_t(t)].assign(n, 1.0f);
        c[size_t(t)].assign(n, 2.0f);
    }
    // About 64 MiB of traffic per thread and repetition, at least one pass.
    const int passes = int(std::max<size_t>(1, (size_t(64) << 20) / (3 * n * sizeof(float))));
    double best = 0;
    for (int rep = 0; rep < 3; ++rep) {
        const double s = together(threads, [&](int t) {
            for (int p = 0; p < passes; ++p)
                triad(isa, a[size_t(t)].data(), b[size_t(t)].data(), c[size_t(t)].data(), n);
        });
        best = std::max(best, double(threads) * passes * 3.0 * double(n) * sizeof(float) / s / 1e9);
    }
    return best;
}

size_t cacheBytes(int name, size_t fallback) {
    const long v = sysconf(name);
    return v > 0 ? size_t(v) : fallback;
}

}  // namespace

double MachinePeaks::gflopsFor(int threads) const {
    if (threads <= 1) return gflopsOneCore;
    return std::min(gflops, gflopsOneCore * double(threads));
}

double MachinePeaks::int8GopsFor(int threads) const {
    if (threads <= 1) return int8GopsOneCore;
    return std::min(int8Gops, int8GopsOneCore * double(threads));
}

double MachinePeaks::gbpsFor(const MemoryRoof& roof, int threads) const {
    auto scaled = [&](const MemoryRoof& r) {
        if (!r.perCore || cores <= 0) return r.gbps;
        return r.gbps * double(std::clamp(threads, 1, cores)) / double(cores);
    };
    // A level farther out is never faster than a closer one for the same
    // threads: one thread's L3 read 124 GB/s (the all-core figure of a
    // shared cache) above its L2's 98 (half of two cores' L2).
    double cap = std::numeric_limits<double>::infinity();
    for (const MemoryRoof& r : roofs) {
        const double v = std::min(scaled(r), cap);
        if (r.name == roof.name) return v;
        cap = v;
    }
    return scaled(roof);
}

QString MachinePeaks::method() const {
    QString text = QString(
                       "Compute: %1 FMA chains, %2 GFLOP/s on one core, %3 on %4 threads "
                       "started together (wall clock).\nMemory: triad a = b + 3c on every "
                       "thread, working set sized to the level:")
                       .arg(isa)
                       .arg(gflopsOneCore, 0, 'f', 1)
                       .arg(gflops, 0, 'f', 1)
                       .arg(cores);
    if (int8GopsOneCore > 0)
        text += QString(
                    "\nInteger: %1 dot-product chains (vpdpbusd), %2 GOP/s on one core, %3 on "
                    "%4 threads (2 operations per byte product).")
                    .arg(int8Isa)
                    .arg(int8GopsOneCore, 0, 'f', 1)
                    .arg(int8Gops, 0, 'f', 1)
                    .arg(cores);
    for (const MemoryRoof& r : roofs)
        text += QString("\n  %1 %2 GB/s%3")
                    .arg(r.name)
                    .arg(r.gbps, 0, 'f', 1)
                    .arg(r.perCore ? " (per-core cache, all cores)" : "");
    return text;
}

MachinePeaks bestOf(const MachinePeaks& a, const MachinePeaks& b) {
    MachinePeaks best = a;
    best.gflopsOneCore = std::max(a.gflopsOneCore, b.gflopsOneCore);
    best.gflops = std::max(a.gflops, b.gflops);
    best.int8GopsOneCore = std::max(a.int8GopsOneCore, b.int8GopsOneCore);
    best.int8Gops = std::max(a.int8Gops, b.int8Gops);
    for (MemoryRoof& roof : best.roofs)
        for (const MemoryRoof& other : b.roofs)
            if (other.name == roof.name) roof.gbps = std::max(roof.gbps, other.gbps);
    return best;
}

MachinePeaks measureMachinePeaks() {
    MachinePeaks peaks;
    const Isa isa = hostIsa();
    peaks.isa = isa == Isa::Avx512 ? "AVX-512" : isa == Isa::Avx2 ? "AVX2+FMA" : "scalar";
    peaks.cores = int(std::max(1u, std::thread::hardware_concurrency()));
    const long iterations = 4'000'000;
    for (int rep = 0; rep < 3; ++rep) {
        peaks.gflopsOneCore = std::max(peaks.gflopsOneCore, fmaGflops(isa, 1, iterations));
        peaks.gflops = std::max(peaks.gflops, fmaGflops(isa, peaks.cores, iterations));
    }
    // All threads can do what one does (a busy machine can make the team's
    // measurement come out lower).
    peaks.gflops = std::max(peaks.gflops, peaks.gflopsOneCore);
    const DotIsa dot = hostDotIsa();
    if (dot != DotIsa::None) {
        peaks.int8Isa = dot == DotIsa::Avx512Vnni ? "AVX-512 VNNI" : "AVX-VNNI";
        for (int rep = 0; rep < 3; ++rep) {
            peaks.int8GopsOneCore = std::max(peaks.int8GopsOneCore, dotGops(dot, 1, iterations));
            peaks.int8Gops = std::max(peaks.int8Gops, dotGops(dot, peaks.cores, iterations));
        }
        peaks.int8Gops = std::max(peaks.int8Gops, peaks.int8GopsOneCore);
    }
    const size_t l1 = cacheBytes(_SC_LEVEL1_DCACHE_SIZE, 32 << 10);
    const size_t l2 = cacheBytes(_SC_LEVEL2_CACHE_SIZE, 1 << 20);
    const size_t l3 = cacheBytes(_SC_LEVEL3_CACHE_SIZE, 0);
    peaks.roofs.push_back({"L1", triadGbps(isa, peaks.cores, l1 / 2), true});
    peaks.roofs.push_back({"L2", triadGbps(isa, peaks.cores, l2 / 2), true});
    // L3: the best of working sets from half of it down to twice every
    // core's L2. On a VM the L3 the system reports is the host's, shared
    // with other guests: half of it (32 MiB on a Zen 5) read at memory speed.
    double l3_gbps = 0;
    const size_t cores = size_t(peaks.cores);
    for (size_t total = l3 / 2; l3 > 0 && total >= 2 * l2 * cores; total /= 2)
        l3_gbps = std::max(l3_gbps, triadGbps(isa, peaks.cores, total / cores));
    const size_t memory = std::max<size_t>(size_t(192) << 20, l3 * 8);
    const double dram = triadGbps(isa, peaks.cores, memory / cores);
    // An L3 no faster than memory is no level of its own here.
    if (l3_gbps > 1.05 * dram) peaks.roofs.push_back({"L3", l3_gbps, false});
    peaks.roofs.push_back({"DRAM", dram, false});
    return peaks;
}

}  // namespace tessera::studio
