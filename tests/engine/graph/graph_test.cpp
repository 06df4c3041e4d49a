// Graph basics: types, attributes, lookup, printing, verification, FLOPs.
#include "engine/graph/graph.h"

#include <gtest/gtest.h>

#include "engine/core/error.h"
#include "tests/engine/graph/graph_test_util.h"

namespace tessera::graph {
namespace {

using namespace testing;

// conv -> relu -> global pool -> reshape -> gemm, the shape of a tiny CNN.
Graph tiny_cnn() {
    Graph g;
    g.name = "tiny";
    int x = input(g, "input", f32({1, 3, 32, 32}));
    int w1 = constant(g, "w1", f32({8, 3, 3, 3}));
    int b1 = constant(g, "b1", f32({8}));
    int conv = node(
        g, "nn.conv2d", "conv1", {x, w1, b1}, f32({1, 8, 32, 32}),
        {{"strides", std::vector<int64_t>{1, 1}}, {"padding", std::vector<int64_t>{1, 1, 1, 1}}});
    int relu = node(g, "nn.relu", "relu1", {conv}, f32({1, 8, 32, 32}));
    int pool = node(g, "nn.global_avg_pool2d", "pool1", {relu}, f32({1, 8, 1, 1}));
    int flat =
        node(g, "reshape", "flat", {pool}, f32({1, 8}), {{"newshape", std::vector<int64_t>{1, 8}}});
    int w2 = constant(g, "w2", f32({10, 8}));
    int fc = node(g, "nn.gemm", "fc", {flat, w2}, f32({1, 10}),
                  {{"transB", int64_t(1)}, {"alpha", 0.5}});
    g.outputs = {fc};
    return g;
}

// An ONNX node written out as several nodes gives them all its name: the
// name finds the one that computes most (the conv, not the reshapes around it).
TEST(Graph, ANameSharedByAnExpansionFindsItsHeaviestNode) {
    Graph g;
    int x = input(g, "x", f32({1, 3, 1, 16}));
    int r = node(g, "reshape", "Conv2D", {x}, f32({1, 3, 1, 16}),
                 {{"newshape", std::vector<int64_t>{1, 3, 1, 16}}});
    int w = constant(g, "w", f32({4, 3, 1, 3}));
    int c = node(g, "nn.conv2d", "Conv2D", {r, w}, f32({1, 4, 1, 14}),
                 {{"strides", std::vector<int64_t>{1, 1}}, {"padding", std::vector<int64_t>{0, 0, 0, 0}}});
    int y = node(g, "reshape", "Conv2D", {c}, f32({1, 4, 14}),
                 {{"newshape", std::vector<int64_t>{1, 4, 14}}});
    g.outputs = {y};
    EXPECT_EQ(g.find_node("Conv2D"), g.values[size_t(c)].producer);
    EXPECT_EQ(g.nodes[size_t(g.find_node("Conv2D"))].op, "nn.conv2d");
    EXPECT_EQ(g.find_node("nothing"), -1);
}

TEST(TensorType, CountsAndText) {
    TensorType t{DType::Float32, {1, 3, 224, 224}};
    EXPECT_EQ(t.num_elements(), 150528);
    EXPECT_EQ(t.num_bytes(), 602112);
    EXPECT_EQ(t.str(), "Tensor[(1, 3, 224, 224), float32]");
    EXPECT_EQ((TensorType{DType::Int64, {4}}).str(), "Tensor[(4,), int64]");
    EXPECT_EQ((TensorType{DType::Float64, {}}).num_elements(), 1);
    EXPECT_EQ(dtype_bytes(DType::Int64), 8);
    EXPECT_EQ(dtype_bytes(DType::Bool), 1);
    EXPECT_STREQ(dtype_name(DType::UInt8), "uint8");
}

TEST(Node, AttributeGettersConvertAndDefault) {
    Node n;
    n.op = "nn.gemm";
    n.name = "fc";
    n.attrs = {
        {"i", int64_t(3)}, {"d", 2.5}, {"v", std::vector<int64_t>{1, 2}}, {"s", std::string("x")}};
    EXPECT_EQ(n.attr_int("i", 0), 3);
    EXPECT_EQ(n.attr_int("d", 0), 2);  // doubles truncate
    EXPECT_EQ(n.attr_int("missing", 7), 7);
    EXPECT_DOUBLE_EQ(n.attr_float("i", 0), 3.0);
    EXPECT_DOUBLE_EQ(n.attr_float("d", 0), 2.5);
    EXPECT_EQ(n.attr_ints("v"), (std::vector<int64_t>{1, 2}));
    EXPECT_EQ(n.attr_ints("i"), (std::vector<int64_t>{3}));
    EXPECT_EQ(n.attr_ints("missing", {4, 5}), (std::vector<int64_t>{4, 5}));
    EXPECT_EQ(n.attr_str("s"), "x");
    try {
        n.attr_int("s", 0);
        FAIL() << "expected UserError";
    } catch (const UserError& e) {
        EXPECT_NE(std::string(e.what()).find("node 'fc'"), std::string::npos) << e.what();
    }
}

TEST(Graph, AddNodeSetsProducerAndFindsByName) {
    Graph g = tiny_cnn();
    EXPECT_EQ(g.nodes.size(), 5u);
    int relu = g.find_value("relu1");
    ASSERT_GE(relu, 0);
    EXPECT_EQ(g.values[size_t(relu)].producer, g.find_node("relu1"));
    EXPECT_EQ(g.values[size_t(g.find_value("input"))].producer, -1);
    EXPECT_TRUE(g.values[size_t(g.find_value("w1"))].is_constant());
    EXPECT_EQ(g.find_node("nope"), -1);
    EXPECT_EQ(g.find_value("nope"), -1);
}

TEST(GraphPrint, RelayLikeText) {
    const std::string expected =
        "def @main(%input: Tensor[(1, 3, 32, 32), float32]) {\n"
        "  %w1 = meta[Constant][0] /* ty=Tensor[(8, 3, 3, 3), float32] */\n"
        "  %b1 = meta[Constant][1] /* ty=Tensor[(8,), float32] */\n"
        "  %w2 = meta[Constant][2] /* ty=Tensor[(10, 8), float32] */\n"
        "  %conv1 = nn.conv2d(%input, %w1, %b1, padding=[1, 1, 1, 1], strides=[1, 1]) /* "
        "ty=Tensor[(1, 8, 32, 32), "
        "float32] */\n"
        "  %relu1 = nn.relu(%conv1) /* ty=Tensor[(1, 8, 32, 32), float32] */\n"
        "  %pool1 = nn.global_avg_pool2d(%relu1) /* ty=Tensor[(1, 8, 1, 1), float32] */\n"
        "  %flat = reshape(%pool1, newshape=[1, 8]) /* ty=Tensor[(1, 8), float32] */\n"
        "  %fc = nn.gemm(%flat, %w2, alpha=0.5, transB=1) /* ty=Tensor[(1, 10), float32] */\n"
        "  %fc\n"
        "}\n";
    EXPECT_EQ(print(tiny_cnn()), expected);
}

TEST(GraphPrint, NamesNodeWhenItDiffersFromItsOutput) {
    Graph g;
    int x = input(g, "x", f32({2}));
    int y = node(g, "nn.relu", "y", {x}, f32({2}));
    g.nodes[0].name = "Relu_0";
    g.outputs = {y, x};
    std::string text = print(g);
    EXPECT_NE(text.find("%y = nn.relu(%x) /* ty=Tensor[(2,), float32], name=\"Relu_0\" */"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("  (%y, %x)\n}"), std::string::npos) << text;
}

TEST(GraphVerify, AcceptsWellFormedGraph) { EXPECT_NO_THROW(verify(tiny_cnn())); }

// Expects verify(g) to throw a UserError containing every one of `parts`.
void expect_verify_error(const Graph& g, std::vector<std::string> parts) {
    try {
        verify(g);
        FAIL() << "verify accepted a broken graph:\n" << print(g);
    } catch (const UserError& e) {
        for (const auto& p : parts)
            EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
    }
}

TEST(GraphVerify, TypeMismatchNamesTheNode) {
    Graph g = tiny_cnn();
    g.values[size_t(g.find_value("relu1"))].type = f32({1, 8, 32, 31});
    expect_verify_error(
        g, {"node 'relu1'", "Tensor[(1, 8, 32, 31), float32]", "Tensor[(1, 8, 32, 32), float32]"});
}

TEST(GraphVerify, ShapeRuleFailureNamesTheNode) {
    Graph g = tiny_cnn();
    g.values[size_t(g.find_value("w1"))].type = f32({8, 4, 3, 3});
    g.values[size_t(g.find_value("w1"))].constant =
        std::make_shared<ConstantData>(ConstantData{std::vector<uint8_t>(8 * 4 * 3 * 3 * 4)});
    expect_verify_error(g, {"node 'conv1'", "channels"});
}

TEST(GraphVerify, UnregisteredOp) {
    Graph g = tiny_cnn();
    g.nodes[1].op = "nn.frobnicate";
    expect_verify_error(g, {"node 'relu1'", "not registered"});
}

TEST(GraphVerify, InputUsedBeforeItIsProduced) {
    Graph g = tiny_cnn();
    std::swap(g.nodes[1].inputs, g.nodes[2].inputs);  // relu reads pool1's output, produced later
    expect_verify_error(g, {"node 'relu1'", "'relu1'"});
}

TEST(GraphVerify, ValueProducedTwice) {
    Graph g = tiny_cnn();
    g.nodes[2].outputs = g.nodes[1].outputs;
    expect_verify_error(g, {"node 'pool1'", "already produced by node 'relu1'"});
}

TEST(GraphVerify, IndexOutOfRange) {
    Graph g = tiny_cnn();
    g.nodes[3].inputs = {99};
    expect_verify_error(g, {"node 'flat'", "out of range"});
}

TEST(GraphVerify, ConstantOfWrongSize) {
    Graph g = tiny_cnn();
    auto data = std::make_shared<ConstantData>();
    data->bytes.resize(12);
    g.values[size_t(g.find_value("b1"))].constant = data;
    expect_verify_error(g, {"constant 'b1'", "12 bytes"});
}

TEST(NodeFlops, CountsMultiplyAddAsTwo) {
    Graph g = tiny_cnn();
    // conv: 2 * (1*8*32*32 outputs) * (3*3*3) + bias adds
    EXPECT_DOUBLE_EQ(node_flops(g, g.nodes[0]), 2.0 * 8192 * 27 + 8192);
    EXPECT_DOUBLE_EQ(node_flops(g, g.nodes[1]), 8192);          // relu
    EXPECT_DOUBLE_EQ(node_flops(g, g.nodes[2]), 8192);          // global pool reads every input
    EXPECT_DOUBLE_EQ(node_flops(g, g.nodes[3]), 0);             // reshape
    EXPECT_DOUBLE_EQ(node_flops(g, g.nodes[4]), 2.0 * 10 * 8);  // gemm M=1 N=10 K=8
}

TEST(NodeFlops, BatchedMatmulAndPool) {
    Graph g;
    int a = input(g, "a", f32({5, 4, 6}));
    int b = input(g, "b", f32({6, 7}));
    node(g, "nn.matmul", "mm", {a, b}, f32({5, 4, 7}));
    int x = input(g, "x", f32({1, 2, 8, 8}));
    node(g, "nn.max_pool2d", "mp", {x}, f32({1, 2, 4, 4}),
         {{"kernel", std::vector<int64_t>{3, 3}},
          {"strides", std::vector<int64_t>{2, 2}},
          {"padding", std::vector<int64_t>{1, 1, 0, 0}}});
    node(g, "nn.softmax", "sm", {x}, f32({1, 2, 8, 8}), {{"axis", int64_t(3)}});
    // Average pools count their windows' adds as max pools count compares
    // (they counted nothing: 0 GFLOP/s in the profile and the studio).
    node(g, "nn.avg_pool2d", "ap", {x}, f32({1, 2, 4, 4}),
         {{"kernel", std::vector<int64_t>{2, 2}}, {"strides", std::vector<int64_t>{2, 2}}});
    EXPECT_NO_THROW(verify(g));
    EXPECT_DOUBLE_EQ(node_flops(g, g.nodes[0]), 2.0 * 5 * 4 * 7 * 6);
    EXPECT_DOUBLE_EQ(node_flops(g, g.nodes[1]), 32.0 * 9);
    EXPECT_DOUBLE_EQ(node_flops(g, g.nodes[2]), 5.0 * 128);
    EXPECT_DOUBLE_EQ(node_flops(g, g.nodes[3]), 32.0 * 4);
}

}  // namespace
}  // namespace tessera::graph
