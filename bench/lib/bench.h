// Benchmark harness shared by `tessera bench` and the bench programs: careful
// timing (warm-up, repeated runs, median), our GEMM / conv2d kernels through
// the normal build path, the vendor libraries (OpenBLAS sgemm, oneDNN conv)
// in the same process, and the GEMM schedule ladder of the seeds.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/schedule/trace.h"

namespace tessera::bench {

struct Measurement {
    double median_ms = 0;
    double min_ms = 0;
    int repeat = 0;
};

/// Runs `fn` twice to warm up, then repeatedly until both `min_repeat` runs
/// and `min_seconds` have passed (at most 1000 runs); median and minimum.
Measurement measure(const std::function<void()>& fn, double min_seconds = 0.3,
                    int min_repeat = 7);

/// The median of several measurements' medians (runs summed, overall minimum).
Measurement median_of(std::vector<Measurement> ms);

/// GFLOP/s of `flops` operations taking `ms` milliseconds.
double gflops(double flops, double ms);

struct Comparison {
    Measurement ours, theirs;
    bool have_theirs = false;
    std::string theirs_name;  // "openblas", "onednn"
    double flops = 0;
    double max_abs_err = 0;  // ours vs theirs (or vs the naive reference)
    double max_rel_err = 0;
};

struct GemmShape {
    int64_t m = 1024, n = 1024, k = 1024;
    std::string records;  // tuning database whose best records apply (empty = defaults)
};
/// C = A B (fp32, row-major) with our default schedule at `threads` threads,
/// then `compare` ("openblas" or "") on the same data; `rounds` times
/// alternately, the median of the rounds.
Comparison bench_gemm(const GemmShape& s, int threads, const std::string& compare,
                      int rounds = 1);
/// The scheduled kernel(s) bench_gemm runs, as "tir" (loop IR after the
/// default schedule), "lowered" (after the lowering passes), "llvm" or "asm".
std::string gemm_kernel_text(const GemmShape& s, int threads, const std::string& what);

struct ConvShape {
    int64_t n = 1, c = 64, h = 56, w = 56, k = 64, r = 3, s = 3, stride = 1, pad = 1;
    std::string records;  // tuning database whose best records apply (empty = defaults)
};
/// NCHW conv2d with OIHW constant weights; `compare` "onednn" or "".
Comparison bench_conv2d(const ConvShape& s, int threads, const std::string& compare);

/// True when the library was found at build time.
bool have_openblas();
bool have_onednn();

struct LadderRow {
    std::string name;
    schedule::Trace trace;
    Measurement m;
    double gflops = 0;
    double speedup = 0;  // vs the first row
};
/// The seeds' table for an n^3 GEMM: naive, +tiling, +reorder, +vectorize,
/// +parallel, +unroll, each a Trace on the default loop nest.
std::vector<LadderRow> gemm_ladder(int64_t n, int threads);

}  // namespace tessera::bench
