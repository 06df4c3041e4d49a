// The one search driver (search.h) over both design spaces: the CPU space's
// default comes first and no point is proposed twice; the GPU space goes
// through the same driver; the confirmation rotates the finalists' order,
// drops a failing finalist and stops when cancelled.
#include "engine/autotune/search.h"

#include <gtest/gtest.h>

#include <set>

#include "engine/autotune/search_gpu.h"
#include "engine/autotune/space.h"
#include "engine/te/tensor.h"
#include "engine/tir/printer.h"
#include "tests/engine/autotune/autotune_test_util.h"

namespace tessera::autotune {
namespace {

using test::matmul;

// Proposes `batches` batches of `n`, marking each point measured at a time
// that prefers larger keys (any fixed order will do), training the model
// after each batch as the tuners do; returns every proposed key in order.
std::vector<std::string> run_search(const DesignSpace& space, int batches, int n, double epsilon) {
    CostModel model;
    EvolutionarySearch search(space, model, {16, 2, epsilon});
    std::mt19937_64 rng(7);
    std::vector<std::string> keys;
    for (int b = 0; b < batches; ++b) {
        std::vector<SpacePoint> batch = search.propose(n, rng);
        for (const SpacePoint& p : batch) {
            EXPECT_TRUE(p.func.defined()) << p.key;
            EXPECT_FALSE(p.features.empty()) << p.key;
            const double ms = 1.0 + double(std::hash<std::string>{}(p.key) % 1000) / 100.0;
            search.measured(p.key, ms);
            model.add(p.features, "mm", ms);
            keys.push_back(p.key);
        }
        model.train();
    }
    // The fastest measured first.
    for (size_t i = 1; i < search.good().size(); ++i)
        EXPECT_LE(search.good()[i - 1].first, search.good()[i].first);
    return keys;
}

// The CPU space with a chosen first point (as the default rule is for a
// task with an anchor node).
class CpuSpaceWithFirst final : public DesignSpace {
public:
    CpuSpaceWithFirst(const CpuDesignSpace& space, std::string first)
        : m_space(space), m_first(std::move(first)) {}
    std::optional<SpacePoint> realize(const std::string& d) const override {
        return m_space.realize(d);
    }
    std::optional<std::string> sample(std::mt19937_64& rng) const override {
        return m_space.sample(rng);
    }
    std::string mutate(const std::string& d, std::mt19937_64& rng) const override {
        return m_space.mutate(d, rng);
    }
    std::string first() const override { return m_first; }

private:
    const CpuDesignSpace& m_space;
    std::string m_first;
};

TEST(SearchDriver, CpuSpaceFirstPointComesFirstAndNoPointIsProposedTwice) {
    tir::PrimFunc f = matmul(64, 64, 32);
    SpaceOptions o;
    o.threads = 1;
    CpuDesignSpace space(f, o);
    EXPECT_EQ(space.first(), "");  // no anchor node: no default rule in the space
    std::mt19937_64 rng(3);
    const std::string first = space.realize(*space.sample(rng))->key;
    CpuSpaceWithFirst with_first(space, first);
    std::vector<std::string> keys = run_search(with_first, 3, 6, 0.2);
    ASSERT_GE(keys.size(), 12u);
    EXPECT_EQ(keys.front(), first);
    std::set<std::string> unique(keys.begin(), keys.end());
    EXPECT_EQ(unique.size(), keys.size());
    // Every key realizes again to itself (records replay).
    for (const std::string& k : keys) {
        std::optional<SpacePoint> p = space.realize(k);
        ASSERT_TRUE(p) << k;
        EXPECT_EQ(p->key, k);
    }
}

TEST(SearchDriver, GpuSpaceRunsThroughTheSameDriver) {
    tir::PrimFunc f = matmul(64, 128, 32);
    int checked = 0;
    GpuDesignSpace space(f, {}, [&](const tir::PrimFunc&) { ++checked; });
    std::vector<std::string> keys = run_search(space, 3, 6, 0.2);
    ASSERT_EQ(keys.size(), 18u);
    std::set<std::string> unique(keys.begin(), keys.end());
    EXPECT_EQ(unique.size(), keys.size());
    EXPECT_GE(checked, 18);  // every proposed point passed the check
    for (const std::string& k : keys) EXPECT_NO_THROW(GpuSketch::from_json(k));
    // Decisions that do not apply are refused, not thrown.
    EXPECT_FALSE(space.realize("{\"block\": \"nope\"}"));
    EXPECT_FALSE(space.realize("not json"));
}

TEST(SearchDriver, ConfirmationRotatesTheOrderDropsFailuresAndStopsWhenCancelled) {
    std::vector<Finalist> fin(3);
    for (size_t i = 0; i < fin.size(); ++i) fin[i].decisions = "f" + std::to_string(i);
    std::vector<size_t> order;
    const bool done = confirm_rounds(fin, 3, [&](size_t i) -> std::optional<Trial> {
        order.push_back(i);
        if (i == 1) return Trial{{}, "does not build"};
        return Trial{{double(i) + 1, double(i) + 3, double(i) + 2}, ""};
    });
    EXPECT_TRUE(done);
    // Round r starts at finalist r; finalist 1 failed in round 0 and is not run again.
    EXPECT_EQ(order, (std::vector<size_t>{0, 1, 2, 2, 0, 2, 0}));
    EXPECT_EQ(fin[0].medians, (std::vector<double>{2, 2, 2}));
    EXPECT_EQ(fin[1].error, "does not build");
    EXPECT_TRUE(fin[1].medians.empty());
    EXPECT_EQ(fin[2].medians, (std::vector<double>{4, 4, 4}));

    std::vector<Finalist> again(2);
    int calls = 0;
    EXPECT_FALSE(confirm_rounds(again, 3, [&](size_t) -> std::optional<Trial> {
        if (++calls == 3) return std::nullopt;  // cancelled
        return Trial{{1.0}, ""};
    }));
    EXPECT_EQ(calls, 3);
}

}  // namespace
}  // namespace tessera::autotune
