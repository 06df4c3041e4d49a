// Task scheduler and evolutionary search (see tuner.h).
#include "engine/autotune/tuner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <set>

#include "engine/autotune/cost_model.h"
#include "engine/autotune/features.h"
#include "engine/autotune/space.h"
#include "engine/autotune/task_scheduler.h"
#include "engine/codegen/llvm/llvm_codegen.h"
#include "engine/core/error.h"
#include "engine/schedule/schedule.h"

namespace tessera::autotune {

namespace {

using Clock = std::chrono::steady_clock;

double now_epoch() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

struct TaskState {
    const TuneTask* task = nullptr;
    std::unique_ptr<TaskMeasurer> measurer;
    std::unique_ptr<SpaceOptions> options;  // with the task's knobbed-default rule
    std::unique_ptr<DesignSpace> space;     // over `options` (after the task's pinned steps)
    std::unique_ptr<EvolutionarySearch> search;
    double best_before_round = 0;
    double gain = 1;   // relative improvement of the last round
    int measured = 0;  // trials run in this session
    TaskProgress p;
};

}  // namespace

SpaceOptions space_options(const TuneTask& t, int threads) {
    SpaceOptions o;
    o.threads = threads;
    o.vector_lanes = codegen::host_vector_lanes();
    if (!t.anchor.op.empty() && t.pinned.steps.empty()) {  // tasks from extract_tasks
        o.anchor = &t.anchor;
        o.cpu = t.cpu;
        o.knobs = t.knobs;
        o.knob_share = t.knob_share;
    }
    return o;
}

namespace {

class Tuner {
public:
    Tuner(const std::vector<TuneTask>& tasks, Database& db, const TuneOptions& o,
          const std::function<void(const Progress&)>& cb, const CancelToken* cancel)
        : m_db(db), m_o(o), m_cb(cb), m_cancel(cancel), m_rng(o.seed) {
        m_o.measure.threads = o.threads;
        const SearchParams params{o.population, o.generations, o.epsilon};
        for (const TuneTask& t : tasks) {
            TaskState s;
            s.task = &t;
            s.options = std::make_unique<SpaceOptions>(space_options(t, o.threads));
            s.space = cpu_design_space(t.func, t.pinned, *s.options);
            s.search = std::make_unique<EvolutionarySearch>(*s.space, m_model, params);
            s.p.name = t.name;
            s.p.key = t.key;
            s.p.kind = task_kind_name(t.kind);
            s.p.weight = t.weight;
            s.p.flops = t.flops;
            m_tasks.push_back(std::move(s));
        }
    }

    TuneResult run() {
        auto t0 = Clock::now();
        resume();
        m_progress.total = m_o.trials;
        m_progress.resumed = m_progress.trials;
        report(-1, "");
        int measured = 0;
        bool exhausted = false;
        while (m_progress.trials < m_o.trials && !cancelled()) {
            TaskState& t = m_tasks[size_t(pick_task())];
            ensure_measurer(t);
            if (cancelled()) break;
            const int n = std::min(m_o.batch, m_o.trials - m_progress.trials);
            std::vector<SpacePoint> batch = t.search->propose(n, m_rng, m_cancel);
            if (batch.empty()) {  // the space is exhausted: give its budget to others
                t.gain = -1;
                if (std::all_of(m_tasks.begin(), m_tasks.end(),
                                [](const TaskState& s) { return s.gain < 0; })) {
                    exhausted = true;
                    break;
                }
                continue;
            }
            measured += measure(t, batch);
        }
        if (m_o.confirm_top > 0 && m_o.confirm_rounds > 0)
            for (TaskState& t : m_tasks)
                if (t.measured > 0 && !cancelled()) confirm(t);
        TuneResult r;
        r.final = m_progress;
        r.measured = measured;
        r.cancelled = cancelled();
        r.exhausted = exhausted;
        double minutes = std::chrono::duration<double>(Clock::now() - t0).count() / 60.0;
        r.trials_per_minute = minutes > 0 ? measured / minutes : 0;
        return r;
    }

private:
    Database& m_db;
    TuneOptions m_o;
    std::function<void(const Progress&)> m_cb;
    const CancelToken* m_cancel;
    std::mt19937_64 m_rng;
    std::vector<TaskState> m_tasks;
    CostModel m_model;
    std::vector<double> m_batch_corr;  // per batch: Spearman of predictions made before it ran
    int m_rank_samples = 0;
    Progress m_progress;
    Clock::time_point m_start = Clock::now();

