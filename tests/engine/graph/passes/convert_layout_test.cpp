// The convert_layout pass: which nodes it rewrites, where the layout
// transforms go, and that the whole graph computes the same (interpreter and
// the compiled default path).
#include "engine/graph/passes/convert_layout.h"

#include <gtest/gtest.h>

#include "engine/driver/driver.h"
#include "engine/graph/passes/pass_manager.h"
#include "tests/engine/graph/passes/passes_test_util.h"

namespace tessera::passes {
namespace {

using namespace testing;

std::map<std::string, graph::AttrValue> pad1() {
    return {{"padding", std::vector<int64_t>{1, 1, 1, 1}}};
}

std::vector<std::string> ops(const graph::Graph& g) {
    std::vector<std::string> r;
    for (const auto& n : g.nodes) r.push_back(n.op);
    return r;
}

// conv(bias) -> relu -> {conv 3x3, conv 1x1} -> add: 5 and 7 channels, not
// multiples of any block.
graph::Graph conv_chain() {
    graph::Graph g;
    int x = input(g, "x", {1, 5, 10, 9});
    int w1 = constant(g, "w1", {7, 5, 3, 3}, 1);
    int b1 = constant(g, "b1", {7}, 2);
    int c1 = node(g, "nn.conv2d", "c1", {x, w1, b1}, pad1());
    int r = node(g, "nn.relu", "r", {c1});
    int w2 = constant(g, "w2", {6, 7, 3, 3}, 3);
    int c2 = node(g, "nn.conv2d", "c2", {r, w2}, pad1());
    int w3 = constant(g, "w3", {6, 7, 1, 1}, 4);
    int c3 = node(g, "nn.conv2d", "c3", {r, w3});
    int a = node(g, "add", "a", {c2, c3});
    g.outputs = {a};
    return g;
}

TEST(ConvertLayout, KeepsAConvChainBlockedWithTransformsOnlyAtTheBorders) {
    graph::Graph g = conv_chain();
    graph::Graph after = convert_layout(g, {});
    graph::verify(after);
    EXPECT_EQ(ops(after), (std::vector<std::string>{"layout_transform", "nn.conv2d_NCHWc",
                                                    "nn.relu", "nn.conv2d_NCHWc", "nn.conv2d_NCHWc",
                                                    "add", "layout_transform"}));
    const int64_t b = layout_lanes();
    const std::string text = graph::print(after);
    // The input keeps its 5 channels in one block (5 < lanes); outputs are lane-blocked.
    EXPECT_NE(text.find("dst_layout=\"NCHW5c\""), std::string::npos) << text;
    EXPECT_NE(text.find("src_layout=\"NCHW" + std::to_string(b) + "c\""), std::string::npos)
        << text;
    EXPECT_NE(text.find("ty=Tensor[(1, 1, 10, 9, " + std::to_string(b) + "), float32]"),
              std::string::npos)
        << text;
    expect_same_outputs(g, after);
}

TEST(ConvertLayout, ChannelsBetweenOneAndTwoVectorsAreOneBlockNotAPaddedPair) {
    // conv 5 -> lanes + 4 channels -> relu -> convs to 6 (3x3 and 1x1): the
    // middle value is one block of lanes + 4 (two vectors), so the second
    // convs reduce over it unpadded; compiled, it matches the interpreter.
    const int64_t lanes = layout_lanes(), mid = lanes + 4;
    graph::Graph g;
    int x = input(g, "x", {1, 5, 9, 11});
    int c1 = node(g, "nn.conv2d", "c1",
                  {x, constant(g, "w1", {mid, 5, 3, 3}, 1), constant(g, "b1", {mid}, 2)}, pad1());
    int r = node(g, "nn.relu", "r", {c1});
    int c2 = node(g, "nn.conv2d", "c2", {r, constant(g, "w2", {6, mid, 3, 3}, 3)}, pad1());
    int c3 = node(g, "nn.conv2d", "c3", {r, constant(g, "w3", {6, mid, 1, 1}, 4)});
    g.outputs = {node(g, "add", "a", {c2, c3})};
    graph::Graph after = convert_layout(g, {});
    graph::verify(after);
    const std::string text = graph::print(after);
    EXPECT_NE(text.find("ty=Tensor[(1, 1, 9, 11, " + std::to_string(mid) + "), float32]"),
              std::string::npos)
        << text;
    EXPECT_EQ(text.find("ty=Tensor[(1, 2, 9, 11, " + std::to_string(lanes) + "), float32]"),
              std::string::npos)
        << text;
    expect_same_outputs(g, after);
    driver::BuildOptions o;
    o.opt_level = 2;
    auto model = driver::build(g, o);
    std::vector<runtime::NDArray> in = driver::random_inputs(g, 6);
    std::vector<runtime::NDArray> want = driver::interpret_graph(g, in);
    std::vector<runtime::NDArray> got = model->run(in);
    EXPECT_TRUE(runtime::allclose(got[0], want[0], 1e-4, 1e-4))
        << runtime::compare(got[0], want[0]).max_abs;
}

TEST(ConvertLayout, AConvOfFewerThanFourInputChannelsAndUnderAVectorOfOutputsStaysNchw) {
    // An RGB conv to 8 channels (the bundled example's first): blocked, its
    // blocks would be mostly padding where a vector holds 16 floats; it stays
    // NCHW there and the next conv's input is packed. With 8-float vectors,
    // or 16 output channels, it is blocked. Outputs as before either way.
    for (int64_t k : {8, 16}) {
        graph::Graph g;
        int x = input(g, "x", {1, 3, 12, 12});
        int c1 = node(g, "nn.conv2d", "c1", {x, constant(g, "w1", {k, 3, 3, 3}, 5)}, pad1());
        int r = node(g, "nn.relu", "r", {c1});
        g.outputs = {node(g, "nn.conv2d", "c2", {r, constant(g, "w2", {16, k, 3, 3}, 6)}, pad1())};
        graph::Graph after = convert_layout(g, {});
        graph::verify(after);
        const bool nchw = k < layout_lanes();
        EXPECT_EQ(count_op(after, "nn.conv2d"), nchw ? 1 : 0) << graph::print(after);
        EXPECT_EQ(count_op(after, "nn.conv2d_NCHWc"), nchw ? 1 : 2) << graph::print(after);
        expect_same_outputs(g, after);
    }
}

TEST(ConvertLayout, CompiledAtOptLevel3MatchesTheInterpreter) {
    graph::Graph g = conv_chain();
    driver::BuildOptions o;
    o.opt_level = 3;
    auto model = driver::build(g, o);
    EXPECT_EQ(count_op(model->graph, "nn.conv2d_NCHWc"), 3);
    std::vector<runtime::NDArray> in = driver::random_inputs(g, 5);
    std::vector<runtime::NDArray> want = driver::interpret_graph(g, in);
    std::vector<runtime::NDArray> got = model->run(in);
    runtime::Difference d = runtime::compare(got[0], want[0]);
    EXPECT_TRUE(runtime::allclose(got[0], want[0], 1e-4, 1e-4)) << d.max_abs;
}

TEST(ConvertLayout, AnNchwReaderGetsOneUnpackAndOtherConvsStay) {
    graph::Graph g;
    int x = input(g, "x", {1, 16, 6, 6});
    int w1 = constant(g, "w1", {8, 16, 3, 3}, 1);
    int c1 = node(g, "nn.conv2d", "c1", {x, w1}, pad1());
    int r = node(g, "nn.relu", "r", {c1});
    int s = node(g, "sigmoid", "s", {r});  // runs in NCHW (sigmoid(0) != 0)
    int w2 = constant(g, "w2", {4, 8, 1, 1}, 2);
    int c2 = node(g, "nn.conv2d", "c2", {r, w2});
    int wg = constant(g, "wg", {8, 1, 3, 3}, 3);
    // Grouped with a channel multiplier of 2 (not depthwise): stays NCHW.
    int dw = node(g, "nn.conv2d", "dw", {c2, wg}, {{"groups", int64_t(4)}});
    g.outputs = {s, dw};
    graph::Graph after = convert_layout(g, {});
    graph::verify(after);
    EXPECT_EQ(count_op(after, "nn.conv2d_NCHWc"), 2);
    EXPECT_EQ(count_op(after, "nn.conv2d"), 1);
    EXPECT_EQ(count_op(after, "layout_transform"), 3);  // pack x; unpack r (once) and c2
    expect_same_outputs(g, after);
}

TEST(ConvertLayout, LeavesConvWithRuntimeWeightsAlone) {
    graph::Graph g;
    int x = input(g, "x", {1, 3, 5, 5});
    int w = input(g, "w", {4, 3, 3, 3});
    int c = node(g, "nn.conv2d", "c", {x, w});
    g.outputs = {c};
    graph::Graph after = convert_layout(g, {});
    EXPECT_EQ(graph::print(after), graph::print(g));
}

TEST(ConvertLayout, RunsByNameAndFromOptLevel2) {
    EXPECT_NE(find_pass("convert_layout"), nullptr);
    auto has = [](const std::vector<std::string>& p) {
        return std::find(p.begin(), p.end(), "convert_layout") != p.end();
    };
    EXPECT_FALSE(has(default_pipeline(1)));
    EXPECT_TRUE(has(default_pipeline(2)));
    EXPECT_TRUE(has(default_pipeline(3)));
}

TEST(ConvertLayout, PacksWeightsIntoBlocksWithZeroPadding) {
    // K=3, C=2, 1x1, ib=2, ob=4: (1, 1, 1, 1, 2, 4), [c][k] with k=3 padded.
    std::vector<float> p = pack_conv2d_weight({1, 2, 3, 4, 5, 6}, 3, 2, 1, 1, 2, 4);
    EXPECT_EQ(p, (std::vector<float>{1, 3, 5, 0, 2, 4, 6, 0}));
}

}  // namespace
}  // namespace tessera::passes
