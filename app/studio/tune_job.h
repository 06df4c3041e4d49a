// The studio's Tune job: autotunes the fused kernels of a model
// (engine/autotune), reporting every measured trial as it arrives — plain
// C++, runs on a worker thread through JobRunner.
#pragma once

#include <QString>
#include <functional>

#include "app/studio/build_settings.h"
#include "app/studio/job_runner.h"
#include "engine/autotune/pin.h"
#include "engine/graph/graph.h"

namespace tessera::studio {

/// One measured candidate.
struct TunePoint {
    int trial = 0;          // 1-based, over all tasks (resumed trials included)
    int total = 0;          // the trial budget
    QString task;           // kernel name
    double gflops = 0;      // 0 when the candidate failed (error set)
    double bestGflops = 0;  // the task's best so far
    QString error;
};

struct TuneSummary {
    int tasks = 0;
    int trials = 0;    // recorded in the database, all tasks
    int measured = 0;  // in this job
    bool cancelled = false;
    bool exhausted = false;       // autotune::TuneResult::exhausted
    double latencyMs = 0;         // estimated end to end with the best schedules
    double defaultLatencyMs = 0;  // the same with the default schedules
    QString records;
    int threads = 1;  // the thread count tuned for (BuildSettings::threads)
};

/// What one Tune job covers: every kernel, or ("Tune the rest") only the
/// kernel that runs `node`, with `pins` kept fixed (autotune/pin.h): knob
/// values, or the steps of the kernel's hand schedule.
struct TuneScope {
    QString node;  // empty: all kernels
    autotune::KnobPins pins;
};

/// Tunes the kernels of `graph` as `settings` build them (its graph passes,
/// opt level and thread count, so that Run applies the records) for `trials`
/// measured candidates in all, appending to the database settings.records
/// (resumed when it already holds trials). `onTrial` is called on the worker
/// thread after each trial. Cancelling `context` stops within a second; the
/// records written so far stay valid.
TuneSummary tuneModel(const graph::Graph& graph, const BuildSettings& settings, int trials,
                      const JobContext& context,
                      const std::function<void(const TunePoint&)>& onTrial,
                      const TuneScope& scope = {});

}  // namespace tessera::studio
