// Evolutionary search over the GPU sketch (space_gpu.h), as the CPU tuner
// searches its space: a population seeded from the best "cuda" records of the
// database and random samples, evolved by mutating tile factors (products
// kept equal to the loop extents) and the unroll flag, ranked by the XGBoost
// cost model over the scheduled function's loop-IR features, plus an epsilon
// of random candidates. Measuring is a callback (a device in
// driver/tune_gpu.cpp, a synthetic objective in tests); every trial is
// appended to the database, and a search resumes from what it holds. And the
// multi-task loop: the shared task scheduler, baselines, the end-of-run
// confirmation; records keyed to the GPU they were measured on.
#pragma once

#include <functional>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "engine/autotune/cost_model.h"
#include "engine/autotune/database.h"
#include "engine/autotune/search.h"
#include "engine/autotune/search_defaults.h"
#include "engine/autotune/space_gpu.h"
#include "engine/autotune/task.h"

namespace tessera::autotune {

/// One measured GPU candidate: run times, or the error that stopped it.
using GpuTrial = Trial;

/// Measures a candidate: its sketch and the function the sketch schedules.
/// May throw; an exception is recorded as the trial's error.
using GpuMeasureFn = std::function<GpuTrial(const GpuSketch&, const tir::PrimFunc& scheduled)>;

/// Throws when a scheduled candidate cannot build (the CUDA verifier's
/// thread / shared-memory / register limits); such candidates are dropped
/// before they cost a trial.
using GpuCheckFn = std::function<void(const tir::PrimFunc& scheduled)>;

struct GpuSearchOptions {
    int batch = kSearchBatch;            // candidates measured per round
    int population = kSearchPopulation;  // evolutionary search population
    int generations = kSearchGenerations;
    double epsilon = kSearchEpsilon;     // share of random candidates per batch (1 = random search)
    GpuSpaceOptions space;
    GpuCheckFn check;  // may be null
    /// The GPU measured on (gpu_fingerprint()), written in every record; a
    /// search resumes from the records that apply to it (gpu_record_applies).
    std::string device;
};

/// The GPU design space of one kernel as the search driver sees it
/// (search.h): decisions are GpuSketch JSON; a sketch applies when it
/// generates and passes `check` (may be null). `func` must outlive it.
class GpuDesignSpace final : public DesignSpace {
public:
    GpuDesignSpace(const tir::PrimFunc& func, const GpuSpaceOptions& o, GpuCheckFn check)
        : m_func(func), m_o(o), m_check(std::move(check)) {}
    std::optional<SpacePoint> realize(const std::string& decisions) const override;
    std::optional<std::string> sample(std::mt19937_64& rng) const override;
    std::string mutate(const std::string& decisions, std::mt19937_64& rng) const override;

private:
    const tir::PrimFunc& m_func;
    GpuSpaceOptions m_o;
    GpuCheckFn m_check;
};

/// A task's search state after each trial.
struct GpuSearchState {
    std::string name, key;
    int trials = 0;    // recorded for the task on this GPU (resumed ones included)
    int resumed = 0;   // of those, found in the database at the start
    int measured = 0;  // run in this search
    int errors = 0;
    double flops = 0;
    double best_ms = 0;  // 0: nothing measured successfully
    /// The best sketch, JSON; after a confirmation, the confirmed winner's
    /// (empty when the default GPU schedule won).
    std::string best;
    std::string last_error;
    int weight = 1;          // the task's occurrences in the model
    double default_ms = 0;   // the default GPU schedule (0: not measured in this session)
    bool confirmed = false;  // best_ms / best are from the end-of-run confirmation
};

/// The search of one task. Construction resumes from `db`: the task's
/// "cuda" trials for the GPU `o.device` count (gpu_record_applies), their
/// sketches are never measured again, the good ones seed the population and
/// all of them train `model`
/// (shared between tasks, as its labels are relative to each task's best).
class GpuSearch {
public:
    GpuSearch(const TuneTask& task, Database& db, CostModel& model, const GpuSearchOptions& o,
              uint64_t seed);

    /// Proposes and measures up to `n` new candidates, appending each trial
    /// to the database and retraining the model; returns how many were
    /// measured (0: no new candidate was found). `after` (may be null) gets
    /// the state after each trial.
    int step(int n, const GpuMeasureFn& measure,
             const std::function<void(const GpuSearchState&)>& after = nullptr);

    /// Steps until the task has `budget` recorded trials (resumed ones
    /// count) or no new candidate is found.
    void run(int budget, const GpuMeasureFn& measure,
             const std::function<void(const GpuSearchState&)>& after = nullptr);

