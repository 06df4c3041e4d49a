// The tuning loop: a task scheduler spreading the trial budget over tasks by
// weight and recent gains, and per task an evolutionary search over the
// design space guided by the XGBoost cost model, measuring the most
// promising candidates (plus an epsilon of random ones) and appending every
// measurement to the database. Resumes from the database: trials already
// recorded for a task count toward the budget and seed the search.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "engine/autotune/database.h"
#include "engine/autotune/measure.h"
#include "engine/autotune/search_defaults.h"
#include "engine/autotune/space.h"
#include "engine/autotune/task.h"

namespace tessera::autotune {

struct TuneOptions {
    int trials = 64;           // total measured candidates over all tasks (recorded ones included)
    int threads = 1;           // threads the kernels run on (1 = no parallel loops)
    int batch = kSearchBatch;  // candidates measured per round of one task
    int population = kSearchPopulation;  // evolutionary search population
    int generations = kSearchGenerations;
    double epsilon = kSearchEpsilon;  // share of random candidates per batch
    uint64_t seed = 1;
    /// At the end, each task measured in this session re-measures its
    /// `confirm_top` fastest candidates and the default, alternately, in
    /// `confirm_rounds` rounds, and records each one's median of round medians
    /// as a confirmed record (which best() prefers). 0 = off.
    int confirm_top = kConfirmTop;
    int confirm_rounds = kConfirmRounds;
    MeasureOptions measure;
};

struct TaskProgress {
    std::string name, key, kind;
    int weight = 1;
    int trials = 0;  // recorded for this task (resumed ones included)
    int errors = 0;
    double flops = 0;
    double default_ms = 0;  // the default schedule
    double best_ms = 0;     // the best tuned candidate (0 = none yet)
    double best_gflops() const { return best_ms > 0 ? flops / (best_ms * 1e6) : 0; }
    double default_gflops() const { return default_ms > 0 ? flops / (default_ms * 1e6) : 0; }
};

struct Progress {
    int trials = 0;   // recorded trials, all tasks
    int total = 0;    // the budget
    int resumed = 0;  // trials found in the database at the start
    int task = -1;    // the task just measured
    std::vector<TaskProgress> tasks;
    double latency_ms = 0;          // estimated end to end: sum weight * min(best, default)
    double default_latency_ms = 0;  // the same with default schedules
    /// Cost-model ranking quality: Spearman correlation of the predictions made
    /// before a batch was measured with its measured throughputs, mean of the
    /// last 16 batches.
    double rank_correlation = 0;
    int rank_samples = 0;
    double elapsed_s = 0;
    std::string last_error;  // error of the trial just measured, if any
};

struct TuneResult {
    Progress final;
    int measured = 0;  // trials run in this session
    bool cancelled = false;
    /// Stopped before the budget: every task's space had no candidate left
    /// that was not measured already (pinned steps or knobs can leave few).
    bool exhausted = false;
    double trials_per_minute = 0;
};

/// The design space of a task: the free-form sketches for kernels running on
/// `threads`, and the knobbed-default rule of its anchor node (which `t`
/// must outlive the options). Tasks without an anchor get the sketches only.
SpaceOptions space_options(const TuneTask& t, int threads);

/// Tunes `tasks`, appending to `db`. `progress` (may be null) is called after
/// each trial and once at the start. `cancel` (may be null) stops within a
/// second; the records written so far stay valid.
TuneResult tune(const std::vector<TuneTask>& tasks, Database& db, const TuneOptions& options,
                const std::function<void(const Progress&)>& progress = nullptr,
                const CancelToken* cancel = nullptr);

/// `func` with the best record of its workload applied; `func` itself when
/// the database has none or the trace no longer replays. Replays the trace
/// only: a knobbed-default record loses its operand packing here (use the
/// overload with the anchor node). `opt_level` >= 0: only records measured at
/// that LLVM level (-1: any).
tir::PrimFunc apply_best(const tir::PrimFunc& func, const Database& db,
                         const std::string& target = "llvm", bool* applied = nullptr,
                         int opt_level = -1);

/// `func` (a fused group's unscheduled kernel) with the best record of its
/// workload measured on this machine applied: a knobbed-default record
/// rebuilds topi::schedule_cpu_default(func, anchor, cpu with its knob
/// values), packing and layout steps included; a free-form one replays its
/// trace. `func` itself when there is none, when it was tuned for another
/// thread count than cpu.threads, or when it no longer applies (a knob value
/// that is not a legal choice any more, a trace that does not replay).
/// `opt_level` >= 0: only records measured at that LLVM level (a build at O1
/// does not apply what was fastest at O3); -1: any. When the database holds
/// records of the workload but none applies, `skipped` (may be null) says why
/// (Database::why_not_applied, or the replay error).
tir::PrimFunc apply_best(const tir::PrimFunc& func, const graph::Node& anchor,
                         const topi::CpuScheduleOptions& cpu, const Database& db,
                         const std::string& target = "llvm", bool* applied = nullptr,
                         int opt_level = -1, std::string* skipped = nullptr);

/// What apply_best applies, with the trace that rebuilds it from `func`
/// (a knobbed record's knob values expanded into the default rule's steps);
/// nothing when no record applies (`skipped` says why).
std::optional<Realized> best_schedule(const tir::PrimFunc& func, const graph::Node& anchor,
                                      const topi::CpuScheduleOptions& cpu, const Database& db,
                                      const std::string& target = "llvm", int opt_level = -1,
                                      std::string* skipped = nullptr);

}  // namespace tessera::autotune
