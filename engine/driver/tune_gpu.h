// GPU autotuning (`tessera tune --target cuda`): per task, random samples of
// the GPU sketch (autotune/space_gpu.h) compiled with NVRTC and timed on the
// device with events, each appended to the database as a "cuda" record.
#pragma once

#include <array>
#include <functional>
#include <string>
#include <vector>

#include "engine/autotune/database.h"
#include "engine/autotune/task.h"
#include "engine/autotune/space_gpu.h"

namespace tessera::driver {

struct GpuTuneOptions {
    int trials = 64;  // measured candidates over all tasks
    int repeat = 10;  // timed launches per candidate (after one warm-up)
    uint64_t seed = 1;
};

struct GpuTaskResult {
    std::string name, key;
    int trials = 0, errors = 0;
    double flops = 0;
    double best_ms = 0;  // 0: nothing measured
    std::string best;    // the best sketch, JSON
};

struct GpuTuneResult {
    std::vector<GpuTaskResult> tasks;  // tunable tasks (one reduction block)
    int skipped = 0;                   // tasks the GPU sketch does not apply to
    int measured = 0;
};

/// UserError "no CUDA device is available: GPU tuning measures on the
/// device (...)" when no driver or device is present; also without CUDA support.
void require_gpu_for_tuning();

/// The GPU sketch applied to `func` and compiled to PTX for `arch` (verifier
/// limits, then NVRTC): what a trial measures. Needs no device. Throws
/// UserError / ScheduleError when the candidate does not build.
struct GpuCandidate {
    tir::PrimFunc func;  // the scheduled function
    std::string ptx, source;
    std::vector<std::string> kernels;  // launched in order
    std::vector<std::array<int64_t, 3>> grids, blocks;
    std::vector<int64_t> shared_bytes;
    std::vector<std::vector<int>> args;  // per kernel: indices into func's params
};
GpuCandidate build_gpu_candidate(const tir::PrimFunc& func, const autotune::GpuSketch& sketch,
                                 const std::string& arch);

/// Tunes the tasks on the device (require_gpu_for_tuning first): spreads
/// `trials` evenly over the tunable tasks, checks each task's first good
/// candidate against the interpreter (small tasks), and appends every trial
/// to `db` (target "cuda", decisions = the sketch). `progress` (may be
/// null) gets each task's state after each trial.
GpuTuneResult tune_gpu(const std::vector<autotune::TuneTask>& tasks, autotune::Database& db,
                       const GpuTuneOptions& options,
                       const std::function<void(const GpuTaskResult&)>& progress = nullptr);

}  // namespace tessera::driver