    const GpuSearchState& state() const { return m_state; }
    GpuSearchState& state() { return m_state; }
    /// The search driver over the task's GPU design space.
    const EvolutionarySearch& search() const { return m_search; }
    const GpuDesignSpace& space() const { return m_space; }

private:
    const TuneTask& m_task;
    Database& m_db;
    CostModel& m_model;
    GpuSearchOptions m_o;
    std::mt19937_64 m_rng;
    GpuDesignSpace m_space;
    EvolutionarySearch m_search;
    GpuSearchState m_state;
};

/// A neighbour of `s`: one prime factor of a loop's tile moved to another
/// level of the same loop (the product stays the loop's extent), or the
/// unroll flag flipped; other fields are copied. Within the options' thread
/// limits and generating without errors; `s` itself when no mutation applies.
GpuSketch mutate_gpu(const tir::PrimFunc& func, const GpuSketch& s, std::mt19937_64& rng,
                     const GpuSpaceOptions& o = {});

/// "<name>/sm_<major><minor>" of CUDA device 0, e.g. "NVIDIA H100 80GB
/// HBM3/sm_90": the GPU "cuda" records are keyed to. Empty when no device is
/// available.
std::string gpu_fingerprint();

/// Whether a "cuda" record may apply on (or resume a search for) the GPU
/// `device`: a record naming a GPU only on that GPU (or on any when `device`
/// is empty: unknown, no device to check against); a record naming none
/// (written before devices were recorded) when it was measured on this
/// machine (Database::is_local), the GPU unknown.
bool gpu_record_applies(const TuningRecord& r, const std::string& device);

/// The record that applies to `workload` ("cuda" target) on the GPU
/// `device`: among the successful records gpu_record_applies accepts, those
/// naming `device` itself first, then confirmed ones (end-of-run
/// re-measurements), then the fastest; null when none. A record with empty
/// decisions stands for the default GPU schedule.
const TuningRecord* best_gpu_record(const Database& db, const std::string& workload,
                                    const std::string& device);

/// `func` (a fused group's unscheduled kernel) scheduled by best_gpu_record
/// of its workload (workload_key(func, "cuda")) for the GPU `device` (null:
/// this machine's, gpu_fingerprint()); a null PrimFunc when there is none,
/// when the default GPU schedule won (empty decisions), or when its sketch
/// no longer generates.
tir::PrimFunc apply_best_gpu(const tir::PrimFunc& func, const Database& db,
                             const std::string* device = nullptr);

/// Measures a scheduled function of task `task` (an index into the tasks
/// tune_gpu_tasks was given): a candidate or the default GPU schedule. May
/// throw; an exception is recorded as the trial's error.
using GpuTaskMeasureFn = std::function<GpuTrial(size_t task, const tir::PrimFunc& scheduled)>;

struct GpuTuneLoopOptions {
    int trials = 64;  // over all tasks, their recorded trials included (resume)
    uint64_t seed = 1;
    GpuSearchOptions search;  // search.device: the GPU, written in every record
    /// At the end, each task measured in this session re-measures the
    /// default GPU schedule and its `confirm_top` fastest sketches in
    /// `confirm_rounds` rounds (order rotated each round) and records each
    /// one's per-round medians as a confirmed record, which
    /// best_gpu_record prefers. 0 = off.
    int confirm_top = kConfirmTop;
    int confirm_rounds = kConfirmRounds;
};

struct GpuTuneLoopResult {
    std::vector<GpuSearchState> tasks;  // as given
    int measured = 0;                   // trials run in this session (no baselines, no confirmations)
};

/// GPU tuning of `tasks` (each with a GPU-sketch block) as the CPU tuner
/// tunes: one GpuSearch per task (resumed from `db`, one shared cost
/// model), rounds of `search.batch` trials given to the task that
/// pick_task (task_scheduler.h) chooses by weight, latency and recent gain
/// until `trials` are recorded over all tasks or every space is exhausted;
/// a task's default GPU schedule measured (a baseline record) when it is
/// first chosen; then the confirmation. `progress` (may be null) gets the
/// index and state of the task after each trial and confirmation.
GpuTuneLoopResult tune_gpu_tasks(
    const std::vector<const TuneTask*>& tasks, Database& db, const GpuTuneLoopOptions& options,
    const GpuTaskMeasureFn& measure,
    const std::function<void(size_t, const GpuSearchState&)>& progress = nullptr);

}  // namespace tessera::autotune
