// The op registry: every graph op is registered with a description, a fusion
// pattern and a shape rule that computes the known output shapes.
#include "engine/graph/op_registry.h"

#include <gtest/gtest.h>

#include "engine/core/error.h"
#include "tests/engine/graph/graph_test_util.h"

namespace tessera::graph {
namespace {

using namespace testing;
using Ints = std::vector<int64_t>;

// Output types of `op` for inputs `in` and attributes `attrs`.
std::vector<TensorType> infer(const std::string& op, std::vector<TensorType> in,
                              std::map<std::string, AttrValue> attrs = {}) {
    Graph g;
    Node n;
    n.op = op;
    n.name = "n1";
    n.attrs = std::move(attrs);
    for (size_t i = 0; i < in.size(); ++i) {
        Value v;
        v.name = "in" + std::to_string(i);
        v.type = in[i];
        n.inputs.push_back(g.add_value(v));
    }
    return infer_types(g, n);
}

Ints out_shape(const std::string& op, std::vector<TensorType> in,
               std::map<std::string, AttrValue> attrs = {}) {
    auto t = infer(op, std::move(in), std::move(attrs));
    EXPECT_EQ(t.size(), 1u);
    return t.at(0).shape;
}

// Expects the rule to throw a UserError naming node 'n1' and containing `part`.
void expect_rule_error(const std::string& op, std::vector<TensorType> in,
                       std::map<std::string, AttrValue> attrs, const std::string& part) {
    try {
        infer(op, std::move(in), std::move(attrs));
        FAIL() << op << " accepted bad inputs";
    } catch (const UserError& e) {
        std::string msg = e.what();
        EXPECT_NE(msg.find("node 'n1' (" + op + ")"), std::string::npos) << msg;
        EXPECT_NE(msg.find(part), std::string::npos) << msg;
    }
}

TEST(OpRegistry, EveryGraphOpIsRegistered) {
    const std::vector<std::string> ops = {
        "nn.conv2d", "nn.matmul", "nn.gemm", "add",           "subtract",
        "multiply",  "divide",    "nn.relu", "nn.max_pool2d", "nn.global_avg_pool2d",
        "reshape",   "nn.softmax"};
    for (const auto& name : ops) {
        const OpDef* def = find_op(name);
        ASSERT_NE(def, nullptr) << name;
        EXPECT_EQ(def->name, name);
        EXPECT_FALSE(def->description.empty()) << name;
        EXPECT_TRUE(bool(def->infer)) << name;
    }
    EXPECT_GE(all_ops().size(), ops.size());
    EXPECT_EQ(find_op("nn.no_such_op"), nullptr);
    EXPECT_EQ(find_op("add")->pattern, OpPattern::Broadcast);
    EXPECT_EQ(find_op("nn.relu")->pattern, OpPattern::ElemWise);
    EXPECT_EQ(find_op("nn.conv2d")->pattern, OpPattern::OutEWiseFusable);
    EXPECT_STREQ(op_pattern_name(OpPattern::CommReduce), "CommReduce");
}

TEST(OpRegistry, RegisterAddsAndReplaces) {
    OpDef d;
    d.name = "test.identity";
    d.description = "first";
    d.pattern = OpPattern::Injective;
    d.infer = [](const Node&, const std::vector<TensorType>& in) { return in; };
    register_op(d);
    const OpDef* p = find_op("test.identity");
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p->description, "first");
    d.description = "second";
    register_op(d);
    EXPECT_EQ(find_op("test.identity"), p);  // handed-out pointers stay valid
    EXPECT_EQ(p->description, "second");
    EXPECT_EQ(out_shape("test.identity", {f32({3, 1})}), (Ints{3, 1}));
}

TEST(Conv2dRule, StridePadDilationGroups) {
    // ResNet stem: 224 -> 112 with a 7x7 stride-2 pad-3 window.
    EXPECT_EQ(out_shape("nn.conv2d", {f32({1, 3, 224, 224}), f32({64, 3, 7, 7})},
                        {{"strides", Ints{2, 2}}, {"padding", Ints{3, 3, 3, 3}}}),
              (Ints{1, 64, 112, 112}));
    // Asymmetric padding, per-axis strides: H=(7+1+1-3)/2+1=4, W=(5+0+0-3)/1+1=3.
    EXPECT_EQ(out_shape("nn.conv2d", {f32({2, 4, 7, 5}), f32({6, 4, 3, 3}), f32({6})},
                        {{"strides", Ints{2, 1}}, {"padding", Ints{1, 0, 1, 0}}}),
              (Ints{2, 6, 4, 3}));
    // Dilation 2 makes a 3x3 window span 5: 9 - 5 + 1 = 5.
    EXPECT_EQ(
        out_shape("nn.conv2d", {f32({1, 1, 9, 9}), f32({1, 1, 3, 3})}, {{"dilation", Ints{2, 2}}}),
        (Ints{1, 1, 5, 5}));
    // Depthwise: 8 groups, weight (8, 1, 3, 3).
    EXPECT_EQ(out_shape("nn.conv2d", {f32({1, 8, 6, 6}), f32({8, 1, 3, 3})},
                        {{"groups", int64_t(8)}, {"padding", Ints{1, 1, 1, 1}}}),
              (Ints{1, 8, 6, 6}));
}

TEST(Conv2dRule, RejectsMismatches) {
    expect_rule_error("nn.conv2d", {f32({1, 3, 8, 8}), f32({4, 2, 3, 3})}, {}, "3 channels");
    expect_rule_error("nn.conv2d", {f32({1, 4, 8, 8}), f32({3, 2, 3, 3})}, {{"groups", int64_t(2)}},
                      "not divisible");
    expect_rule_error("nn.conv2d", {f32({1, 3, 8, 8}), f32({4, 3, 3, 3}), f32({5})}, {}, "bias");
    expect_rule_error("nn.conv2d", {f32({1, 3, 2, 2}), f32({4, 3, 3, 3})}, {}, "does not fit");
    expect_rule_error("nn.conv2d", {f32({3, 8, 8}), f32({4, 3, 3, 3})}, {}, "rank 4");
}

TEST(BroadcastRule, NumpyBroadcasting) {
    EXPECT_EQ(out_shape("add", {f32({2, 3, 4}), f32({4})}), (Ints{2, 3, 4}));
    EXPECT_EQ(out_shape("multiply", {f32({2, 1, 4}), f32({3, 1})}), (Ints{2, 3, 4}));
    EXPECT_EQ(out_shape("subtract", {f32({}), f32({5})}), (Ints{5}));
    EXPECT_EQ(out_shape("divide", {f32({1, 8, 1, 1}), f32({1, 8, 7, 7})}), (Ints{1, 8, 7, 7}));
    expect_rule_error("add", {f32({2, 3}), f32({4})}, {}, "do not broadcast");
    expect_rule_error("add", {f32({2}), TensorType{DType::Int64, {2}}}, {}, "types differ");
}

TEST(MatmulRule, NumpySemantics) {
    EXPECT_EQ(out_shape("nn.matmul", {f32({3, 4}), f32({4, 5})}), (Ints{3, 5}));
    EXPECT_EQ(out_shape("nn.matmul", {f32({2, 1, 3, 4}), f32({5, 4, 6})}), (Ints{2, 5, 3, 6}));
    EXPECT_EQ(out_shape("nn.matmul", {f32({4}), f32({4, 5})}), (Ints{5}));
    EXPECT_EQ(out_shape("nn.matmul", {f32({2, 3, 4}), f32({4})}), (Ints{2, 3}));
    EXPECT_EQ(out_shape("nn.matmul", {f32({4}), f32({4})}), (Ints{}));
    expect_rule_error("nn.matmul", {f32({3, 4}), f32({5, 6})}, {}, "inner dimensions");
    expect_rule_error("nn.matmul", {f32({2, 3, 4}), f32({3, 4, 6})}, {}, "do not broadcast");
}

TEST(GemmRule, Transposes) {
    EXPECT_EQ(out_shape("nn.gemm", {f32({3, 4}), f32({4, 5})}), (Ints{3, 5}));
    EXPECT_EQ(out_shape("nn.gemm", {f32({4, 3}), f32({5, 4}), f32({5})},
                        {{"transA", int64_t(1)}, {"transB", int64_t(1)}}),
              (Ints{3, 5}));
    EXPECT_EQ(out_shape("nn.gemm", {f32({3, 4}), f32({4, 5}), f32({3, 1})}), (Ints{3, 5}));
    expect_rule_error("nn.gemm", {f32({3, 4}), f32({5, 4})}, {}, "inner dimensions");
    expect_rule_error("nn.gemm", {f32({3, 4}), f32({4, 5}), f32({4, 5})}, {}, "broadcast");
}

TEST(MaxPoolRule, FloorAndCeilMode) {
    std::map<std::string, AttrValue> a = {{"kernel", Ints{3, 3}}, {"strides", Ints{2, 2}}};
    EXPECT_EQ(out_shape("nn.max_pool2d", {f32({1, 1, 4, 4})}, a), (Ints{1, 1, 1, 1}));
    a["ceil_mode"] = int64_t(1);
    EXPECT_EQ(out_shape("nn.max_pool2d", {f32({1, 1, 4, 4})}, a), (Ints{1, 1, 2, 2}));
    // ResNet max pool: 112 -> 56 with 3x3 stride 2 pad 1.
    EXPECT_EQ(
        out_shape("nn.max_pool2d", {f32({1, 64, 112, 112})},
                  {{"kernel", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"padding", Ints{1, 1, 1, 1}}}),
        (Ints{1, 64, 56, 56}));
    // Ceil mode never starts a window inside the end padding: 1x1 window, stride 2 over 4 -> 2,
    // not 3.
    EXPECT_EQ(
        out_shape("nn.max_pool2d", {f32({1, 1, 4, 4})},
                  {{"kernel", Ints{1, 1}}, {"strides", Ints{2, 2}}, {"ceil_mode", int64_t(1)}}),
        (Ints{1, 1, 2, 2}));
    expect_rule_error("nn.max_pool2d", {f32({1, 1, 4, 4})}, {}, "missing attribute 'kernel'");
}

TEST(PoolAndSoftmaxRules, Shapes) {
    EXPECT_EQ(out_shape("nn.global_avg_pool2d", {f32({2, 16, 7, 9})}), (Ints{2, 16, 1, 1}));
    EXPECT_EQ(
        out_shape("nn.softmax", {f32({2, 3, 4})}, {{"axis", int64_t(1)}, {"coerce", int64_t(1)}}),
        (Ints{2, 3, 4}));
    EXPECT_EQ(out_shape("nn.relu", {f32({5, 1})}), (Ints{5, 1}));
    expect_rule_error("nn.softmax", {f32({2, 3})}, {{"axis", int64_t(2)}}, "axis 2 out of range");
    expect_rule_error("nn.relu", {TensorType{DType::Int32, {2}}}, {}, "float32");
}

TEST(ReshapeRule, UsesNewshape) {
    EXPECT_EQ(out_shape("reshape", {f32({2, 3, 4})}, {{"newshape", Ints{6, 4}}}), (Ints{6, 4}));
    expect_rule_error("reshape", {f32({2, 3, 4})}, {{"newshape", Ints{5, 5}}}, "cannot reshape");
    expect_rule_error("reshape", {f32({2, 3, 4})}, {{"newshape", Ints{-1, 4}}}, "fully resolved");
    expect_rule_error("reshape", {f32({2, 3, 4})}, {}, "missing attribute 'newshape'");
}

}  // namespace
}  // namespace tessera::graph
