// The multi-task GPU tuning loop (search_gpu.h, tune_gpu_tasks): the shared
// task scheduler spreading rounds over the tasks' searches, the default GPU
// schedule measured as each task's baseline, and the end-of-run
// confirmation of each task's finalists, as the CPU tuner (tuner.cpp) does.
#include <algorithm>
#include <chrono>
#include <memory>
#include <set>

#include "engine/autotune/search_gpu.h"
#include "engine/autotune/task_scheduler.h"
#include "engine/core/error.h"
#include "engine/topi/gpu/schedule_gpu.h"

namespace tessera::autotune {

namespace {

double now_epoch() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

// A measurement through the callback, exceptions and empty timings as errors.
GpuTrial measure_safely(const GpuTaskMeasureFn& measure, size_t task, const tir::PrimFunc& f) {
    GpuTrial t;
    try {
        t = measure(task, f);
        if (t.error.empty() && t.times_ms.empty()) t.error = "no time measured";
    } catch (const std::exception& e) {
        t = GpuTrial{{}, e.what()};
    }
    if (!t.error.empty()) t.times_ms.clear();
    return t;
}

// A "cuda" record of task `t` with what every record of the loop holds.
TuningRecord cuda_record(const TuneTask& t, const std::string& device) {
    TuningRecord r;
    r.workload = t.key;
    r.target = "cuda";
    r.task = t.name;
    r.trace.workload = t.key;
    r.flops = t.flops;
    r.machine = machine_fingerprint();
    r.device = device;
    r.threads = 1;
    return r;
}

// The default GPU schedule and the fastest distinct sketches of `search`,
// re-measured alternately round by round (search.h's confirm_rounds), each
// recorded as a confirmed record.
void confirm(const TuneTask& t, size_t index, GpuSearch& search, Database& db,
             const GpuTuneLoopOptions& o, const GpuTaskMeasureFn& measure) {
    const std::string& device = o.search.device;
    std::vector<Finalist> fin = pick_finalists(
        search.search(), search.space(), {"", topi::schedule_gpu_default(t.func), {}, {}, ""},
        o.confirm_top);
    if (fin.size() < 2) return;  // nothing to choose between
    confirm_rounds(fin, o.confirm_rounds, [&](size_t i) -> std::optional<Trial> {
        return measure_safely(measure, index, fin[i].func);
    });
    for (const Finalist& f : fin) {
        TuningRecord r = cuda_record(t, device);
        if (!f.decisions.empty()) {
            r.trace = f.trace;
            r.trace.workload = t.key;
        }
        r.decisions = f.decisions;
        r.times_ms = f.error.empty() ? f.medians : std::vector<double>{};
        r.error = f.error;
        r.timestamp = now_epoch();
        r.confirmed = true;
        db.append(r);
    }
    GpuSearchState& st = search.state();
    const TuningRecord* best = best_gpu_record(db, t.key, device);
    if (best && best->confirmed) {
        st.best_ms = best->median_ms();
        st.best = best->decisions == "[]" ? "" : best->decisions;
        st.confirmed = true;
    }
}

}  // namespace

GpuTuneLoopResult tune_gpu_tasks(const std::vector<const TuneTask*>& tasks, Database& db,
                                 const GpuTuneLoopOptions& o, const GpuTaskMeasureFn& measure,
                                 const std::function<void(size_t, const GpuSearchState&)>& progress) {
    TS_USER_CHECK(o.trials >= 0) << "GPU tuning: trials must be >= 0";
    TS_USER_CHECK(o.search.batch >= 1) << "GPU tuning: batch must be >= 1";
    GpuTuneLoopResult result;
    CostModel model;  // shared: its labels are relative to each task's best
    std::vector<std::unique_ptr<GpuSearch>> searches;
    std::vector<ScheduledTask> sched(tasks.size());
    std::vector<bool> baselined(tasks.size(), false);
    int total = 0;
    for (size_t i = 0; i < tasks.size(); ++i) {
        searches.push_back(std::make_unique<GpuSearch>(*tasks[i], db, model, o.search, o.seed + i));
        searches.back()->state().weight = tasks[i]->weight;
        sched[i].weight = tasks[i]->weight;
        total += searches.back()->state().trials;
    }
    auto all_exhausted = [&] {
        return std::all_of(sched.begin(), sched.end(),
                           [](const ScheduledTask& s) { return s.gain < 0; });
    };
    while (!tasks.empty() && total < o.trials && !all_exhausted()) {
        for (size_t i = 0; i < tasks.size(); ++i) {
            const GpuSearchState& st = searches[i]->state();
            sched[i].trials = st.trials;
            sched[i].best_ms = st.best_ms;
            sched[i].default_ms = st.default_ms;
        }
        const size_t i = size_t(pick_task(sched));
        const TuneTask& t = *tasks[i];
        GpuSearch& search = *searches[i];
        if (!baselined[i]) {  // the default GPU schedule: what tuning must beat
            baselined[i] = true;
            TuningRecord r = cuda_record(t, o.search.device);
            GpuTrial trial = measure_safely(measure, i, topi::schedule_gpu_default(t.func));
            r.times_ms = trial.times_ms;
            r.error = trial.error;
            r.timestamp = now_epoch();
            r.baseline = true;
            db.append(r);
            if (r.ok()) search.state().default_ms = r.median_ms();
        }
        const double before = search.state().best_ms;
        auto wrapped = [&](const GpuSketch&, const tir::PrimFunc& f) { return measure(i, f); };
        const int n = search.step(std::min(o.search.batch, o.trials - total), wrapped,
                                  [&](const GpuSearchState& st) {
                                      ++total;
                                      ++result.measured;
                                      if (progress) progress(i, st);
                                  });
        sched[i].gain = n == 0 ? -1 : round_gain(before, search.state().best_ms);
    }
    if (o.confirm_top > 0 && o.confirm_rounds > 0)
        for (size_t i = 0; i < tasks.size(); ++i)
            if (searches[i]->state().measured > 0) {
                confirm(*tasks[i], i, *searches[i], db, o, measure);
                if (progress) progress(i, searches[i]->state());
            }
    for (const auto& s : searches) result.tasks.push_back(s->state());
    return result;
}

}  // namespace tessera::autotune
