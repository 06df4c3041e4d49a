// The --target cuda path with graph passes: fused groups (conv + bias + relu,
// conv + bias + add + relu) become one __global__ each with the default GPU
// schedule, compute what the unscheduled group computes under the loop-IR
// interpreter, and ResNet-18-shaped blocks compile with NVRTC.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/driver/cuda_model.h"
#include "engine/driver/target.h"
#include "engine/graph/passes/fuse_ops.h"
#include "engine/topi/lower_group.h"
#include "tests/engine/codegen/cuda/cuda_test_util.h"
#include "tests/engine/graph/passes/passes_test_util.h"

namespace tessera::codegen {
namespace {

using driver::build_cuda;
using driver::CudaModel;
using driver::cuda_pass_pipeline;

using namespace tessera::passes::testing;
using testing::HasSubstr;

// A ResNet basic block on x = [1, c, hw, hw]: conv-bias-relu, conv-bias,
// + x, relu, then a strided 1x1 conv to 2c channels (the downsample shape).
int add_block(graph::Graph& g, int x, int64_t c, const std::string& p) {
    std::map<std::string, graph::AttrValue> pad = {{"padding", std::vector<int64_t>{1, 1, 1, 1}}};
    int c1 = node(g, "nn.conv2d", p + "conv1",
                  {x, constant(g, p + "w1", {c, c, 3, 3}, 1), constant(g, p + "b1", {c}, 2)}, pad);
    int r1 = node(g, "nn.relu", p + "relu1", {c1});
    int c2 = node(g, "nn.conv2d", p + "conv2",
                  {r1, constant(g, p + "w2", {c, c, 3, 3}, 3), constant(g, p + "b2", {c}, 4)}, pad);
    int a = node(g, "add", p + "add", {c2, x});
    int r2 = node(g, "nn.relu", p + "relu2", {a});
    std::map<std::string, graph::AttrValue> down = {{"strides", std::vector<int64_t>{2, 2}}};
    return node(g, "nn.conv2d", p + "down",
                {r2, constant(g, p + "wd", {2 * c, c, 1, 1}, 5), constant(g, p + "bd", {2 * c}, 6)},
                down);
}

graph::Graph basic_block(int64_t c, int64_t hw) {
    graph::Graph g;
    g.name = "basic_block";
    g.outputs = {add_block(g, input(g, "x", {1, c, hw, hw}), c, "")};
    return g;
}

graph::Graph optimized(const graph::Graph& g) {
    driver::BuildOptions bo;
    bo.passes = cuda_pass_pipeline({}, 2);
    return driver::optimize(g, bo);
}

TEST(CudaFusion, ThePipelineKeepsNchwConvolutions) {
    std::vector<std::string> p = cuda_pass_pipeline({}, 3);
    EXPECT_THAT(p, testing::Contains("fuse_ops"));
    EXPECT_THAT(p, testing::Not(testing::Contains("convert_layout")));
}

TEST(CudaFusion, EveryFusedConvGroupIsOneKernelAndMatchesTheUnscheduledGroup) {
    TESSERA_SKIP_WITHOUT_NVRTC();
    graph::Graph g = optimized(basic_block(32, 8));
    std::vector<std::vector<int>> groups = passes::fused_groups(g);
    ASSERT_EQ(groups.size(), 3u);  // conv1+relu1, conv2+add+relu2, down
    std::vector<tir::PrimFunc> funcs;
    for (const auto& group : groups) {
        tir::PrimFunc plain = topi::lower_group(g, group).func;
        tir::PrimFunc gpu = topi::schedule_gpu_default(plain);
        size_t num_inputs = topi::lower_group(g, group).inputs.size();
        std::vector<runtime::NDArray> args = test::random_args(plain, num_inputs, 11);
        std::vector<runtime::NDArray> want = test::interpret_copy(plain, args);
        std::vector<runtime::NDArray> got = test::interpret_copy(gpu, args);
        for (size_t i = num_inputs; i < args.size(); ++i)
            EXPECT_TRUE(runtime::allclose(got[i], want[i], 1e-4, 1e-5))
                << plain->name << " param " << i;
        funcs.push_back(gpu);
    }
    CompiledCuda c = compile_cuda(funcs);
    ASSERT_EQ(c.funcs.size(), 3u);
    for (const CudaFunction& f : c.funcs) {
        EXPECT_EQ(f.kernels.size(), 1u) << f.name;
        // No padded copy; the SGEMM keeps the pre-epilogue values in registers, the
        // one-thread-per-output rule stores and reloads them (one workspace).
        EXPECT_EQ(f.workspaces.size(), f.kernels[0].shared_bytes > 0 ? 0u : 1u) << f.name;
    }
    // The 32-channel convs run the shared-memory SGEMM with the epilogue at the store.
    EXPECT_GT(c.funcs[0].kernels[0].shared_bytes, 0);
    EXPECT_GT(c.funcs[1].kernels[0].shared_bytes, 0);
    EXPECT_THAT(c.source, HasSubstr("fused_conv1_relu1_kernel("));
}

TEST(CudaFusion, SmallCnnGroupsBecomeOneKernelEach) {
    TESSERA_SKIP_WITHOUT_NVRTC();
    graph::Graph g = optimized(driver::load_model(std::string(TESSERA_SOURCE_DIR) +
                                                  "/resources/models/small_cnn/model.onnx"));
    std::shared_ptr<CudaModel> m = build_cuda(g);
    EXPECT_EQ(m->calls.size(), 7u);
    for (const runtime::CudaCall& call : m->calls)
        if (call.name.rfind("fused_conv", 0) == 0) {
            EXPECT_EQ(call.launches.size(), 1u) << call.name;
        }
    // The one-thread-per-output rule with the epilogue: check against the groups.
    for (const auto& group : passes::fused_groups(g)) {
        topi::LoweredGroup lg = topi::lower_group(g, group);
        tir::PrimFunc gpu = topi::schedule_gpu_default(lg.func);
        std::vector<runtime::NDArray> args = test::random_args(lg.func, lg.inputs.size(), 5);
        std::vector<runtime::NDArray> want = test::interpret_copy(lg.func, args);
        std::vector<runtime::NDArray> got = test::interpret_copy(gpu, args);
        for (size_t i = lg.inputs.size(); i < args.size(); ++i)
            EXPECT_TRUE(runtime::allclose(got[i], want[i], 1e-4, 1e-5)) << lg.func->name;
    }
}

TEST(CudaFusion, ResNet18ShapedModelCompilesWithNvrtcOneKernelPerGroup) {
    TESSERA_SKIP_WITHOUT_NVRTC();
    // The stem (7x7 stride 2 on 224x224, bias, relu) and blocks of the four
    // stages' shapes (64@56, 128@28, 256@14, 512@7), in one module.
    graph::Graph g;
    g.name = "resnet18_shaped";
    std::map<std::string, graph::AttrValue> a = {{"padding", std::vector<int64_t>{3, 3, 3, 3}},
                                                 {"strides", std::vector<int64_t>{2, 2}}};
    int h = node(g, "nn.conv2d", "stem",
                 {input(g, "x", {1, 3, 224, 224}), constant(g, "w", {64, 3, 7, 7}, 1),
                  constant(g, "b", {64}, 2)},
                 a);
    h = node(g, "nn.relu", "stem_relu", {h});
    std::map<std::string, graph::AttrValue> pool = {{"kernel", std::vector<int64_t>{2, 2}},
                                                    {"strides", std::vector<int64_t>{2, 2}}};
    h = node(g, "nn.max_pool2d", "pool", {h}, pool);
    int64_t c = 64;
    for (const char* stage : {"s1_", "s2_", "s3_", "s4_"}) {
        h = add_block(g, h, c, stage);
        c *= 2;
    }
    g.outputs = {h};
    std::shared_ptr<CudaModel> m = build_cuda(optimized(g));
    EXPECT_EQ(m->calls.size(), 2u + 4u * 3u);  // stem+relu, pool, 3 groups per block
    for (const runtime::CudaCall& call : m->calls) EXPECT_EQ(call.launches.size(), 1u) << call.name;
    EXPECT_THAT(m->compiled.ptx, HasSubstr(".entry fused_s4_conv2_s4_add_s4_relu2_kernel("));
}

}  // namespace
}  // namespace tessera::codegen
