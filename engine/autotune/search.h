// The one search driver of the CPU tuner (tuner.h) and the GPU search
// (search_gpu.h): an evolutionary search over a design space, ranked by the
// XGBoost cost model, and the end-of-run confirmation of a task's finalists.
// A design space is an interface: the CPU space (space.h: Ansor sketches and
// the knobbed default rule) and the GPU space (space_gpu.h: the SSSRRSRS
// sketch) each say how to realize, sample and mutate their decisions, which
// travel as the JSON stored in tuning records; the search does the rest alike
// for both.
#pragma once

#include <atomic>
#include <functional>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "engine/autotune/cost_model.h"
#include "engine/autotune/search_defaults.h"
#include "engine/schedule/schedule.h"

namespace tessera::autotune {

/// Set from any thread; tuning stops within a second.
struct CancelToken {
    std::atomic<bool> flag{false};
    void cancel() { flag = true; }
    bool cancelled() const { return flag.load(); }
};

/// One point of a design space: its decisions (the space's JSON, as stored in
/// a record and compared to tell measured points apart), the kernel they
/// schedule, its trace and loop-IR features, and the model's score.
struct SpacePoint {
    std::string key;
    tir::PrimFunc func;
    schedule::Trace trace;
    std::vector<float> features;
    double score = 0;
};

/// What the search needs of a target's design space for one kernel.
class DesignSpace {
public:
    virtual ~DesignSpace() = default;
    /// The point `decisions` describe (key: the decisions as this space
    /// writes them); nullopt when they do not apply to the kernel (a
    /// schedule step fails, a resource limit is exceeded).
    virtual std::optional<SpacePoint> realize(const std::string& decisions) const = 0;
    /// Random decisions that apply; nullopt when the space has none.
    virtual std::optional<std::string> sample(std::mt19937_64& rng) const = 0;
    /// Decisions next to `decisions` that apply; `decisions` itself when no
    /// change applies.
    virtual std::string mutate(const std::string& decisions, std::mt19937_64& rng) const = 0;
    /// Decisions measured before any other (the default schedule as a point
    /// of the space); empty when the space has none.
    virtual std::string first() const { return ""; }
};

struct SearchParams {
    int population = kSearchPopulation;
    int generations = kSearchGenerations;
    double epsilon = kSearchEpsilon;  // share of random points per batch (1: random search)
};

/// The search of one kernel's space. It keeps which points were measured
/// (never proposed again) and the fastest ones (the seeds of each
/// population and the finalists of the confirmation).
class EvolutionarySearch {
public:
    EvolutionarySearch(const DesignSpace& space, const CostModel& model, const SearchParams& p)
        : m_space(space), m_model(model), m_p(p) {}

    /// A measured point (resumed from a record or just run): `ms` < 0 for a
    /// failed one.
    void measured(const std::string& key, double ms);
    bool was_measured(const std::string& key) const { return m_seen.count(key) > 0; }

    /// Up to `n` points not measured yet, each marked measured: the space's
    /// first point, then (once the model is trained) the model's best of a
    /// population evolved from the fastest points and random samples over
    /// `generations` rounds of mutation, and an `epsilon` share of random
    /// points (all of them before the model is trained). With a trained
    /// model each point carries its score. Empty when the space is exhausted.
    std::vector<SpacePoint> propose(int n, std::mt19937_64& rng,
                                    const CancelToken* cancel = nullptr);

    /// The model's scores for `points`.
    void predict(std::vector<SpacePoint>& points) const;

    /// Measured points that ran, (ms, key), fastest first (the 32 fastest).
    const std::vector<std::pair<double, std::string>>& good() const { return m_good; }

private:
    const DesignSpace& m_space;
    const CostModel& m_model;
    SearchParams m_p;
    std::set<std::string> m_seen;
    std::vector<std::pair<double, std::string>> m_good;
};

/// One measurement: run times, or the error that stopped it.
struct Trial {
    std::vector<double> times_ms;
    std::string error;
    bool ok() const { return error.empty() && !times_ms.empty(); }
    double median_ms() const;
};

/// A contender of a task's end-of-run confirmation.
struct Finalist {
    std::string decisions;  // the default's own decisions ("" where it is no point of the space)
    tir::PrimFunc func;
    schedule::Trace trace;
    std::vector<double> medians;  // one per round
    std::string error;
};

/// The default kernel `dflt` and the `top` fastest distinct points of
/// `search` that still realize.
std::vector<Finalist> pick_finalists(const EvolutionarySearch& search, const DesignSpace& space,
                                     Finalist dflt, int top);

/// Measures the finalists alternately, `rounds` rounds with the order
/// rotated each round (no finalist always runs first, so neither one lucky
/// run nor a slow phase of a shared machine picks the winner); each keeps
/// its per-round medians or its first error. `measure(i)` measures finalist
/// i; it returns nullopt to stop (cancelled): then confirm_rounds returns
/// false.
bool confirm_rounds(std::vector<Finalist>& finalists, int rounds,
                    const std::function<std::optional<Trial>(size_t)>& measure);

}  // namespace tessera::autotune
