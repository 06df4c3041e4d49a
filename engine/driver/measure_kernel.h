// The kernel measurement the schedule editor and `tessera-bench bench
// editor` use: one scheduled PrimFunc JIT-compiled on its own, its buffers
// filled with seeded random data, timed with runtime::time_kernel (caches
// flushed before each run), as the tuner and the profiler time kernels.
#pragma once

#include <functional>

#include "engine/codegen/llvm/llvm_codegen.h"
#include "engine/driver/driver.h"
#include "engine/runtime/kernel_timing.h"
#include "engine/tir/stmt.h"

namespace tessera::driver {

struct KernelMeasurement {
    double median_ms = 0;
    double gflops = 0;  // flops / median time (0 when flops is 0)
    int repeat = 0;
    /// The work the kernel executes / median time, where it is not its ops'
    /// FLOPs (a Winograd conv: `gflops` is then "effective"); 0 otherwise.
    double work_gflops = 0;
    /// Integer dot products (an int8 GEMM): G operations/s, whose roof is
    /// the CPU's int8 peak, not its float peak.
    bool integer = false;
};

/// Compiles `func` with `llvm` (as the build compiled it: CompiledModel::llvm),
/// fills its parameters with random data and times it with `timing`.
/// `each(done)` (may be empty) sees the count of timed runs; returning false
/// stops early.
KernelMeasurement measure_kernel(const tir::PrimFunc& func, double flops,
                                 const runtime::TimingOptions& timing,
                                 const codegen::LlvmOptions& llvm = {},
                                 const std::function<bool(int done)>& each = {});

/// What the schedule editor's Measure reports: `g` built with `options` and
/// `trace` as the hand schedule of the kernel that runs `node`, run on random
/// inputs, and that kernel timed inside the model as `run --profile` times
/// it (GraphExecutor::profile: every kernel runs, each after its buffers are
/// flushed), `repeat` runs, the median. A kernel timed alone on its own
/// buffers reads up to 1.5x faster when it keeps a large scratch buffer
/// (a Winograd transform) in L3 between repeats. `each(done)` returning
/// false stops early. UserError when the trace does not apply.
KernelMeasurement profile_in_model(const graph::Graph& g, BuildOptions options,
                                   const std::string& node, const schedule::Trace& trace,
                                   int repeat = 20, const std::function<bool(int done)>& each = {});

}  // namespace tessera::driver