    bool cancelled() const { return m_cancel && m_cancel->cancelled(); }

    // Trials recorded earlier count toward the budget and train the model.
    void resume() {
        for (TaskState& t : m_tasks) {
            for (const TuningRecord& r : m_db.records()) {
                if (r.workload != t.task->key) continue;
                if (!Database::is_local(r)) continue;                // measured on another machine
                if (r.opt_level != m_o.measure.opt_level) continue;  // built at another LLVM level
                if (r.threads >= 0 && r.threads != m_o.threads) continue;  // another thread count
                if (r.baseline) {  // re-measured when the task runs again (defaults change)
                    if (r.ok()) t.p.default_ms = r.median_ms();  // until then, the latest
                    continue;
                }
                if (r.confirmed) continue;  // re-measurements, not trials
                // A search after pinned steps reads only its own records: those
                // whose decisions give, in its space, exactly the recorded trace
                // (records of an unpinned search of the same kernel would
                // otherwise count as its trials and seed it with foreign points).
                std::optional<SpacePoint> own;
                if (!t.task->pinned.steps.empty()) {
                    if (r.decisions.empty()) continue;
                    own = t.space->realize(r.decisions);
                    if (!own || own->trace.steps != r.trace.steps) continue;
                }
                t.p.trials++;
                m_progress.trials++;
                if (!r.ok()) t.p.errors++;
                if (r.ok() && (t.p.best_ms == 0 || r.median_ms() < t.p.best_ms))
                    t.p.best_ms = r.median_ms();
                if (r.decisions.empty()) continue;
                std::optional<SpacePoint> p = own ? own : t.space->realize(r.decisions);
                if (!p) continue;
                const double ms = r.ok() ? r.median_ms() : -1;
                t.search->measured(p->key, ms);
                if (m_model.size() < 4000) m_model.add(p->features, t.task->key, ms);
            }
            // A confirmed record is what applies: report its robust median.
            const TuningRecord* best =
                m_db.best(t.task->key, "llvm", m_o.measure.opt_level, m_o.threads);
            if (best && best->confirmed) t.p.best_ms = best->median_ms();
        }
        if (m_model.size() > 0) m_model.train();
    }

    void ensure_measurer(TaskState& t) {
        if (t.measurer) return;
        t.measurer = std::make_unique<TaskMeasurer>(*t.task, m_o.measure);
        {
            t.p.default_ms = t.measurer->baseline().median_ms();
            TuningRecord r;
            r.workload = t.task->key;
            r.task = t.task->name;
            r.trace = t.task->default_trace;
            // The default rule as a knobbed candidate (its knob values; with
            // pinned knobs, the pinned configuration).
            r.decisions = t.space->first();
            r.times_ms = t.measurer->baseline().times_ms;
            r.flops = t.task->flops;
            r.timestamp = now_epoch();
            r.machine = machine_fingerprint();
            r.baseline = true;
            r.threads = m_o.threads;
            r.opt_level = m_o.measure.opt_level;
            m_db.append(r);
        }
    }

    // Ansor-style (task_scheduler.h): every task gets a first round, then
    // weight x latency x recent gain.
    int pick_task() {
        std::vector<ScheduledTask> st;
        for (const TaskState& t : m_tasks)
            st.push_back({t.p.weight, t.p.trials, t.p.best_ms, t.p.default_ms, t.gain});
        return autotune::pick_task(st);
    }

