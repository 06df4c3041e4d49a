// One model, many shapes (driver::ShapeSpecializations) and the compiled-
// kernel cache under it: a new batch compiles only the kernels whose loop IR
// changed, a shape seen before builds nothing, equal kernels of one build are
// compiled once, and every specialisation computes what ONNX's test data says.
#include "engine/driver/shape_specializations.h"

#include <gtest/gtest.h>

#include "engine/driver/driver.h"
#include "engine/frontend/onnx/onnx_importer.h"
#include "tests/engine/graph/graph_test_util.h"

namespace tessera::driver {
namespace {

const std::string kTwoPaths =
    std::string(TESSERA_SOURCE_DIR) + "/tests/data/onnx_models/symbolic_two_paths";

std::vector<std::string> set_files(int k, const std::string& prefix) {
    return test_data_files(kTwoPaths + "/test_data_set_" + std::to_string(k), prefix);
}

// Runs a specialisation on set k's inputs and checks set k's outputs.
void expect_matches_set(ShapeSpecializations::Use& use, int k) {
    std::vector<runtime::NDArray> given;
    for (const std::string& f : set_files(k, "input")) given.push_back(frontend::read_tensor_pb(f));
    std::vector<runtime::NDArray> out = use.model->run(match_test_inputs(use.graph, given));
    std::vector<runtime::NDArray> want =
        read_test_data(kTwoPaths + "/test_data_set_" + std::to_string(k), "output");
    ASSERT_EQ(out.size(), want.size());
    for (size_t i = 0; i < out.size(); ++i) {
        ASSERT_EQ(out[i].shape(), want[i].shape()) << "set " << k << " output " << i;
        EXPECT_TRUE(runtime::allclose(out[i], want[i], 1e-5, 1e-6))
            << "set " << k << " output " << i;
    }
}

runtime::KernelFn kernel_fn(const CompiledModel& m, const std::string& name) {
    for (const runtime::KernelCall& c : m.executor->calls())
        if (c.kernel == name) return c.fn;
    return nullptr;
}

TEST(ShapeSpecializations, ANewBatchCompilesOnlyTheKernelsWhoseShapesChanged) {
    ShapeSpecializations models(kTwoPaths + "/model.onnx", BuildOptions{});
    ShapeSpecializations::Use one = models.for_input_files(set_files(0, "input"));
    EXPECT_TRUE(one.built);
    EXPECT_EQ(shapes_text(one.shapes), "x: 1x8");
    EXPECT_EQ(one.kernels, 3);
    EXPECT_EQ(one.compiled, 3);
    expect_matches_set(one, 0);

    ShapeSpecializations::Use three = models.for_input_files(set_files(1, "input"));
    EXPECT_TRUE(three.built);
    EXPECT_EQ(shapes_text(three.shapes), "x: 3x8");
    EXPECT_EQ(three.compiled, 2);  // relu and matmul over x; the sigmoid over z is unchanged
    ASSERT_EQ(three.model->kernel_compiled.size(), 3u);
    for (size_t k = 0; k < three.model->kernels.size(); ++k) {
        const std::string& name = three.model->kernels[k]->name;
        EXPECT_EQ(three.model->kernel_compiled[k], name != "sigmoid") << name;
    }
    // The reused kernel is the very code the first shape compiled.
    EXPECT_EQ(kernel_fn(*three.model, "sigmoid"), kernel_fn(*one.model, "sigmoid"));
    EXPECT_NE(kernel_fn(*three.model, "matmul"), kernel_fn(*one.model, "matmul"));
    expect_matches_set(three, 1);

    ShapeSpecializations::Use again = models.for_input_files(set_files(0, "input"));
    EXPECT_FALSE(again.built);
    EXPECT_EQ(again.compiled, 0);
    EXPECT_EQ(again.model, one.model);
    EXPECT_EQ(models.size(), 2u);
    expect_matches_set(again, 0);
    // Shapes given by name reach the same specialisation.
    EXPECT_EQ(models.for_shapes({{"x", {3, 8}}}).model, three.model);
}

TEST(KernelCache, EqualKernelsOfOneBuildAreCompiledOnceAndReusedAcrossBuilds) {
    using namespace graph::testing;
    graph::Graph g;
    const int a = input(g, "a", f32({4, 16}));
    const int b = input(g, "b", f32({4, 16}));
    const int ra = node(g, "nn.relu", "relu_a", {a}, f32({4, 16}));
    const int rb = node(g, "nn.relu", "relu_b", {b}, f32({4, 16}));
    g.outputs = {ra, rb};
    BuildOptions o;
    o.kernel_cache = std::make_shared<KernelCache>();
    std::shared_ptr<CompiledModel> m = build(g, o);
    ASSERT_EQ(m->kernels.size(), 2u);
    EXPECT_EQ(m->kernels_compiled(), 1);  // the second relu is the first one's code
    EXPECT_EQ(o.kernel_cache->size(), 1u);
    runtime::NDArray x = runtime::NDArray::empty(f32({4, 16}));
    runtime::NDArray y = runtime::NDArray::empty(f32({4, 16}));
    for (int i = 0; i < 64; ++i) {
        static_cast<float*>(x.raw())[i] = float(i % 7) - 3.f;
        static_cast<float*>(y.raw())[i] = 2.f - float(i % 5);
    }
    std::vector<runtime::NDArray> out = m->run({x, y});
    for (int i = 0; i < 64; ++i) {
        EXPECT_EQ(static_cast<float*>(out[0].raw())[i], std::max(0.f, float(i % 7) - 3.f));
        EXPECT_EQ(static_cast<float*>(out[1].raw())[i], std::max(0.f, 2.f - float(i % 5)));
    }
    // Another build with the cache compiles nothing; another opt level compiles again.
    EXPECT_EQ(build(g, o)->kernels_compiled(), 0);
    o.opt_level = 1;
    EXPECT_EQ(build(g, o)->kernels_compiled(), 1);
}

}  // namespace
}  // namespace tessera::driver
