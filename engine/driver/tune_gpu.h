// GPU autotuning (`tessera tune --target cuda`): per task, the evolutionary
// GPU-sketch search under the cost model (autotune/search_gpu.h), each
// candidate compiled with NVRTC and timed on the device with events, each
// trial appended to the database as a "cuda" record; resumes from it. And the
// CUDA build with the best "cuda" record per task applied.
#pragma once

#include <array>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/autotune/database.h"
#include "engine/autotune/search_gpu.h"
#include "engine/autotune/space_gpu.h"
#include "engine/autotune/task.h"
#include "engine/driver/cuda_model.h"
#include "engine/driver/gpu_measure_worker.h"

namespace tessera::codegen {
struct CudaModel;
}

namespace tessera::driver {

struct GpuTuneOptions {
    int trials = 64;  // measured candidates over all tasks
    int repeat = 10;  // timed launches per candidate (after one warm-up)
    uint64_t seed = 1;
    /// Batch, population, generations, epsilon, space limits; a null
    /// `check` becomes check_gpu_candidate.
    autotune::GpuSearchOptions search;
    /// End-of-run confirmation (autotune::GpuTuneLoopOptions): the default
    /// GPU schedule and the `confirm_top` fastest sketches of each task
    /// re-measured in `confirm_rounds` rotating rounds. 0 = off.
    int confirm_top = 3;
    int confirm_rounds = 3;
};

struct GpuTaskResult {
    std::string name, key;
    int trials = 0, errors = 0;  // recorded, resumed ones included
    int resumed = 0;             // found in the database at the start
    int weight = 1;              // occurrences in the model
    double flops = 0;
    double best_ms = 0;     // 0: nothing measured
    double default_ms = 0;  // the default GPU schedule (0: not measured in this session)
    std::string best;       // the best sketch, JSON (empty: the default schedule won)
    bool confirmed = false; // best_ms / best from the end-of-run confirmation
};

struct GpuTuneResult {
    std::vector<GpuTaskResult> tasks;  // tunable tasks (one reduction block)
    int skipped = 0;                   // tasks the GPU sketch does not apply to
    int measured = 0;                  // trials run in this session
    /// Trials measured in a worker process (gpu_measure_worker.h), where a
    /// faulting candidate fails alone; false: in this process.
    bool isolated = false;
};

/// UserError "no CUDA device is available: GPU tuning measures on the
/// device (...)" when no driver or device is present; also without CUDA support.
void require_gpu_for_tuning();

/// The GPU sketch applied to `func` and compiled to PTX for `arch` (verifier
/// limits, then NVRTC): what a trial measures. Needs no device. Throws
/// UserError / ScheduleError when the candidate does not build.
/// Its launches (PTX, kernels, shapes, arguments: params, then workspaces)
/// are the GpuLaunchPlan a trial measures.
struct GpuCandidate : GpuLaunchPlan {
    tir::PrimFunc func;  // the scheduled function
    std::string source;  // its CUDA C
};
GpuCandidate build_gpu_candidate(const tir::PrimFunc& func, const autotune::GpuSketch& sketch,
                                 const std::string& arch);

/// Throws UserError when a scheduled candidate exceeds the CUDA verifier's
/// limits (lower_cuda: threads, shared memory, registers; no NVRTC, no device).
void check_gpu_candidate(const tir::PrimFunc& scheduled);

/// Tunes the tasks on the device (require_gpu_for_tuning first) with
/// autotune::tune_gpu_tasks: `trials` spread over the tunable tasks by the
/// shared task scheduler (weight x latency x recent gain; trials already in
/// `db` count: an interrupted session resumes), each candidate checked
/// against the interpreter (small tasks), every trial appended to `db`
/// (target "cuda", decisions = the sketch, device = autotune::gpu_fingerprint()),
/// the default GPU schedule recorded as each task's baseline, then the
/// confirmed records. `progress` (may be null) gets a task's state after
/// each trial and after its confirmation.
GpuTuneResult tune_gpu(const std::vector<autotune::TuneTask>& tasks, autotune::Database& db,
                       const GpuTuneOptions& options,
                       const std::function<void(const GpuTaskResult&)>& progress = nullptr);

/// What applying "cuda" records to a CUDA build did.
struct GpuRecordsUse {
    int kernels = 0;                         // fused groups compiled
    int tuned = 0;                           // of those, scheduled by a record
    std::vector<std::string> tuned_kernels;  // their function names
    /// The GPU the records were chosen for (unset: this machine's,
    /// autotune::gpu_fingerprint(); empty: unknown, no device).
    std::optional<std::string> device;
};

/// The schedule step of build_cuda that applies the best "cuda" record of
/// each fused group's workload for the GPU `device` (see
/// build_cuda_with_records) and counts what it did into `use` (may be null).
/// `db` and `use` must outlive the returned function.
GpuScheduleFn gpu_record_schedule(const autotune::Database& db, const std::string& device,
                                  GpuRecordsUse* use);

/// build_cuda of the optimized graph `g` with the best "cuda" record
/// of each fused group's workload applied (autotune::best_gpu_record for the
/// GPU `device`, null: this machine's; the key tune_gpu records:
/// workload_key of the group's unscheduled function, target "cuda"), the
/// default GPU schedule where none applies. Records measured on another GPU
/// are not applied; records naming no GPU (older ones) are, when measured on
/// this machine; without a device (empty fingerprint) records of any GPU
/// apply. Needs no device; UserError without CUDA support.
std::shared_ptr<CudaModel> build_cuda_with_records(const graph::Graph& g,
                                                   const autotune::Database& db,
                                                   GpuRecordsUse* use = nullptr,
                                                   const std::string* device = nullptr);

/// A line for people: "tuning records 'r.jsonl': 1 of 3 kernels tuned, 2 use
/// the default GPU schedule (no record)", then a line each where "cuda"
/// records of another GPU are not applied ("... 4 of 9 "cuda" records were
/// measured on another GPU (<fingerprint>) and are not applied; this GPU is
/// <fingerprint>"), where records naming no GPU apply, where no device was
/// there to check against, plus foreign_records_note's line.
std::string gpu_records_note(const autotune::Database& db, const GpuRecordsUse& use);

}  // namespace tessera::driver
