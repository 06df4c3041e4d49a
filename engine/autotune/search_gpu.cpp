// Evolutionary GPU-sketch search under the cost model (see search_gpu.h).
#include "engine/autotune/search_gpu.h"

#include <algorithm>
#include <chrono>
#include <tuple>

#include "engine/autotune/features.h"
#include "engine/autotune/space.h"
#include "engine/core/error.h"
#include "engine/runtime/cuda_driver.h"

namespace tessera::autotune {

namespace {

double now_epoch() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

// Per-thread resources of a sketch: (threads, vthreads, inner work).
struct Usage {
    int64_t threads = 1, vthreads = 1, inner = 1;
};

Usage usage(const GpuSketch& s) {
    Usage u;
    for (const std::vector<int64_t>& f : s.tiles) {
        if (f.size() == 3) {
            u.inner *= f[2];
        } else if (f.size() == 5) {
            u.vthreads *= f[1];
            u.threads *= f[2];
            u.inner *= f[3] * f[4];
        }
    }
    return u;
}

bool within(const GpuSketch& s, const GpuSpaceOptions& o) {
    Usage u = usage(s);
    return u.threads <= o.max_threads && u.vthreads <= o.max_vthreads && u.inner <= o.max_inner;
}

bool is_cuda_trial(const TuningRecord& r, const std::string& key, const std::string& device) {
    return r.workload == key && r.target == "cuda" && !r.baseline && !r.confirmed &&
           gpu_record_applies(r, device);
}

}  // namespace

GpuSketch mutate_gpu(const tir::PrimFunc& func, const GpuSketch& s, std::mt19937_64& rng,
                     const GpuSpaceOptions& o) {
    std::vector<size_t> movable;  // loops with a factor > 1 (something to move)
    for (size_t i = 0; i < s.tiles.size(); ++i)
        if (std::any_of(s.tiles[i].begin(), s.tiles[i].end(), [](int64_t f) { return f > 1; }))
            movable.push_back(i);
    for (int attempt = 0; attempt < 32; ++attempt) {
        GpuSketch m = s;  // fields other than tiles / unroll stay as they are
        if (movable.empty() || std::uniform_int_distribution<int>(0, 4)(rng) == 0) {
            m.unroll = !m.unroll;
        } else {
            std::vector<int64_t>& f =
                m.tiles[movable[std::uniform_int_distribution<size_t>(0, movable.size() - 1)(rng)]];
            std::vector<size_t> from;
            for (size_t k = 0; k < f.size(); ++k)
                if (f[k] > 1) from.push_back(k);
            const size_t a = from[std::uniform_int_distribution<size_t>(0, from.size() - 1)(rng)];
            size_t b = std::uniform_int_distribution<size_t>(0, f.size() - 2)(rng);
            if (b >= a) ++b;  // another level of the same loop
            std::vector<int64_t> primes = prime_factors(f[a]);
            const int64_t p =
                primes[std::uniform_int_distribution<size_t>(0, primes.size() - 1)(rng)];
            f[a] /= p;
            f[b] *= p;
        }
        if (m == s || !within(m, o)) continue;
        try {
            generate_gpu(func, m);
            return m;
        } catch (const schedule::ScheduleError&) {
        } catch (const UserError&) {
        }
    }
    return s;
}

std::string gpu_fingerprint() {
    if (!runtime::cuda::available()) return "";
    const runtime::cuda::DeviceInfo& d = runtime::cuda::device_info();
    return d.name + "/sm_" + std::to_string(d.cc_major) + std::to_string(d.cc_minor);
}

bool gpu_record_applies(const TuningRecord& r, const std::string& device) {
    if (!r.device.empty()) return device.empty() || r.device == device;
    return Database::is_local(r);  // an older record: this machine's GPU, which one unknown
}

const TuningRecord* best_gpu_record(const Database& db, const std::string& workload,
                                    const std::string& device) {
    const TuningRecord* best = nullptr;
    // Ranks: the named device itself, then confirmed, then the fastest.
    auto rank = [&](const TuningRecord& r) {
        return std::make_tuple(!device.empty() && r.device == device ? 0 : 1, r.confirmed ? 0 : 1,
                               r.median_ms());
    };
    for (const TuningRecord& r : db.records()) {
        if (r.workload != workload || r.target != "cuda" || !r.ok()) continue;
        if (!gpu_record_applies(r, device)) continue;
        if (!best || rank(r) < rank(*best)) best = &r;
    }
    return best;
}

tir::PrimFunc apply_best_gpu(const tir::PrimFunc& func, const Database& db,
                             const std::string* device) {
    const TuningRecord* r =
        best_gpu_record(db, workload_key(func, "cuda"), device ? *device : gpu_fingerprint());
    if (!r || r->decisions.empty() || r->decisions == "[]") return {};
    try {
        return generate_gpu(func, GpuSketch::from_json(r->decisions)).func();
    } catch (const schedule::ScheduleError&) {
    } catch (const UserError&) {
    }
    return {};
}

std::optional<SpacePoint> GpuDesignSpace::realize(const std::string& decisions) const {
    try {
        GpuSketch sketch = GpuSketch::from_json(decisions);
        schedule::Schedule sch = generate_gpu(m_func, sketch);
        if (m_check) m_check(sch.func());
        return SpacePoint{sketch.to_json(), sch.func(), sch.trace(), extract_features(sch.func()), 0};
    } catch (const UserError&) {  // ScheduleError included
        return std::nullopt;
    }
}

std::optional<std::string> GpuDesignSpace::sample(std::mt19937_64& rng) const {
    try {
        return sample_gpu(m_func, rng, m_o).to_json();
    } catch (const UserError&) {  // no single reduction block
        return std::nullopt;
    }
}

std::string GpuDesignSpace::mutate(const std::string& decisions, std::mt19937_64& rng) const {
    try {
        return mutate_gpu(m_func, GpuSketch::from_json(decisions), rng, m_o).to_json();
    } catch (const UserError&) {
        return decisions;
    }
}

GpuSearch::GpuSearch(const TuneTask& task, Database& db, CostModel& model,
                     const GpuSearchOptions& o, uint64_t seed)
    : m_task(task),
      m_db(db),
      m_model(model),
      m_o(o),
      m_rng(seed),
      m_space(task.func, o.space, o.check),
      m_search(m_space, model, {o.population, o.generations, o.epsilon}) {
    TS_USER_CHECK(o.batch >= 1) << "GPU search: batch must be >= 1";
    m_state.name = task.name;
    m_state.key = task.key;
    m_state.flops = task.flops;
    bool added = false;
    for (const TuningRecord& r : db.records()) {
        if (!is_cuda_trial(r, task.key, o.device)) continue;
        m_state.trials++;
        if (!r.ok()) m_state.errors++;
        if (r.decisions.empty()) continue;
        std::optional<SpacePoint> p = m_space.realize(r.decisions);
        if (!p) continue;
        const double ms = r.ok() ? r.median_ms() : -1;
        m_search.measured(p->key, ms);
        if (r.ok() && (m_state.best_ms == 0 || ms < m_state.best_ms)) {
            m_state.best_ms = ms;
            m_state.best = p->key;
        }
        if (m_model.size() < 4000) {
            m_model.add(p->features, task.key, ms);
            added = true;
        }
    }
    m_state.resumed = m_state.trials;
    if (added) m_model.train();
}

int GpuSearch::step(int n, const GpuMeasureFn& measure,
                    const std::function<void(const GpuSearchState&)>& after) {
    std::vector<SpacePoint> batch = m_search.propose(n, m_rng);
    const std::string machine = machine_fingerprint();
    for (SpacePoint& c : batch) {
        TuningRecord rec;
        rec.workload = m_task.key;
        rec.target = "cuda";
        rec.task = m_task.name;
        rec.trace = c.trace;
        rec.trace.workload = m_task.key;
        rec.decisions = c.key;
        rec.flops = m_task.flops;
        rec.machine = machine;
        rec.device = m_o.device;
        rec.threads = 1;
        try {
            GpuTrial t = measure(GpuSketch::from_json(c.key), c.func);
            rec.times_ms = std::move(t.times_ms);
            rec.error = std::move(t.error);
            if (rec.error.empty() && rec.times_ms.empty()) rec.error = "no time measured";
        } catch (const std::exception& e) {
            rec.error = e.what();
            rec.times_ms.clear();
        }
        rec.timestamp = now_epoch();
        m_db.append(rec);
        m_state.trials++;
        m_state.measured++;
        m_state.last_error = rec.error;
        const double ms = rec.ok() ? rec.median_ms() : -1;
        m_search.measured(c.key, ms);
        if (rec.ok()) {
            if (m_state.best_ms == 0 || ms < m_state.best_ms) {
                m_state.best_ms = ms;
                m_state.best = c.key;
            }
        } else {
            m_state.errors++;
        }
        m_model.add(c.features, m_task.key, ms);
        if (after) after(m_state);
    }
    if (!batch.empty()) m_model.train();
    return int(batch.size());
}

void GpuSearch::run(int budget, const GpuMeasureFn& measure,
                    const std::function<void(const GpuSearchState&)>& after) {
    while (m_state.trials < budget)
        if (step(std::min(m_o.batch, budget - m_state.trials), measure, after) == 0) break;
}

}  // namespace tessera::autotune
