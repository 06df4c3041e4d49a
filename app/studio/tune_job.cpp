// tuneModel: driver::optimize + autotune::extract_tasks + autotune::tune, with
// a watcher thread turning the job's cancel flag into the tuner's CancelToken.
#include "app/studio/tune_job.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "engine/autotune/tuner.h"
#include "engine/core/error.h"
#include "engine/driver/driver.h"
#include "engine/driver/tune_gpu.h"

namespace tessera::studio {

namespace {

// Tune ▸ Tune kernels with the CUDA target: driver::tune_gpu on the model's
// "cuda" tasks (as `tessera tune --target cuda`); UserError without a GPU.
TuneSummary tuneOnGpu(const graph::Graph& graph, const BuildSettings& settings, int trials,
                      const JobContext& context,
                      const std::function<void(const TunePoint&)>& onTrial) {
    driver::require_gpu_for_tuning();
    const graph::Graph optimized = driver::optimize(graph, settings.buildOptions());
    const std::vector<autotune::TuneTask> tasks = autotune::extract_tasks(optimized, "cuda", 1);
    autotune::Database db(settings.records.toStdString());
    driver::GpuTuneOptions options;
    options.trials = trials;
    int done = 0;
    const int total = std::max<int>(1, int(tasks.size()) * trials);
    driver::GpuTuneResult result =
        driver::tune_gpu(tasks, db, options, [&](const driver::GpuTaskResult& t) {
            context.throwIfCancelled();
            context.reportProgress(std::min(1.0, double(++done) / total));
            if (!onTrial) return;
            TunePoint point;
            point.trial = done;
            point.total = total;
            point.task = QString::fromStdString(t.name);
            point.gflops = t.best_ms > 0 ? t.flops / (t.best_ms * 1e6) : 0;
            point.bestGflops = point.gflops;
            onTrial(point);
        });
    TuneSummary summary;
    summary.tasks = int(tasks.size());
    summary.trials = done;
    summary.measured = result.measured;
    summary.records = settings.records;
    summary.threads = 1;
    context.reportProgress(1.0);
    return summary;
}

}  // namespace

TuneSummary tuneModel(const graph::Graph& graph, const BuildSettings& settings, int trials,
                      const JobContext& context,
                      const std::function<void(const TunePoint&)>& onTrial,
                      const TuneScope& scope) {
    TS_USER_CHECK(trials > 0) << "tune: the trial budget must be positive, got " << trials;
    const QString records = settings.records;
    TS_USER_CHECK(!records.isEmpty()) << "tune: no tuning database path";
    context.reportProgress(0.0);
    TS_USER_CHECK(scope.node.isEmpty() || settings.target != "cuda")
        << "tune: pinned knobs are for CPU kernels (choose the CPU target)";
    if (settings.target == "cuda") return tuneOnGpu(graph, settings, trials, context, onTrial);
    // The graph passes, opt level and thread count Run builds with: records
    // measured otherwise would not apply there.
    const graph::Graph optimized = driver::optimize(graph, settings.buildOptions());
    std::vector<autotune::TuneTask> tasks;
    if (scope.node.isEmpty()) {
        tasks = autotune::extract_tasks(optimized, "llvm", settings.threads);
    } else {  // "Tune the rest": one kernel, its pinned knobs or steps kept
        tasks = {
            autotune::task_of_node(optimized, scope.node.toStdString(), "llvm", settings.threads)};
        if (!scope.pins.knobs.empty() || !scope.pins.steps.empty())
            autotune::pin_task(tasks[0], scope.pins);
    }
    context.throwIfCancelled();

    autotune::TuneOptions options;
    options.trials = trials;
    options.threads = settings.threads;
    options.measure.opt_level = settings.optLevel;
    options.batch = std::clamp(trials / 4, 1, 8);
    autotune::Database db(records.toStdString());

    autotune::CancelToken cancel;
    std::atomic<bool> finished{false};
    std::thread watcher([&]() {
        while (!finished.load()) {
            if (context.isCancelled()) cancel.cancel();
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
    });
    auto progress = [&](const autotune::Progress& p) {
        if (p.total > 0) context.reportProgress(std::min(1.0, double(p.trials) / p.total));
        if (p.task < 0 || db.records().empty() || !onTrial) return;
        const autotune::TuningRecord& r = db.records().back();
        if (r.baseline) return;
        TunePoint point;
        point.trial = p.trials;
        point.total = p.total;
        point.task = QString::fromStdString(r.task);
        const double ms = r.ok() ? r.median_ms() : 0;
        point.gflops = ms > 0 ? r.flops / (ms * 1e6) : 0;
        point.bestGflops = p.tasks[size_t(p.task)].best_gflops();
        point.error = QString::fromStdString(r.error);
        onTrial(point);
    };
    autotune::TuneResult result;
    try {
        result = autotune::tune(tasks, db, options, progress, &cancel);
    } catch (...) {
        finished = true;
        watcher.join();
        throw;
    }
    finished = true;
    watcher.join();

    TuneSummary summary;
    summary.tasks = int(tasks.size());
    summary.trials = result.final.trials;
    summary.measured = result.measured;
    summary.cancelled = result.cancelled;
    summary.exhausted = result.exhausted;
    summary.latencyMs = result.final.latency_ms;
    summary.defaultLatencyMs = result.final.default_latency_ms;
    summary.records = records;
    summary.threads = settings.threads;
    context.reportProgress(1.0);
    return summary;
}

}  // namespace tessera::studio
