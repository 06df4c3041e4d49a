// GraphExecutor with hand-written C++ kernels: y = relu(x + c), checked
// against plain loops on random data, plus profiling and input checks.
#include "engine/runtime/graph_executor.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "engine/core/error.h"

namespace tessera::runtime {
namespace {

constexpr int64_t kN = 2 * 3 * 5;
int g_add_calls = 0;

void add_kernel(void** args) {
    auto* a = static_cast<const float*>(args[0]);
    auto* b = static_cast<const float*>(args[1]);
    auto* out = static_cast<float*>(args[2]);
    for (int64_t i = 0; i < kN; ++i) out[i] = a[i] + b[i];
    ++g_add_calls;
}

void relu_kernel(void** args) {
    auto* a = static_cast<const float*>(args[0]);
    auto* out = static_cast<float*>(args[1]);
    for (int64_t i = 0; i < kN; ++i) out[i] = std::max(a[i], 0.0f);
}

// Values: 0 = x (input), 1 = c (constant), 2 = t = x + c, 3 = y = relu(t).
struct Fixture {
    TensorType type{DType::Float32, {2, 3, 5}};
    NDArray c = random_ndarray(type, 11);
    GraphExecutor make(std::shared_ptr<void> keep_alive = nullptr) {
        std::vector<NDArray> constants(4);
        constants[1] = c;
        std::vector<KernelCall> calls = {{"add", add_kernel, {0, 1, 2}, {0}, double(kN)},
                                         {"relu", relu_kernel, {2, 3}, {1}, double(kN)}};
        return GraphExecutor({type, type, type, type}, constants, {0}, {3}, calls, keep_alive);
    }
};

TEST(GraphExecutor, RunsKernelsInOrderOnRandomData) {
    Fixture f;
    GraphExecutor ex = f.make();
    NDArray x = random_ndarray(f.type, 5);
    ex.set_input(0, x);
    ex.run();
    NDArray y = ex.get_output(0);
    ASSERT_EQ(y.type(), f.type);
    int positive = 0;
    for (int64_t i = 0; i < kN; ++i) {
        float expected = std::max(x.data<float>()[i] + f.c.data<float>()[i], 0.0f);
        ASSERT_EQ(y.data<float>()[i], expected) << "element " << i;
        positive += expected > 0;
    }
    EXPECT_GT(positive, 0);
    EXPECT_LT(positive, kN);
}

TEST(GraphExecutor, OutputIsACopy) {
    Fixture f;
    GraphExecutor ex = f.make();
    ex.set_input(0, random_ndarray(f.type, 1));
    ex.run();
    NDArray a = ex.get_output(0);
    a.data<float>()[0] = 1234;
    EXPECT_NE(ex.get_output(0).data<float>()[0], 1234.0f);
}

TEST(GraphExecutor, RejectsWrongInputs) {
    Fixture f;
    GraphExecutor ex = f.make();
    EXPECT_THROW(ex.set_input(0, random_ndarray(TensorType{DType::Float32, {30}}, 1)), UserError);
    EXPECT_THROW(ex.set_input(1, random_ndarray(f.type, 1)), UserError);
    EXPECT_THROW(ex.get_output(1), UserError);
}

TEST(GraphExecutor, ProfilesEveryCall) {
    Fixture f;
    GraphExecutor ex = f.make();
    ex.set_input(0, random_ndarray(f.type, 2));
    int before = g_add_calls;
    std::vector<KernelProfile> p = ex.profile(5);
    EXPECT_EQ(g_add_calls - before, 5);
    ASSERT_EQ(p.size(), 2u);
    EXPECT_EQ(p[0].kernel, "add");
    EXPECT_EQ(p[1].kernel, "relu");
    EXPECT_EQ(p[1].nodes, std::vector<int>{1});
    EXPECT_EQ(p[0].flops, double(kN));
    EXPECT_GE(p[0].seconds, 0.0);
    EXPECT_THROW(ex.profile(0), UserError);
}

TEST(GraphExecutor, PeakCountsInputIntermediateAndOutputButNotConstants) {
    Fixture f;
    GraphExecutor ex = f.make();
    // x, t, y are alive together (120 bytes each, rounded to 128); c is a bound constant.
    EXPECT_EQ(ex.peak_bytes(), 3 * 128);
    EXPECT_EQ(ex.param_bytes(), kN * 4);
    EXPECT_EQ(ex.buffers()[1].kind, BufferInfo::Constant);
    EXPECT_EQ(ex.calls().size(), 2u);
}

TEST(GraphExecutor, KeepsCodeAlive) {
    Fixture f;
    auto owner = std::make_shared<int>(7);
    std::weak_ptr<int> weak = owner;
    {
        GraphExecutor ex = f.make(owner);
        owner.reset();
        EXPECT_FALSE(weak.expired());
    }
    EXPECT_TRUE(weak.expired());
}

}  // namespace
}  // namespace tessera::runtime