    int measure(TaskState& t, std::vector<SpacePoint>& batch) {
        t.best_before_round = t.p.best_ms;
        std::vector<tir::PrimFunc> funcs;
        for (const SpacePoint& s : batch) funcs.push_back(s.func);
        std::vector<Built> built;
        if (m_o.measure.workers > 1) built = t.measurer->build(funcs, m_cancel);
        int done = 0;
        const bool held_out = m_model.trained();
        std::vector<double> pred, truth;
        for (size_t i = 0; i < batch.size() && !cancelled(); ++i) {
            Built b =
                m_o.measure.workers > 1 ? built[i] : t.measurer->build({funcs[i]}, m_cancel)[0];
            if (cancelled()) break;
            MeasureResult r;
            if (!b.error.empty())
                r.error = b.error;
            else
                r = t.measurer->run(b, m_cancel);
            if (r.ok() && (t.p.best_ms == 0 || r.median_ms() < t.p.best_ms)) {
                // A new best is measured twice: one lucky run must not become the record.
                MeasureResult again = t.measurer->run(b, m_cancel);
                if (again.ok())
                    r.times_ms.insert(r.times_ms.end(), again.times_ms.begin(),
                                      again.times_ms.end());
                else
                    r = again;
            }
            if (r.error == "cancelled") break;
            TuningRecord rec;
            rec.workload = t.task->key;
            rec.task = t.task->name;
            rec.trace = batch[i].trace;
            rec.trace.workload = t.task->key;
            rec.decisions = batch[i].key;
            rec.times_ms = r.times_ms;
            rec.error = r.error;
            rec.flops = t.task->flops;
            rec.timestamp = now_epoch();
            rec.machine = machine_fingerprint();
            rec.threads = m_o.threads;
            rec.opt_level = m_o.measure.opt_level;
            m_db.append(rec);
            ++done;
            t.measured++;
            t.p.trials++;
            m_progress.trials++;
            const double ms = r.ok() ? r.median_ms() : -1;
            if (!r.ok()) t.p.errors++;
            if (r.ok() && (t.p.best_ms == 0 || ms < t.p.best_ms)) t.p.best_ms = ms;
            t.search->measured(batch[i].key, ms);
            if (held_out) {
                pred.push_back(batch[i].score);
                truth.push_back(r.ok() ? 1.0 / ms : 0.0);
            }
            m_model.add(batch[i].features, t.task->key, ms);
            report(int(&t - m_tasks.data()), r.error);
        }
        m_db.sync();  // the batch's records survive a crash of the machine
        t.gain = round_gain(t.best_before_round, t.p.best_ms);
        if (pred.size() >= 3) {
            m_batch_corr.push_back(spearman(pred, truth));
            m_rank_samples += int(pred.size());
            m_progress.rank_correlation = 0;
            const size_t from = m_batch_corr.size() > 16 ? m_batch_corr.size() - 16 : 0;
            for (size_t i = from; i < m_batch_corr.size(); ++i)
                m_progress.rank_correlation += m_batch_corr[i] / double(m_batch_corr.size() - from);
            m_progress.rank_samples = m_rank_samples;
        }
        if (!cancelled()) m_model.train();
        return done;
    }

    // The finalists of a task (the default and its fastest distinct candidates)
    // re-measured alternately, round by round, so that neither one lucky
    // measurement nor a slow phase of a shared machine picks the record.
    void confirm(TaskState& t) {
        // The default is always a finalist: the task's own default kernel (the
        // default candidate's realization), not re-derived here, so that it
        // cannot drop out of the comparison it anchors.
        std::vector<Finalist> fin =
            pick_finalists(*t.search, *t.space,
                           {t.space->first(), t.task->default_func, t.task->default_trace, {}, ""},
                           m_o.confirm_top);
        if (fin.size() < 2) return;  // nothing to choose between
        std::vector<tir::PrimFunc> funcs;
        for (const Finalist& f : fin) funcs.push_back(f.func);
        std::vector<Built> built = t.measurer->build(funcs, m_cancel);
        const bool done =
            confirm_rounds(fin, m_o.confirm_rounds, [&](size_t i) -> std::optional<Trial> {
                if (cancelled()) return std::nullopt;
                if (!built[i].error.empty()) return Trial{{}, built[i].error};
                MeasureResult r = t.measurer->run(built[i], m_cancel);
                if (r.error == "cancelled") return std::nullopt;
                return Trial{r.times_ms, r.error};
            });
        if (!done || cancelled()) return;
        for (Finalist& f : fin) {
            TuningRecord rec;
            rec.workload = t.task->key;
            rec.task = t.task->name;
            rec.trace = f.trace;
            rec.trace.workload = t.task->key;
            rec.decisions = f.decisions;
            rec.times_ms = f.error.empty() ? f.medians : std::vector<double>{};
            rec.error = f.error;
            rec.flops = t.task->flops;
            rec.timestamp = now_epoch();
            rec.machine = machine_fingerprint();
            rec.threads = m_o.threads;
            rec.opt_level = m_o.measure.opt_level;
            rec.confirmed = true;
            m_db.append(rec);
        }
        const TuningRecord* best =
            m_db.best(t.task->key, "llvm", m_o.measure.opt_level, m_o.threads);
        if (best && best->confirmed) t.p.best_ms = best->median_ms();
        // The default's time from the same rounds: tuned and default compare
        // like with like (the first measurement may have met another load).
        if (std::vector<double> d = fin.front().medians; !d.empty()) {
            std::sort(d.begin(), d.end());
            t.p.default_ms = d[d.size() / 2];
        }
        report(int(&t - m_tasks.data()), "");
    }

