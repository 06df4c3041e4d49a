// fuse_ops grouping by TVM's pattern rules, and fused lowering: one kernel per
// group whose outputs equal the unfused nodes'.
#include <gtest/gtest.h>

#include "engine/graph/passes/fuse_ops.h"
#include "engine/tir/interpreter.h"
#include "engine/tir/printer.h"
#include "engine/topi/lower_group.h"
#include "tests/engine/graph/passes/passes_test_util.h"

namespace tessera::passes {
namespace {

using namespace testing;
using Groups = std::vector<std::vector<int>>;

Groups groups_after_fusion(const graph::Graph& g) { return fused_groups(fuse_ops(g, {})); }

// conv(x, w, b) -> relu -> add(., skip) -> conv2 -> relu2
graph::Graph conv_block() {
    graph::Graph g;
    int x = input(g, "x", {1, 3, 6, 6});
    int w = constant(g, "w", {4, 3, 3, 3}, 1);
    int b = constant(g, "b", {4}, 2);
    int w2 = constant(g, "w2", {4, 4, 1, 1}, 3);
    int skip = constant(g, "skip", {1, 4, 6, 6}, 4);
    std::map<std::string, graph::AttrValue> pad = {{"padding", std::vector<int64_t>{1, 1, 1, 1}}};
    int c = node(g, "nn.conv2d", "conv", {x, w, b}, pad);
    int r = node(g, "nn.relu", "relu", {c});
    int a = node(g, "add", "add", {r, skip});
    int c2 = node(g, "nn.conv2d", "conv2", {a, w2});
    int r2 = node(g, "nn.relu", "relu2", {c2});
    g.outputs = {r2};
    return g;
}

TEST(FuseOps, ConvBiasReluAddIsOneGroup) {
    graph::Graph g = conv_block();
    EXPECT_EQ(groups_after_fusion(g), (Groups{{0, 1, 2}, {3, 4}}));
    graph::Graph f = fuse_ops(g, {});
    EXPECT_EQ(f.nodes[0].attr_int(kFuseGroupAttr, -1), 0);
    EXPECT_EQ(f.nodes[2].attr_int(kFuseGroupAttr, -1), 0);
    EXPECT_EQ(f.nodes[4].attr_int(kFuseGroupAttr, -1), 1);
}

TEST(FuseOps, ElementwiseChainWithBranchesIsOneGroup) {
    graph::Graph g;
    int x = input(g, "x", {2, 8});
    int k = constant(g, "k", {8}, 1);
    int a = node(g, "nn.relu", "a", {x});
    int b = node(g, "multiply", "b", {a, k});  // broadcast
    int c = node(g, "subtract", "c", {a, x});  // a second reader of a: a diamond
    int d = node(g, "add", "d", {b, c});
    int e = node(g, "nn.relu", "e", {d});
    g.outputs = {e};
    EXPECT_EQ(groups_after_fusion(g), (Groups{{0, 1, 2, 3, 4}}));
}

TEST(FuseOps, ElementwiseProducersJoinAReduction) {
    graph::Graph g;
    int x = input(g, "x", {2, 4, 5});
    int a = node(g, "nn.relu", "a", {x});
    int b = node(g, "multiply", "b", {a, a});
    int s = node(g, "reduce_sum", "s", {b}, {{"axes", std::vector<int64_t>{2}}, {"keepdims", int64_t(0)}});
    int t = node(g, "nn.relu", "t", {s});  // after a reduction: its own group
    g.outputs = {t};
    EXPECT_EQ(groups_after_fusion(g), (Groups{{0, 1, 2}, {3}}));
}

TEST(FuseOps, OpaqueOpsAndGraphOutputsStopFusion) {
    graph::Graph g;
    int x = input(g, "x", {2, 8});
    int a = node(g, "nn.relu", "a", {x});
    int s = node(g, "nn.softmax", "s", {a}, {{"axis", int64_t(1)}});
    int b = node(g, "nn.relu", "b", {s});
    int c = node(g, "multiply", "c", {b, b});
    g.outputs = {c, b};  // b is an output: c cannot swallow it
    EXPECT_EQ(groups_after_fusion(g), (Groups{{0}, {1}, {2}, {3}}));
}

TEST(FuseOps, WithoutFusionEveryNodeIsAGroup) {
    EXPECT_EQ(fused_groups(conv_block()), (Groups{{0}, {1}, {2}, {3}, {4}}));
}

TEST(LowerGroup, InlinesBoundaryStagesIntoTheAnchorsOutput) {
    graph::Graph g = fuse_ops(conv_block(), {});
    topi::LoweredGroup lg = topi::lower_group(g, {0, 1, 2});
    // Params: x, w, b, skip, then the group's output (add).
    ASSERT_EQ(lg.args.size(), 5u);
    EXPECT_EQ(g.values[size_t(lg.args.back())].name, "add");
    std::string text = tir::print(lg.func);
    EXPECT_NE(text.find("def fused_conv_relu_add"), std::string::npos) << text;
    EXPECT_NE(text.find("block(\"conv2d_nchw\")"), std::string::npos) << text;
    EXPECT_NE(text.find("block(\"pad_temp\")"), std::string::npos) << text;
    EXPECT_EQ(text.find("T_relu"), std::string::npos) << text;     // inlined
    EXPECT_EQ(text.find("T_bias_add"), std::string::npos) << text;  // inlined
}

TEST(LowerGroup, FusedKernelEqualsTheUnfusedNodes) {
    graph::Graph g = fuse_ops(conv_block(), {});
    std::vector<runtime::NDArray> in = driver::random_inputs(g, 5);
    std::vector<runtime::NDArray> expected = driver::interpret_graph(g, in);
    // Run each group's PrimFunc in the loop-IR interpreter over graph buffers.
    std::vector<runtime::NDArray> buf(g.values.size());
    for (size_t v = 0; v < g.values.size(); ++v) {
        const auto& val = g.values[v];
        if (val.is_constant())
            buf[v] = runtime::NDArray::from_bytes(val.type, val.constant->bytes.data(),
                                                  val.constant->bytes.size());
    }
    buf[size_t(g.inputs[0])] = in[0];
    int kernels = 0;
    for (const auto& group : fused_groups(g)) {
        topi::LoweredGroup lg = topi::lower_group(g, group);
        std::vector<void*> args;
        for (int v : lg.outputs) buf[size_t(v)] = runtime::NDArray::empty(g.values[size_t(v)].type);
        for (int v : lg.args) args.push_back(buf[size_t(v)].raw());
        tir::interpret(lg.func, args);
        ++kernels;
    }
    EXPECT_EQ(kernels, 2);
    runtime::NDArray out = buf[size_t(g.outputs[0])];
    EXPECT_TRUE(runtime::allclose(out, expected[0], 1e-5, 1e-6));
}

TEST(LowerGroup, BuildCompilesOneKernelPerGroupWithTheSameResults) {
    graph::Graph g = conv_block();
    std::vector<runtime::NDArray> in = driver::random_inputs(g, 9);
    std::vector<runtime::NDArray> expected = driver::interpret_graph(g, in);
    driver::BuildOptions fused;
    fused.passes = {"-convert_layout"};  // NCHW convs: the groups as fuse_ops made them
    auto model = driver::build(g, fused);
    EXPECT_EQ(model->executor->calls().size(), 2u);
    EXPECT_EQ(model->executor->calls()[0].nodes, (std::vector<int>{0, 1, 2}));
    driver::BuildOptions unfused;
    unfused.opt_level = 0;
    auto plain = driver::build(g, unfused);
    EXPECT_EQ(plain->executor->calls().size(), 5u);
    std::vector<runtime::NDArray> a = model->run(in), b = plain->run(in);
    EXPECT_TRUE(runtime::allclose(a[0], expected[0], 1e-5, 1e-6));
    EXPECT_TRUE(runtime::allclose(b[0], expected[0], 1e-5, 1e-6));
}

}  // namespace
}  // namespace tessera::passes
