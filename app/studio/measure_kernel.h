// Measure: JIT-compiles one scheduled PrimFunc and times it on random data
// (plain C++, runs on a worker thread through JobRunner).
#pragma once

#include "app/studio/job_runner.h"
#include "engine/tir/stmt.h"

namespace tessera::studio {

struct KernelMeasurement {
    double medianMs = 0;
    double gflops = 0;  // flops / median time (0 when flops is 0)
    int repeat = 0;
};

/// Compiles `func` with codegen::jit_compile, fills its parameter buffers with
/// seeded random data and times about `budgetMs` of calls after a warm-up
/// with runtime::time_kernel (as the tuner and the profiler do).
KernelMeasurement measureKernel(const tir::PrimFunc& func, double flops, const JobContext& context,
                                double budgetMs = 200);

}  // namespace tessera::studio
