// Helpers for the GPU tuning-record tests: a graph optimized with the CUDA
// pass pipeline and a "cuda" record of a sampled GPU sketch for a task.
#pragma once

#include "engine/autotune/database.h"
#include "engine/autotune/space_gpu.h"
#include "engine/autotune/task.h"
#include "engine/driver/cuda_model.h"
#include "engine/driver/driver.h"

namespace tessera::test {

/// g optimized as the CUDA build does (its pass pipeline, default opt level).
inline graph::Graph optimized_for_cuda(const graph::Graph& g) {
    driver::BuildOptions bo;
    bo.passes = driver::cuda_pass_pipeline({}, bo.opt_level);
    return driver::optimize(g, bo);
}

/// A "cuda" record of the sketch s for task t timed at ms (workload, task,
/// trace and decisions filled; machine, device, flops, threads left default).
inline autotune::TuningRecord gpu_record(const autotune::TuneTask& t, const autotune::GpuSketch& s,
                                         double ms) {
    autotune::TuningRecord r;
    r.workload = t.key;
    r.target = "cuda";
    r.task = t.name;
    r.trace = autotune::generate_gpu(t.func, s).trace();
    r.decisions = s.to_json();
    r.times_ms = {ms};
    return r;
}

}  // namespace tessera::test
