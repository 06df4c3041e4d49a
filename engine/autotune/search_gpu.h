// Evolutionary search over the GPU sketch (space_gpu.h), as the CPU tuner
// searches its space: a population seeded from the best "cuda" records of the
// database and random samples, evolved by mutating tile factors (products
// kept equal to the loop extents) and the unroll flag, ranked by the XGBoost
// cost model over the scheduled function's loop-IR features, plus an epsilon
// of random candidates. Measuring is a callback (a device in
// driver/tune_gpu.cpp, a synthetic objective in tests); every trial is
// appended to the database, and a search resumes from what it holds.
#pragma once

#include <functional>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "engine/autotune/cost_model.h"
#include "engine/autotune/database.h"
#include "engine/autotune/space_gpu.h"
#include "engine/autotune/task.h"

namespace tessera::autotune {

/// One measured GPU candidate: run times, or the error that stopped it.
struct GpuTrial {
    std::vector<double> times_ms;
    std::string error;
};

/// Measures a candidate: its sketch and the function the sketch schedules.
/// May throw; an exception is recorded as the trial's error.
using GpuMeasureFn = std::function<GpuTrial(const GpuSketch&, const tir::PrimFunc& scheduled)>;

/// Throws when a scheduled candidate cannot build (the CUDA verifier's
/// thread / shared-memory / register limits); such candidates are dropped
/// before they cost a trial.
using GpuCheckFn = std::function<void(const tir::PrimFunc& scheduled)>;

struct GpuSearchOptions {
    int batch = 8;        // candidates measured per round
    int population = 48;  // evolutionary search population
    int generations = 3;
    double epsilon = 0.2;  // share of random candidates per batch (1 = random search)
    GpuSpaceOptions space;
    GpuCheckFn check;  // may be null
};

/// A task's search state after each trial.
struct GpuSearchState {
    std::string name, key;
    int trials = 0;    // recorded for the task on this machine (resumed ones included)
    int resumed = 0;   // of those, found in the database at the start
    int measured = 0;  // run in this search
    int errors = 0;
    double flops = 0;
    double best_ms = 0;  // 0: nothing measured successfully
    std::string best;    // the best sketch, JSON
    std::string last_error;
};

/// The search of one task. Construction resumes from `db`: the task's
/// "cuda" trials on this machine count, their sketches are never measured
/// again, the good ones seed the population and all of them train `model`
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

private:
    struct Scored;
    bool score(const GpuSketch& s, Scored& out) const;
    std::vector<Scored> propose(int n);

    const TuneTask& m_task;
    Database& m_db;
    CostModel& m_model;
    GpuSearchOptions m_o;
    std::mt19937_64 m_rng;
    std::set<std::string> m_seen;                      // sketches measured (JSON)
    std::vector<std::pair<double, GpuSketch>> m_good;  // (ms, sketch), fastest first
    GpuSearchState m_state;
};

/// A neighbour of `s`: one prime factor of a loop's tile moved to another
/// level of the same loop (the product stays the loop's extent), or the
/// unroll flag flipped; other fields are copied. Within the options' thread
/// limits and generating without errors; `s` itself when no mutation applies.
GpuSketch mutate_gpu(const tir::PrimFunc& func, const GpuSketch& s, std::mt19937_64& rng,
                     const GpuSpaceOptions& o = {});

/// `func` (a fused group's unscheduled kernel) scheduled by the best "cuda"
/// record of its workload (workload_key(func, "cuda")) on this machine; a
/// null PrimFunc when there is none or its sketch no longer generates.
tir::PrimFunc apply_best_gpu(const tir::PrimFunc& func, const Database& db);

}  // namespace tessera::autotune