    void report(int task, const std::string& error) {
        m_progress.task = task;
        m_progress.last_error = error;
        m_progress.tasks.clear();
        m_progress.latency_ms = m_progress.default_latency_ms = 0;
        for (const TaskState& t : m_tasks) {
            m_progress.tasks.push_back(t.p);
            double def = t.p.default_ms;
            double best = t.p.best_ms > 0 && (def == 0 || t.p.best_ms < def) ? t.p.best_ms : def;
            m_progress.latency_ms += t.p.weight * best;
            m_progress.default_latency_ms += t.p.weight * def;
        }
        m_progress.elapsed_s = std::chrono::duration<double>(Clock::now() - m_start).count();
        if (m_cb) m_cb(m_progress);
    }
};

}  // namespace

TuneResult tune(const std::vector<TuneTask>& tasks, Database& db, const TuneOptions& options,
                const std::function<void(const Progress&)>& progress, const CancelToken* cancel) {
    TS_USER_CHECK(options.trials >= 0) << "tune: --trials must be >= 0";
    TS_USER_CHECK(options.batch >= 1) << "tune: batch must be >= 1";
    Tuner t(tasks, db, options, progress, cancel);
    return t.run();
}

tir::PrimFunc apply_best(const tir::PrimFunc& func, const Database& db, const std::string& target,
                         bool* applied, int opt_level) {
    if (applied) *applied = false;
    const TuningRecord* r = db.best(workload_key(func, target), target, opt_level);
    if (!r) return func;
    try {
        tir::PrimFunc out = r->trace.apply(func).func();
        if (applied) *applied = true;
        return out;
    } catch (const UserError&) {
        return func;
    }
}

std::optional<Realized> best_schedule(const tir::PrimFunc& func, const graph::Node& anchor,
                                      const topi::CpuScheduleOptions& cpu, const Database& db,
                                      const std::string& target, int opt_level,
                                      std::string* skipped) {
    if (skipped) skipped->clear();
    const std::string key = workload_key(func, target);
    const TuningRecord* r = db.best(key, target, opt_level, cpu.threads);
    // Tuned for another thread count (parallel loops or not): the default is safer.
    if (!r || (r->threads >= 0 && r->threads != cpu.threads)) {
        if (skipped) *skipped = db.why_not_applied(key, target, opt_level, cpu.threads);
        return std::nullopt;
    }
    try {
        Candidate c = r->decisions.empty() ? Candidate{} : Candidate::from_json(r->decisions);
        if (c.knobbed) {
            SpaceOptions o;
            o.threads = cpu.threads;
            o.vector_lanes = cpu.vector_lanes;
            o.anchor = &anchor;
            o.cpu = cpu;
            o.knobs = topi::cpu_schedule_knobs(func, anchor, cpu);
            return realize(func, c, o);
        }
        schedule::Schedule s = r->trace.apply(func);
        return Realized{s.func(), s.trace()};
    } catch (const UserError& e) {
        if (skipped) *skipped = std::string("its best record no longer applies: ") + e.what();
        return std::nullopt;
    }
}

tir::PrimFunc apply_best(const tir::PrimFunc& func, const graph::Node& anchor,
                         const topi::CpuScheduleOptions& cpu, const Database& db,
                         const std::string& target, bool* applied, int opt_level,
                         std::string* skipped) {
    std::optional<Realized> r = best_schedule(func, anchor, cpu, db, target, opt_level, skipped);
    if (applied) *applied = r.has_value();
    return r ? r->func : func;
}

}  // namespace tessera::autotune
