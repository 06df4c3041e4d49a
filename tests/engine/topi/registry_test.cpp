// topi registry: has_compute, kernel names, dtype mapping, lower_node's
// parameters and errors for unsupported ops.
#include "engine/graph/op_registry.h"
#include "tests/engine/topi/topi_test_util.h"

namespace tessera::topi::testing {
namespace {

TEST(TopiRegistry, HasComputeForEveryGraphOp) {
    for (const char* op :
         {"nn.conv2d", "nn.matmul", "nn.gemm", "add", "subtract", "multiply", "divide", "nn.relu",
          "nn.max_pool2d", "nn.global_avg_pool2d", "reshape", "nn.softmax"})
        EXPECT_TRUE(has_compute(op)) << op;
    EXPECT_FALSE(has_compute("nn.lstm"));
}

TEST(TopiRegistry, EveryRegisteredGraphOpHasCompute) {
    for (const graph::OpDef* d : graph::all_ops()) EXPECT_TRUE(has_compute(d->name)) << d->name;
}

TEST(KernelName, SanitizesAndPrefixesDigits) {
    OneNode t("nn.relu", {{2}}, {2}, {}, "conv1/Conv.out");
    EXPECT_EQ(kernel_name(t.g, t.node), "conv1_Conv_out");
    OneNode d("nn.relu", {{2}}, {2}, {}, "3x3-relu");
    EXPECT_EQ(kernel_name(d.g, d.node), "k_3x3_relu");
}

TEST(KernelName, CollisionsGetNodeIndex) {
    OneNode t("nn.relu", {{2}}, {2}, {}, "a/b");
    graph::Node n = t.g.nodes[0];
    n.name = "a.b";
    n.inputs = {n.outputs[0]};
    graph::Value v;
    v.name = "out2";
    v.type = {graph::DType::Float32, {2}};
    n.outputs = {t.g.add_value(v)};
    int second = t.g.add_node(n);
    EXPECT_NE(kernel_name(t.g, 0), kernel_name(t.g, second));
    EXPECT_EQ(kernel_name(t.g, second), "a_b_" + std::to_string(second));
}

TEST(TopiRegistry, ToTirDtypes) {
    EXPECT_EQ(to_tir(graph::DType::Float32), tir::DataType::float32());
    EXPECT_EQ(to_tir(graph::DType::Int64), tir::DataType::int64());
    EXPECT_EQ(to_tir(graph::DType::UInt8), tir::DataType::uint8());
    EXPECT_EQ(to_tir(graph::DType::Bool), tir::DataType::boolean());
}

TEST(LowerNode, ParamsAreInputsThenOutputsWithValueShapes) {
    OneNode t("nn.conv2d", {{1, 2, 5, 5}, {3, 2, 3, 3}, {3}}, {1, 3, 3, 3}, {}, "conv/0");
    tir::PrimFunc f = lower_node(t.g, t.node);
    EXPECT_EQ(f->name, "conv_0");
    ASSERT_EQ(f->params.size(), 4u);
    EXPECT_EQ(f->params[0]->name, "in0");
    EXPECT_EQ(f->params[0].const_shape(), (Shape{1, 2, 5, 5}));
    EXPECT_EQ(f->params[2].const_shape(), (Shape{3}));
    EXPECT_EQ(f->params[3].const_shape(), (Shape{1, 3, 3, 3}));
}

TEST(LowerNode, SameValueTwiceGetsTwoParams) {
    OneNode t("multiply", {{3}}, {3}, {}, "square");
    t.g.nodes[0].inputs.push_back(t.g.nodes[0].inputs[0]);
    Data x = random_data({3}, 51), y(3);
    tir::PrimFunc f = lower_node(t.g, t.node);
    ASSERT_EQ(f->params.size(), 3u);
    tir::interpret(f, {x.data(), x.data(), y.data()});
    for (size_t i = 0; i < 3; ++i) EXPECT_FLOAT_EQ(y[i], x[i] * x[i]);
}

TEST(LowerNode, UnsupportedOpIsUserErrorNamingNode) {
    OneNode t("nn.relu", {{2}}, {2}, {}, "my_node");
    t.g.nodes[0].op = "nn.frobnicate";
    try {
        lower_node(t.g, t.node);
        FAIL() << "expected UserError";
    } catch (const UserError& e) {
        std::string m = e.what();
        EXPECT_NE(m.find("my_node"), std::string::npos) << m;
        EXPECT_NE(m.find("nn.frobnicate"), std::string::npos) << m;
    }
}

TEST(LowerNode, BadAttributeIsUserError) {
    OneNode t("nn.max_pool2d", {{1, 1, 4, 4}}, {1, 1, 2, 2},
              {{"kernel", std::vector<int64_t>{2, 2, 2}}}, "pool");
    EXPECT_THROW(lower_node(t.g, t.node), UserError);
}

}  // namespace
}  // namespace tessera::topi::testing
