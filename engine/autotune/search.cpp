// The evolutionary search and the confirmation rounds (see search.h).
#include "engine/autotune/search.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tessera::autotune {

namespace {

// Measured points kept as seeds and finalists: a few populations' worth.
constexpr size_t kGoodKept = 32;
// Fastest measured points put into each new population before the random ones.
constexpr size_t kSeedsPerPopulation = 8;

bool by_score(const SpacePoint& a, const SpacePoint& b) { return a.score > b.score; }

}  // namespace

void EvolutionarySearch::measured(const std::string& key, double ms) {
    m_seen.insert(key);
    if (ms < 0) return;
    auto at = std::upper_bound(m_good.begin(), m_good.end(), ms,
                               [](double t, const auto& g) { return t < g.first; });
    m_good.insert(at, {ms, key});
    if (m_good.size() > kGoodKept) m_good.pop_back();
}

void EvolutionarySearch::predict(std::vector<SpacePoint>& points) const {
    if (points.empty()) return;
    std::vector<std::vector<float>> x;
    for (const SpacePoint& p : points) x.push_back(p.features);
    std::vector<double> y = m_model.predict(x);
    for (size_t i = 0; i < points.size(); ++i) points[i].score = y[i];
}

std::vector<SpacePoint> EvolutionarySearch::propose(int n, std::mt19937_64& rng,
                                                    const CancelToken* cancel) {
    auto cancelled = [&] { return cancel && cancel->cancelled(); };
    std::vector<SpacePoint> out;
    auto take = [&](SpacePoint p) {
        m_seen.insert(p.key);
        out.push_back(std::move(p));
    };
    // The space's first point (the default schedule) before any other, so
    // that a tuned kernel is never slower than the default.
    if (const std::string first = m_space.first(); !first.empty() && int(out.size()) < n)
        if (std::optional<SpacePoint> p = m_space.realize(first); p && !m_seen.count(p->key))
            take(std::move(*p));

    const bool trained = m_model.trained();
    const int greedy = trained ? int(std::ceil(n * (1.0 - m_p.epsilon))) : 0;
    if (int(out.size()) < greedy) {
        std::vector<SpacePoint> pop;
        std::set<std::string> in_pop;
        auto add = [&](const std::string& decisions) {
            if (in_pop.count(decisions)) return;
            std::optional<SpacePoint> p = m_space.realize(decisions);
            if (!p || !in_pop.insert(p->key).second) return;
            pop.push_back(std::move(*p));
        };
        for (size_t i = 0; i < m_good.size() && i < kSeedsPerPopulation; ++i) add(m_good[i].second);
        for (int tries = 0; int(pop.size()) < m_p.population && tries < 2 * m_p.population; ++tries)
            if (std::optional<std::string> d = m_space.sample(rng)) add(*d);
        for (int g = 0; g < m_p.generations && !pop.empty() && !cancelled(); ++g) {
            predict(pop);
            std::stable_sort(pop.begin(), pop.end(), by_score);
            const size_t parents = std::max<size_t>(1, pop.size() / 2);
            const size_t before = pop.size();
            for (size_t i = 0; i < before; ++i) {
                const size_t parent = std::uniform_int_distribution<size_t>(0, parents - 1)(rng);
                add(m_space.mutate(std::string(pop[parent].key), rng));
            }
        }
        predict(pop);
        std::stable_sort(pop.begin(), pop.end(), by_score);
        for (SpacePoint& p : pop) {
            if (int(out.size()) >= greedy) break;
            if (!m_seen.count(p.key)) take(std::move(p));
        }
    }
    // The epsilon share (everything before the model is trained): random points.
    for (int tries = 0; int(out.size()) < n && tries < 8 * n; ++tries) {
        std::optional<std::string> d = m_space.sample(rng);
        if (!d || m_seen.count(*d)) continue;
        std::optional<SpacePoint> p = m_space.realize(*d);
        if (p && !m_seen.count(p->key)) take(std::move(*p));
    }
    if (trained) predict(out);
    return out;
}

double Trial::median_ms() const {
    if (!ok()) return std::numeric_limits<double>::infinity();
    std::vector<double> t = times_ms;
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

std::vector<Finalist> pick_finalists(const EvolutionarySearch& search, const DesignSpace& space,
                                     Finalist dflt, int top) {
    std::vector<Finalist> fin;
    std::set<std::string> keys{dflt.decisions};
    fin.push_back(std::move(dflt));
    for (const auto& [ms, key] : search.good()) {
        if (int(fin.size()) > top) break;
        if (keys.count(key)) continue;
        std::optional<SpacePoint> p = space.realize(key);
        if (!p || !keys.insert(p->key).second) continue;
        fin.push_back({p->key, p->func, p->trace, {}, ""});
    }
    return fin;
}

bool confirm_rounds(std::vector<Finalist>& finalists, int rounds,
                    const std::function<std::optional<Trial>(size_t)>& measure) {
    for (int round = 0; round < rounds; ++round) {
        for (size_t j = 0; j < finalists.size(); ++j) {
            const size_t i = (j + size_t(round)) % finalists.size();
            Finalist& f = finalists[i];
            if (!f.error.empty()) continue;
            std::optional<Trial> t = measure(i);
            if (!t) return false;
            if (t->ok())
                f.medians.push_back(t->median_ms());
            else
                f.error = t->error.empty() ? "no time measured" : t->error;
        }
    }
    return true;
}

}  // namespace tessera::autotune
