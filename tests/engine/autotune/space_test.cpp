// Design space and cost-model features: every sampled or mutated candidate's
// trace replays on a fresh function and matches the interpreter; features of
// known loop nests have the expected counts, strides and annotations.
#include "engine/autotune/space.h"

#include <gtest/gtest.h>

#include "engine/autotune/cost_model.h"
#include "engine/autotune/features.h"
#include "engine/te/tensor.h"
#include "tests/engine/autotune/autotune_test_util.h"
#include "tests/engine/schedule/random_schedule.h"

namespace tessera::autotune {
namespace {

using schedule::test::max_rel_diff;
using schedule::test::run_interpreted;
using schedule::test::run_jit;

using test::matmul;

TEST(Space, PerfectFactorization) {
    std::mt19937_64 rng(3);
    EXPECT_EQ(prime_factors(360), (std::vector<int64_t>{2, 2, 2, 3, 3, 5}));
    for (int i = 0; i < 50; ++i) {
        std::vector<int64_t> f = random_factorization(360, 4, rng);
        ASSERT_EQ(f.size(), 4u);
        EXPECT_EQ(f[0] * f[1] * f[2] * f[3], 360);
    }
}

TEST(Space, SampledAndMutatedTracesReplayAndMatchInterpreter) {
    std::mt19937_64 rng(11);
    int checked = 0;
    for (int threads : {1, 0}) {
        SpaceOptions o;
        o.threads = threads;
        for (const auto& w : schedule::test::workloads()) {
            const auto want = run_interpreted(w.func, 5);
            Candidate c = sample(w.func, o, rng);
            for (int i = 0; i < 3; ++i) {
                schedule::Schedule s = generate(w.func, c, o);
                // The trace is data: through JSON and replayed on a fresh function.
                schedule::Trace t = schedule::Trace::from_json(s.trace().to_json(), w.name);
                tir::PrimFunc replayed = t.apply(w.func).func();
                EXPECT_LE(max_rel_diff(run_interpreted(replayed, 5), want), 1e-4)
                    << w.name << " candidate " << c.to_json();
                if (i == 0)
                    EXPECT_LE(max_rel_diff(run_jit(replayed, 5), want), 1e-4)
                        << w.name << " (JIT) candidate " << c.to_json();
                EXPECT_EQ(Candidate::from_json(c.to_json()), c);
                ++checked;
                c = mutate(w.func, c, o, rng);
            }
        }
    }
    EXPECT_GE(checked, 40);
}

TEST(Space, MatmulIsTiledSsrsrs) {
    std::mt19937_64 rng(1);
    tir::PrimFunc f = matmul(32, 32, 16);
    Candidate c = sample(f, {}, rng);
    ASSERT_EQ(c.blocks.size(), 1u);
    EXPECT_EQ(c.blocks[0].rule, BlockDecision::Tile);
    ASSERT_EQ(c.blocks[0].tiles.size(), 3u);
    EXPECT_EQ(c.blocks[0].tiles[0].size(), 4u);  // i: 4 spatial levels
    EXPECT_EQ(c.blocks[0].tiles[2].size(), 2u);  // k: 2 reduction levels
    schedule::Schedule s = generate(f, c, {});
    // S0 S1 R0 S2 R1 S3 = 4 + 4 + 1 + ... loops: 2*4 spatial + 2 reduction levels.
    EXPECT_EQ(s.get_loops("C").size(), 10u);
}

TEST(Features, KnownMatmulNest) {
    KernelStats st = kernel_stats(matmul(16, 8, 12));
    EXPECT_EQ(st.iterations, 16 * 8 * 12);
    EXPECT_EQ(st.depth, 3);
    EXPECT_EQ(st.innermost_extent, 12);
    EXPECT_EQ(st.float_mul, 16 * 8 * 12);
    EXPECT_EQ(st.float_add, 16 * 8 * 12);
    EXPECT_EQ(st.vector_lanes, 1);
    EXPECT_EQ(st.parallel, 1);
    // Along k: C is reused (read and written), A contiguous, B strided by n.
    EXPECT_EQ(st.accesses, 4);
    EXPECT_EQ(st.stride0, 2);
    EXPECT_EQ(st.stride1, 1);
    EXPECT_EQ(st.strided, 1);
    EXPECT_EQ(st.footprint_bytes, 4.0 * (16 * 12 + 12 * 8 + 2 * 16 * 8));
    EXPECT_EQ(extract_features(matmul(16, 8, 12)).size(), feature_names().size());
}

TEST(Features, AnnotationsAndAllocations) {
    tir::PrimFunc f = matmul(64, 64, 32);
    schedule::Schedule s(f);
    auto loops = s.get_loops("C");
    auto i = s.split(loops[0], {-1, 4});
    auto j = s.split(loops[1], {-1, 16});
    s.reorder({i[0], j[0], loops[2], i[1], j[1]});
    s.parallel(i[0]);
    std::string init = s.decompose_reduction("C", loops[2]);
    s.unroll(i[1]);
    s.vectorize(j[1]);
    KernelStats st = kernel_stats(s.func());
    EXPECT_EQ(st.vector_lanes, 16);
    EXPECT_EQ(st.unrolled, 4);
    EXPECT_EQ(st.parallel, 16);
    EXPECT_EQ(st.innermost_extent, 16);
    EXPECT_EQ(st.iterations, 64 * 64 * 32);
    EXPECT_EQ(st.stores, 2);  // the init and the update
    // Along the vector loop j: C and B contiguous, A reused.
    EXPECT_EQ(st.stride1, 3);
    EXPECT_EQ(st.stride0, 1);

    schedule::Schedule c(f);
    c.cache_read("C", 0, "local");
    EXPECT_GE(kernel_stats(c.func()).allocs, 1);
    EXPECT_GT(kernel_stats(c.func()).alloc_bytes, 0);
}

TEST(CostModel, LearnsARankingAndSpearmanIsCorrect) {
    EXPECT_DOUBLE_EQ(spearman({1, 2, 3, 4}, {10, 20, 30, 40}), 1.0);
    EXPECT_DOUBLE_EQ(spearman({1, 2, 3, 4}, {4, 3, 2, 1}), -1.0);
    CostModel m;
    std::mt19937_64 rng(2);
    std::uniform_real_distribution<float> u(0, 8);
    auto time_of = [](const std::vector<float>& x) { return 1.0 + x[0] * 2 + x[1]; };
    for (int i = 0; i < 200; ++i) {
        std::vector<float> x = {u(rng), u(rng), u(rng)};
        m.add(x, "t", time_of(x));
    }
    EXPECT_FALSE(m.trained());
    m.train();
    ASSERT_TRUE(m.trained());
    std::vector<std::vector<float>> held;
    std::vector<double> truth;
    for (int i = 0; i < 50; ++i) {
        held.push_back({u(rng), u(rng), u(rng)});
        truth.push_back(1.0 / time_of(held.back()));
    }
    EXPECT_GT(spearman(m.predict(held), truth), 0.8);
}

}  // namespace
}  // namespace tessera::autotune
