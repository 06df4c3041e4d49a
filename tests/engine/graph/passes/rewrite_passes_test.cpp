// fold_constants, simplify_inference, eliminate_common_subexpr,
// dead_code_elimination and fold_scale_axis on hand-built graphs: the graph
// text after the pass, and equal outputs before and after on random data.
#include <gtest/gtest.h>

#include "engine/graph/passes/dead_code_elimination.h"
#include "engine/graph/passes/eliminate_common_subexpr.h"
#include "engine/graph/passes/fold_constants.h"
#include "engine/graph/passes/fold_scale_axis.h"
#include "engine/graph/passes/simplify_inference.h"
#include "tests/engine/graph/passes/passes_test_util.h"

namespace tessera::passes {
namespace {

using namespace testing;

const std::map<std::string, graph::AttrValue> kPad1 = {
    {"padding", std::vector<int64_t>{1, 1, 1, 1}}};

TEST(FoldConstants, EvaluatesAllConstantSubgraphs) {
    graph::Graph g;
    int x = input(g, "x", {1, 4, 5, 5});
    int w = constant(g, "w", {4, 4, 3, 3}, 1);
    int s1 = constant(g, "s1", {4, 1, 1}, 2);
    int s2 = constant(g, "s2", {4, 1, 1}, 3);
    int m = node(g, "multiply", "m", {s1, s2});
    int m2 = node(g, "nn.relu", "m2", {m});
    int c = node(g, "nn.conv2d", "c", {x, w}, kPad1);
    int y = node(g, "add", "y", {c, m2});
    g.outputs = {y};
    graph::Graph after = fold_constants(g, {});
    EXPECT_EQ(graph::print(after),
              "def @main(%x: Tensor[(1, 4, 5, 5), float32]) {\n"
              "  %w = meta[Constant][0] /* ty=Tensor[(4, 4, 3, 3), float32] */\n"
              "  %m2 = meta[Constant][1] /* ty=Tensor[(4, 1, 1), float32] */\n"
              "  %c = nn.conv2d(%x, %w, padding=[1, 1, 1, 1]) /* ty=Tensor[(1, 4, 5, 5), float32] */\n"
              "  %y = add(%c, %m2) /* ty=Tensor[(1, 4, 5, 5), float32] */\n"
              "  %y\n"
              "}\n");
    expect_same_outputs(g, after);
}

TEST(FoldConstants, KeepsNodesThatProduceGraphOutputs) {
    graph::Graph g;
    int x = input(g, "x", {3});
    int a = constant(g, "a", {3}, 1);
    int r = node(g, "nn.relu", "r", {a});
    int y = node(g, "add", "y", {x, a});
    g.outputs = {y, r};
    graph::Graph after = fold_constants(g, {});
    EXPECT_EQ(graph::print(after), graph::print(g));
}

TEST(SimplifyInference, FoldsBatchNormIntoConv) {
    graph::Graph g;
    int x = input(g, "x", {1, 3, 6, 6});
    int w = constant(g, "w", {4, 3, 3, 3}, 1);
    int b = constant(g, "b", {4}, 2);
    int gamma = constant(g, "gamma", {4}, 3);
    int beta = constant(g, "beta", {4}, 4);
    int mean = constant(g, "mean", {4}, 5);
    int var = constant(g, "var", {4}, 6, 0.75f);
    int c = node(g, "nn.conv2d", "c", {x, w, b}, kPad1);
    int bn = node(g, "nn.batch_norm", "bn", {c, gamma, beta, mean, var}, {{"epsilon", 1e-3}});
    int y = node(g, "nn.relu", "y", {bn});
    g.outputs = {y};
    graph::Graph after = simplify_inference(g, {});
    EXPECT_EQ(graph::print(after),
              "def @main(%x: Tensor[(1, 3, 6, 6), float32]) {\n"
              "  %w_bn = meta[Constant][0] /* ty=Tensor[(4, 3, 3, 3), float32] */\n"
              "  %c_bn_bias = meta[Constant][1] /* ty=Tensor[(4,), float32] */\n"
              "  %bn = nn.conv2d(%x, %w_bn, %c_bn_bias, padding=[1, 1, 1, 1]) /* ty=Tensor[(1, 4, 6, 6), float32], name=\"c\" */\n"
              "  %y = nn.relu(%bn) /* ty=Tensor[(1, 4, 6, 6), float32] */\n"
              "  %y\n"
              "}\n");
    expect_same_outputs(g, after);
}

TEST(SimplifyInference, FoldsBatchNormIntoGemm) {
    graph::Graph g;
    int a = input(g, "a", {2, 5});
    int bw = constant(g, "bw", {3, 5}, 1);
    int cb = constant(g, "cb", {3}, 2);
    int gamma = constant(g, "gamma", {3}, 3);
    int beta = constant(g, "beta", {3}, 4);
    int mean = constant(g, "mean", {3}, 5);
    int var = constant(g, "var", {3}, 6, 0.5f);
    int gm = node(g, "nn.gemm", "gm", {a, bw, cb},
                  {{"transB", int64_t(1)}, {"beta", 0.5}, {"alpha", 2.0}});
    int bn = node(g, "nn.batch_norm", "bn", {gm, gamma, beta, mean, var});
    g.outputs = {bn};
    graph::Graph after = simplify_inference(g, {});
    EXPECT_EQ(count_op(after, "nn.batch_norm"), 0);
    EXPECT_EQ(count_op(after, "nn.gemm"), 1);
    expect_same_outputs(g, after);
}

TEST(SimplifyInference, DecomposesBatchNormWithoutAProducerToFoldInto) {
    graph::Graph g;
    int x = input(g, "x", {2, 3, 4});
    int gamma = constant(g, "gamma", {3}, 3);
    int beta = constant(g, "beta", {3}, 4);
    int mean = constant(g, "mean", {3}, 5);
    int var = constant(g, "var", {3}, 6, 0.25f);
    int bn = node(g, "nn.batch_norm", "bn", {x, gamma, beta, mean, var});
    g.outputs = {bn};
    graph::Graph after = simplify_inference(g, {});
    EXPECT_EQ(graph::print(after),
              "def @main(%x: Tensor[(2, 3, 4), float32]) {\n"
              "  %bn_scale = meta[Constant][0] /* ty=Tensor[(3, 1), float32] */\n"
              "  %bn_shift = meta[Constant][1] /* ty=Tensor[(3, 1), float32] */\n"
              "  %bn_scaled = multiply(%x, %bn_scale) /* ty=Tensor[(2, 3, 4), float32], name=\"bn_mul\" */\n"
              "  %bn = add(%bn_scaled, %bn_shift) /* ty=Tensor[(2, 3, 4), float32] */\n"
              "  %bn\n"
              "}\n");
    expect_same_outputs(g, after);
}

TEST(SimplifyInference, DropsIdentityReshapesAndMergesChains) {
    graph::Graph g;
    int x = input(g, "x", {2, 6});
    int id = node(g, "reshape", "identity", {x}, {{"newshape", std::vector<int64_t>{2, 6}}});
    int r1 = node(g, "reshape", "r1", {id}, {{"newshape", std::vector<int64_t>{3, 4}}});
    int r2 = node(g, "reshape", "r2", {r1}, {{"newshape", std::vector<int64_t>{12}}});
    int y = node(g, "nn.relu", "y", {r2});
    g.outputs = {y};
    graph::Graph after = dead_code_elimination(simplify_inference(g, {}), {});
    EXPECT_EQ(graph::print(after),
              "def @main(%x: Tensor[(2, 6), float32]) {\n"
              "  %r2 = reshape(%x, newshape=[12]) /* ty=Tensor[(12,), float32] */\n"
              "  %y = nn.relu(%r2) /* ty=Tensor[(12,), float32] */\n"
              "  %y\n"
              "}\n");
    expect_same_outputs(g, after);
}

TEST(SimplifyInference, SquaresAreProductsOtherPowersStay) {
    // x ^ 2 with a constant exponent is x * x (T5's RMSNorm called a libm pow
    // per element); x ^ 3 and a runtime exponent stay powers.
    graph::Graph g;
    int x = input(g, "x", {4, 8});
    int e = input(g, "e", {});
    int two = constant(g, "two", {}, 1, 2.f);
    int three = constant(g, "three", {}, 1, 3.f);
    int sq = node(g, "power", "sq", {x, two});
    int cube = node(g, "power", "cube", {x, three});
    int rt = node(g, "power", "rt", {sq, e});
    int y = node(g, "add", "y", {cube, rt});
    g.outputs = {y};
    graph::Graph after = dead_code_elimination(simplify_inference(g, {}), {});
    const std::string text = graph::print(after);
    EXPECT_NE(text.find("%sq = multiply(%x, %x)"), std::string::npos) << text;
    EXPECT_NE(text.find("%cube = power(%x, %three)"), std::string::npos) << text;
    EXPECT_NE(text.find("%rt = power(%sq, %e)"), std::string::npos) << text;
    expect_same_outputs(g, after);
}

TEST(EliminateCommonSubexpr, MergesRepeatedNodes) {
    graph::Graph g;
    int x = input(g, "x", {2, 3});
    int a = node(g, "nn.relu", "a", {x});
    int b = node(g, "nn.relu", "b", {x});
    int a2 = node(g, "multiply", "a2", {a, a});
    int b2 = node(g, "multiply", "b2", {b, b});
    int y = node(g, "subtract", "y", {a2, b2});
    int z = node(g, "add", "z", {y, a});
    g.outputs = {z};
    graph::Graph after = eliminate_common_subexpr(g, {});
    EXPECT_EQ(graph::print(after),
              "def @main(%x: Tensor[(2, 3), float32]) {\n"
              "  %a = nn.relu(%x) /* ty=Tensor[(2, 3), float32] */\n"
              "  %a2 = multiply(%a, %a) /* ty=Tensor[(2, 3), float32] */\n"
              "  %y = subtract(%a2, %a2) /* ty=Tensor[(2, 3), float32] */\n"
              "  %z = add(%y, %a) /* ty=Tensor[(2, 3), float32] */\n"
              "  %z\n"
              "}\n");
    expect_same_outputs(g, after);
}

TEST(DeadCodeElimination, RemovesUnusedNodesAndConstants) {
    graph::Graph g;
    int x = input(g, "x", {4});
    int unused_in = input(g, "unused", {4});
    int k = constant(g, "k", {4}, 1);
    constant(g, "orphan", {4}, 2);
    int dead = node(g, "multiply", "dead", {x, k});
    node(g, "nn.relu", "dead2", {dead});
    node(g, "nn.relu", "dead3", {unused_in});
    int y = node(g, "add", "y", {x, x});
    g.outputs = {y};
    graph::Graph after = dead_code_elimination(g, {});
    EXPECT_EQ(graph::print(after),
              "def @main(%x: Tensor[(4,), float32], %unused: Tensor[(4,), float32]) {\n"
              "  %y = add(%x, %x) /* ty=Tensor[(4,), float32] */\n"
              "  %y\n"
              "}\n");
    expect_same_outputs(g, after);
}

TEST(FoldScaleAxis, FoldsPerChannelMultiplyAndAddIntoConv) {
    graph::Graph g;
    int x = input(g, "x", {1, 3, 5, 5});
    int w = constant(g, "w", {4, 3, 3, 3}, 1);
    int s = constant(g, "s", {4, 1, 1}, 2);
    int t = constant(g, "t", {1, 4, 1, 1}, 3);
    int c = node(g, "nn.conv2d", "c", {x, w}, kPad1);
    int m = node(g, "multiply", "m", {s, c});
    int a = node(g, "add", "a", {m, t});
    int y = node(g, "nn.relu", "y", {a});
    g.outputs = {y};
    graph::Graph after = fold_scale_axis(g, {});
    EXPECT_EQ(graph::print(after),
              "def @main(%x: Tensor[(1, 3, 5, 5), float32]) {\n"
              "  %w_scaled = meta[Constant][0] /* ty=Tensor[(4, 3, 3, 3), float32] */\n"
              "  %c_bias_1 = meta[Constant][1] /* ty=Tensor[(4,), float32] */\n"
              "  %a = nn.conv2d(%x, %w_scaled, %c_bias_1, padding=[1, 1, 1, 1]) /* ty=Tensor[(1, 4, 5, 5), float32], name=\"c\" */\n"
              "  %y = nn.relu(%a) /* ty=Tensor[(1, 4, 5, 5), float32] */\n"
              "  %y\n"
              "}\n");
    expect_same_outputs(g, after);
}

TEST(FoldScaleAxis, LeavesNonChannelScalesAlone) {
    graph::Graph g;
    int x = input(g, "x", {1, 3, 5, 5});
    int w = constant(g, "w", {4, 3, 3, 3}, 1);
    int s = constant(g, "s", {5, 5}, 2);
    int c = node(g, "nn.conv2d", "c", {x, w}, kPad1);
    int m = node(g, "multiply", "m", {c, s});
    g.outputs = {m};
    EXPECT_EQ(graph::print(fold_scale_axis(g, {})), graph::print(g));
}

}  // namespace
}  // namespace tessera::passes
