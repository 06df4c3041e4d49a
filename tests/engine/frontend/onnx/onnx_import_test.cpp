// Importing ONNX models: ops, attributes and types of the imported graph,
// checked against the shapes of ONNX's own shipped test data.
#include <gtest/gtest.h>

#include <filesystem>

#include "engine/core/error.h"
#include "engine/frontend/onnx/onnx_importer.h"

namespace tessera::frontend {
namespace {

using graph::DType;
using graph::Graph;
using graph::TensorType;
using Ints = std::vector<int64_t>;

std::string node_dir(const std::string& test) {
    return std::string(TESSERA_ONNX_TESTDATA) + "/node/" + test;
}
std::string model_path(const std::string& test) {
    return std::string(TESSERA_SOURCE_DIR) + "/tests/data/onnx_models/" + test;
}

const graph::Value& value(const Graph& g, const std::string& name) {
    int v = g.find_value(name);
    EXPECT_GE(v, 0) << name;
    return g.values.at(size_t(v));
}

TEST(OnnxImport, ConvWithStridesPadding) {
    Graph g = import_onnx_file(node_dir("test_conv_with_strides_padding") + "/model.onnx");
    ASSERT_EQ(g.nodes.size(), 1u);
    const graph::Node& n = g.nodes[0];
    EXPECT_EQ(n.op, "nn.conv2d");
    EXPECT_EQ(n.name, "Conv_0");  // unnamed ONNX node: <OpType>_<index>
    EXPECT_EQ(n.attr_ints("strides"), (Ints{2, 2}));
    EXPECT_EQ(n.attr_ints("padding"), (Ints{1, 1, 1, 1}));
    EXPECT_EQ(n.attr_ints("dilation"), (Ints{1, 1}));
    EXPECT_EQ(n.attr_int("groups", 0), 1);
    ASSERT_EQ(g.inputs.size(), 2u);
    EXPECT_EQ(g.values[size_t(g.inputs[0])].type, (TensorType{DType::Float32, {1, 1, 7, 5}}));
    EXPECT_EQ(value(g, "y").type, (TensorType{DType::Float32, {1, 1, 4, 3}}));
    EXPECT_EQ(g.outputs, std::vector<int>{n.outputs[0]});
    EXPECT_NO_THROW(graph::verify(g));
}

TEST(OnnxImport, ConvAsymmetricPaddingAndAutoPadSame) {
    Graph g =
        import_onnx_file(node_dir("test_conv_with_strides_and_asymmetric_padding") + "/model.onnx");
    EXPECT_EQ(g.nodes.at(0).attr_ints("padding"), (Ints{1, 0, 1, 0}));
    // auto_pad=SAME_LOWER, 5x5 input, 3x3 kernel, stride 2: total pad 2, split 1/1.
    g = import_onnx_file(node_dir("test_conv_with_autopad_same") + "/model.onnx");
    EXPECT_EQ(g.nodes.at(0).attr_ints("padding"), (Ints{1, 1, 1, 1}));
    EXPECT_EQ(value(g, "y").type.shape, (Ints{1, 1, 3, 3}));
}

TEST(OnnxImport, MaxPoolSameUpperAndLowerPutTheOddPadOnOppositeSides) {
    // 5x5 input, 2x2 kernel, stride 1: total pad 1 per axis.
    Graph upper = import_onnx_file(node_dir("test_maxpool_2d_same_upper") + "/model.onnx");
    Graph lower = import_onnx_file(node_dir("test_maxpool_2d_same_lower") + "/model.onnx");
    EXPECT_EQ(upper.nodes.at(0).op, "nn.max_pool2d");
    EXPECT_EQ(upper.nodes.at(0).attr_ints("padding"), (Ints{0, 0, 1, 1}));
    EXPECT_EQ(lower.nodes.at(0).attr_ints("padding"), (Ints{1, 1, 0, 0}));
    EXPECT_EQ(upper.nodes.at(0).attr_ints("kernel"), (Ints{2, 2}));
    Graph ceil = import_onnx_file(node_dir("test_maxpool_2d_ceil") + "/model.onnx");
    EXPECT_EQ(ceil.nodes.at(0).attr_int("ceil_mode", 0), 1);
}

TEST(OnnxImport, GemmAttributes) {
    Graph g = import_onnx_file(node_dir("test_gemm_all_attributes") + "/model.onnx");
    const graph::Node& n = g.nodes.at(0);
    EXPECT_EQ(n.op, "nn.gemm");
    EXPECT_DOUBLE_EQ(n.attr_float("alpha", 0), 0.25);
    EXPECT_DOUBLE_EQ(n.attr_float("beta", 0),
                     0.35);  // float attribute read back as its shortest decimal
    EXPECT_EQ(n.attr_int("transA", 0), 1);
    EXPECT_EQ(n.attr_int("transB", 0), 1);
    EXPECT_EQ(n.inputs.size(), 3u);
}

TEST(OnnxImport, PytorchConvHasConstantWeights) {
    Graph g = import_onnx_file(std::string(TESSERA_ONNX_TESTDATA) +
                               "/pytorch-converted/test_Conv2d_groups/model.onnx");
    ASSERT_EQ(g.nodes.size(), 1u);
    EXPECT_EQ(g.nodes[0].attr_int("groups", 0), 2);
    ASSERT_EQ(g.inputs.size(), 1u);  // initializers are not graph inputs
    const graph::Value& w = g.values.at(size_t(g.nodes[0].inputs.at(1)));
    ASSERT_TRUE(w.is_constant());
    EXPECT_EQ(w.type.shape, (Ints{6, 2, 3, 2}));
    EXPECT_EQ(int64_t(w.constant->bytes.size()), w.type.num_bytes());
}

TEST(OnnxImport, SoftmaxOpset13UsesPlainAxis) {
    Graph g = import_onnx_file(node_dir("test_softmax_negative_axis") + "/model.onnx");
    EXPECT_EQ(g.nodes.at(0).op, "nn.softmax");
    EXPECT_EQ(g.nodes.at(0).attr_int("axis", -1), 2);  // normalised from -1
    EXPECT_EQ(g.nodes.at(0).attrs.count("coerce"), 0u);
}

TEST(OnnxImport, SoftmaxBeforeOpset13IsConvertedToOpset13) {
    // ONNX's version converter rewrites opset-11 Softmax (normalise the
    // flattened trailing block) as Flatten -> Softmax(axis=1) -> Reshape.
    Graph g = import_onnx_file(model_path("softmax_opset11.onnx"));
    std::vector<const graph::Node*> softmax;
    for (const auto& n : g.nodes)
        if (n.op == "nn.softmax") softmax.push_back(&n);
    ASSERT_EQ(softmax.size(), 3u) << graph::print(g);
    for (int i = 0; i < 2; ++i) {
        EXPECT_EQ(softmax[size_t(i)]->attr_int("axis", -1), 1);
        EXPECT_EQ(softmax[size_t(i)]->attrs.count("coerce"), 0u);
        EXPECT_EQ(g.values.at(size_t(softmax[size_t(i)]->inputs[0])).type.shape, (Ints{2, 12}));
    }
    EXPECT_EQ(softmax[2]->attr_int("axis", -1), 2);  // last axis: plain softmax, no flatten
    EXPECT_EQ(value(g, "y").type.shape, (Ints{2, 3, 4}));
}

TEST(OnnxImport, ReshapeResolvesZeroAndMinusOne) {
    Graph g = import_onnx_file(model_path("reshape_chain.onnx"));
    ASSERT_EQ(g.nodes.size(), 4u);
    for (const auto& n : g.nodes) EXPECT_EQ(n.op, "reshape") << n.name;
    EXPECT_EQ(g.nodes[0].attr_ints("newshape"), (Ints{2, 12}));    // [0, -1]
    EXPECT_EQ(g.nodes[1].attr_ints("newshape"), (Ints{2, 3, 4}));  // Constant node [0, 3, -1]
    EXPECT_EQ(g.nodes[2].attr_ints("newshape"), (Ints{6, 4}));     // Flatten axis=2
    EXPECT_EQ(g.nodes[3].name, "identity1");
    EXPECT_EQ(value(g, "y").type.shape, (Ints{6, 4}));
    // Shape tensors feed attributes, not graph edges.
    EXPECT_EQ(g.find_value("shape1"), -1);
    EXPECT_EQ(g.find_value("shape2"), -1);
    for (const auto& n : g.nodes) EXPECT_EQ(n.inputs.size(), 1u);
}

TEST(OnnxImport, ReshapeAllowZeroKeepsZeros) {
    // The result has no elements, so it is an (empty) constant: no kernel.
    Graph g = import_onnx_file(model_path("reshape_allowzero.onnx"));
    EXPECT_TRUE(g.nodes.empty()) << graph::print(g);
    const graph::Value& out = g.values.at(size_t(g.outputs.at(0)));
    EXPECT_EQ(out.type.shape, (Ints{0, 3, 0}));
    EXPECT_TRUE(out.is_constant());
}

TEST(OnnxImport, ConstantReshapeIsFoldedAndTypedDataIsRead) {
    Graph g = import_onnx_file(model_path("folded_weight.onnx"));
    ASSERT_EQ(g.nodes.size(), 2u);
    EXPECT_EQ(g.nodes[0].op, "nn.matmul");
    EXPECT_EQ(g.nodes[1].op, "add");
    EXPECT_EQ(g.nodes[1].name, "Add_2");
    const graph::Value& w = value(g, "w");
    ASSERT_TRUE(w.is_constant());
    EXPECT_EQ(w.type.shape, (Ints{4, 3}));
    for (int i = 0; i < 12; ++i) EXPECT_FLOAT_EQ(w.constant->as<float>()[i], float(i + 1) / 8) << i;
    const graph::Value& b = value(g, "bias");  // stored in float_data, not raw_data
    ASSERT_TRUE(b.is_constant());
    EXPECT_FLOAT_EQ(b.constant->as<float>()[0], 0.5f);
    EXPECT_FLOAT_EQ(b.constant->as<float>()[1], -1.25f);
    EXPECT_FLOAT_EQ(b.constant->as<float>()[2], 2.0f);
    EXPECT_EQ(g.find_value("w_flat"), -1);
}

// Every supported node test imports, and its graph's input and output types
// equal the shapes of ONNX's own test data (input_N.pb / output_N.pb).
TEST(OnnxImport, TypesMatchShippedTestData) {
    const std::vector<std::string> tests = {"test_add",
                                            "test_add_bcast",
                                            "test_sub_bcast",
                                            "test_mul_example",
                                            "test_div_bcast",
                                            "test_relu",
                                            "test_matmul_2d",
                                            "test_matmul_3d",
                                            "test_matmul_4d",
                                            "test_gemm_default_no_bias",
                                            "test_gemm_default_scalar_bias",
                                            "test_gemm_transposeA",
                                            "test_gemm_transposeB",
                                            "test_basic_conv_with_padding",
                                            "test_basic_conv_without_padding",
                                            "test_conv_with_strides_no_padding",
                                            "test_maxpool_2d_default",
                                            "test_maxpool_2d_pads",
                                            "test_maxpool_2d_strides",
                                            "test_maxpool_2d_dilations",
                                            "test_maxpool_2d_precomputed_same_upper",
                                            "test_maxpool_2d_ceil",
                                            "test_globalaveragepool",
                                            "test_flatten_axis0",
                                            "test_flatten_negative_axis2",
                                            "test_softmax_axis_0",
                                            "test_softmax_default_axis",
                                            "test_identity",
                                            "test_dropout_default"};
    for (const auto& t : tests) {
        SCOPED_TRACE(t);
        Graph g = import_onnx_file(node_dir(t) + "/model.onnx");
        EXPECT_NO_THROW(graph::verify(g));
        const std::string data = node_dir(t) + "/test_data_set_0";
        for (size_t i = 0; i < g.inputs.size(); ++i) {
            runtime::NDArray a = read_tensor_pb(data + "/input_" + std::to_string(i) + ".pb");
            EXPECT_EQ(g.values[size_t(g.inputs[i])].type, a.type()) << "input " << i;
        }
        for (size_t i = 0; i < g.outputs.size(); ++i) {
            runtime::NDArray a = read_tensor_pb(data + "/output_" + std::to_string(i) + ".pb");
            EXPECT_EQ(g.values[size_t(g.outputs[i])].type, a.type()) << "output " << i;
        }
    }
}

// Reshape cases feed `shape` as a graph input; frozen to a constant they must
// resolve 0 / -1 / allowzero to exactly the shape of ONNX's expected output.
TEST(OnnxImport, FrozenReshapeShapesMatchShippedOutputs) {
    for (const char* t : {"test_reshape_negative_dim", "test_reshape_zero_dim",
                          "test_reshape_zero_and_negative_dim", "test_reshape_reordered_all_dims",
                          "test_reshape_extended_dims", "test_reshape_one_dim",
                          "test_reshape_allowzero_reordered"}) {
        SCOPED_TRACE(t);
        const std::string data = node_dir(t) + "/test_data_set_0";
        Graph g = import_onnx_file_frozen(node_dir(t) + "/model.onnx", {data + "/input_1.pb"}, {1});
        ASSERT_EQ(g.inputs.size(), 1u);
        runtime::NDArray expected = read_tensor_pb(data + "/output_0.pb");
        EXPECT_EQ(g.values[size_t(g.outputs.at(0))].type, expected.type());
        if (expected.num_elements() == 0) {  // an empty result is a constant, no kernel
            EXPECT_TRUE(g.nodes.empty());
            continue;
        }
        ASSERT_EQ(g.nodes.size(), 1u);
        EXPECT_EQ(g.nodes[0].op, "reshape");
        EXPECT_EQ(g.nodes[0].attr_ints("newshape"), expected.shape());
    }
}

TEST(OnnxImport, AcceptsNewerIrVersionAndOpset) {
    Graph g = import_onnx_file(model_path("relu_ir10_opset21.onnx"));
    ASSERT_EQ(g.nodes.size(), 1u);
    EXPECT_EQ(g.nodes[0].op, "nn.relu");
    EXPECT_EQ(g.nodes[0].name, "relu1");
}

TEST(OnnxImport, FromBytesNamesTheOrigin) {
    try {
        import_onnx_bytes("\x08", "<clipboard>");
        FAIL() << "expected UserError";
    } catch (const UserError& e) {
        EXPECT_NE(std::string(e.what()).find("'<clipboard>' is not a valid ONNX model"),
                  std::string::npos)
            << e.what();
    }
}

TEST(OnnxImport, SupportedOpsList) {
    std::vector<std::string> ops = supported_onnx_ops();
    for (const char* op : {"Conv", "Add", "Sub", "Mul", "Div", "Relu", "MatMul", "Gemm", "MaxPool",
                           "GlobalAveragePool", "Flatten", "Reshape", "Softmax", "Constant"})
        EXPECT_NE(std::find(ops.begin(), ops.end(), op), ops.end()) << op;
    EXPECT_EQ(std::find(ops.begin(), ops.end(), "Bernoulli"), ops.end());
}

}  // namespace
}  // namespace tessera::frontend
