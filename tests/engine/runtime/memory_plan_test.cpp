// Memory planning: buffers with disjoint lifetimes share bytes, live ones
// never overlap, and a chain of kernels runs in a reused arena with the
// same results as plain loops.
#include "engine/runtime/memory_plan.h"

#include <gtest/gtest.h>

#include <random>

#include "engine/core/error.h"
#include "engine/runtime/graph_executor.h"

namespace tessera::runtime {
namespace {

TEST(MemoryPlan, ReusesBytesOfDeadBuffers) {
    // A chain a -> b -> c -> d: each buffer lives for two consecutive calls.
    std::vector<BufferRequest> r = {{1000, 0, 1}, {1000, 1, 2}, {1000, 2, 3}, {1000, 3, 4}};
    MemoryPlan p = plan_memory(r);
    EXPECT_TRUE(plan_is_valid(r, p));
    EXPECT_EQ(p.naive_bytes, 4 * 1024);
    EXPECT_EQ(p.arena_bytes, 2 * 1024);
    EXPECT_EQ(p.offsets[0], p.offsets[2]);
    for (int64_t o : p.offsets) EXPECT_EQ(o % 64, 0);
}

TEST(MemoryPlan, BestFitPutsSmallBufferIntoSmallestGap) {
    // 0 and 2 live throughout with a hole left by 1 (dead after call 0).
    std::vector<BufferRequest> r = {{640, 0, 3}, {320, 0, 0}, {640, 0, 3}, {256, 2, 3}};
    MemoryPlan p = plan_memory(r);
    EXPECT_TRUE(plan_is_valid(r, p));
    EXPECT_EQ(p.arena_bytes, 640 + 640 + 320);
    EXPECT_EQ(p.offsets[3], p.offsets[1]);  // reuses the hole
}

TEST(MemoryPlan, RandomRequestsNeverOverlapWhileAlive) {
    std::mt19937 rng(7);
    for (int trial = 0; trial < 50; ++trial) {
        std::vector<BufferRequest> r;
        int n = 1 + int(rng() % 40);
        for (int i = 0; i < n; ++i) {
            int a = int(rng() % 20), b = a + int(rng() % 6);
            r.push_back({int64_t(rng() % 5000), a, b});
        }
        MemoryPlan p = plan_memory(r);
        ASSERT_TRUE(plan_is_valid(r, p)) << "trial " << trial;
        EXPECT_LE(p.arena_bytes, p.naive_bytes);
        EXPECT_EQ(plan_memory(r).offsets, p.offsets);  // deterministic
    }
}

constexpr int64_t kN = 1000;
void twice(void** args) {
    auto* a = static_cast<const float*>(args[0]);
    auto* out = static_cast<float*>(args[1]);
    for (int64_t i = 0; i < kN; ++i) out[i] = 2 * a[i] + 1;
}

TEST(GraphExecutorMemory, ChainReusesBuffersAndMatchesLoops) {
    // v0 (input) -> v1 -> v2 -> v3 -> v4 -> v5 (output), five calls.
    TensorType t{DType::Float32, {kN}};
    std::vector<KernelCall> calls;
    for (int k = 0; k < 5; ++k) calls.push_back({"twice", twice, {k, k + 1}, {k}, double(2 * kN)});
    GraphExecutor ex(std::vector<TensorType>(6, t), {}, {0}, {5}, calls, nullptr);
    ex.set_io_names({"x"}, {"y"});
    EXPECT_LT(ex.peak_bytes(), ex.naive_bytes());
    EXPECT_EQ(ex.peak_bytes(), 4 * 4032);  // x, y and two alternating intermediates
    NDArray x = random_ndarray(t, 3);
    ex.set_input("x", x);
    ex.run();
    NDArray y1 = ex.get_output("y");
    ex.run();  // a second run without set_input gives the same bits
    NDArray y2 = ex.get_output(0);
    for (int64_t i = 0; i < kN; ++i) {
        float e = x.data<float>()[i];
        for (int k = 0; k < 5; ++k) e = 2 * e + 1;
        ASSERT_EQ(y1.data<float>()[i], e) << i;
        ASSERT_EQ(y2.data<float>()[i], e) << i;
    }
    EXPECT_THROW(ex.set_input("nope", x), UserError);
    EXPECT_THROW(ex.get_output("x"), UserError);
    EXPECT_THROW(ex.set_num_threads(-1), UserError);
}

TEST(GraphExecutorMemory, ProfileAggregatesCallSitesOfOneKernel) {
    TensorType t{DType::Float32, {kN}};
    std::vector<KernelCall> calls;
    for (int k = 0; k < 3; ++k) calls.push_back({"twice", twice, {k, k + 1}, {k}, double(2 * kN)});
    GraphExecutor ex(std::vector<TensorType>(4, t), {}, {0}, {3}, calls, nullptr);
    std::vector<KernelProfile> p = ex.profile(3);
    ASSERT_EQ(p.size(), 1u);
    EXPECT_EQ(p[0].calls, 3);
    EXPECT_EQ(p[0].nodes, (std::vector<int>{0, 1, 2}));
    EXPECT_EQ(p[0].flops, 6.0 * kN);
    EXPECT_EQ(p[0].bytes, 3 * 2 * 4.0 * kN);
}

}  // namespace
}  // namespace tessera::runtime
