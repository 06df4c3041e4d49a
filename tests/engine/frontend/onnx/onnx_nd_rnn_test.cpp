// Importing 3-D conv/pool, ConvTranspose 3-D, Einsum (ellipsis, implicit
// output), MaxPool's Indices output and LSTM/GRU (unrolled) from ONNX's tests.
#include <gtest/gtest.h>

#include <algorithm>

#include "engine/core/error.h"
#include "engine/frontend/onnx/onnx_importer.h"

namespace tessera::frontend {
namespace {

using graph::Graph;
using Ints = std::vector<int64_t>;

Graph node_model(const std::string& test) {
    return import_onnx_file(std::string(TESSERA_ONNX_TESTDATA) + "/node/" + test + "/model.onnx");
}

int count_ops(const Graph& g, const std::string& op) {
    return int(std::count_if(g.nodes.begin(), g.nodes.end(),
                             [&](const graph::Node& n) { return n.op == op; }));
}

TEST(OnnxNdImport, MaxPool3dHasSixPads) {
    Graph g = node_model("test_maxpool_3d_default");
    ASSERT_EQ(g.nodes.size(), 1u);
    EXPECT_EQ(g.nodes[0].op, "nn.max_pool3d");
    EXPECT_EQ(g.nodes[0].attr_ints("padding"), Ints(6, 0));
    EXPECT_EQ(g.values[size_t(g.outputs[0])].type.shape, Ints({1, 3, 31, 31, 31}));
}

TEST(OnnxNdImport, Conv3dAndConvTranspose3d) {
    Graph g = import_onnx_file(std::string(TESSERA_ONNX_TESTDATA) +
                               "/pytorch-converted/test_Conv3d/model.onnx");
    EXPECT_EQ(count_ops(g, "nn.conv3d"), 1);
    g = node_model("test_convtranspose_3d");
    EXPECT_EQ(count_ops(g, "nn.conv3d_transpose"), 1);
    EXPECT_EQ(g.values[size_t(g.outputs[0])].type.shape, Ints({1, 2, 5, 6, 7}));
}

TEST(OnnxNdImport, EinsumEllipsisBecomesFreshLabels) {
    Graph g = node_model("test_einsum_batch_diagonal");  // "...ii->...i" on (3, 5, 5)
    ASSERT_EQ(g.nodes.size(), 1u);
    EXPECT_EQ(g.nodes[0].attr_str("equation"), "Zii->Zi");
    g = node_model("test_einsum_sum");  // "ij->i"
    EXPECT_EQ(g.nodes[0].attr_str("equation"), "ij->i");
}

TEST(OnnxNdImport, MaxPoolIndicesOutputIsInt64) {
    Graph g = node_model("test_maxpool_with_argmax_2d_precomputed_strides");
    EXPECT_EQ(count_ops(g, "nn.max_pool2d"), 1);
    EXPECT_EQ(count_ops(g, "nn.max_pool2d_indices"), 1);
    EXPECT_EQ(g.values[size_t(g.outputs.at(1))].type.dtype, graph::DType::Int64);
}

TEST(OnnxNdImport, LstmAndGruAreUnrolledOverTime) {
    Graph g = node_model("test_lstm_defaults");  // one direction, S steps
    const int steps = int(g.values[size_t(g.inputs.at(0))].type.shape.at(0));
    EXPECT_EQ(count_ops(g, "nn.matmul"), 1 + steps);  // input projection + one per step
    EXPECT_EQ(count_ops(g, "tanh"), 2 * steps);
    EXPECT_EQ(count_ops(g, "LSTM"), 0);
    g = node_model("test_gru_defaults");
    EXPECT_GT(count_ops(g, "sigmoid"), 0);
    EXPECT_EQ(count_ops(g, "GRU"), 0);
}

}  // namespace
}  // namespace tessera::frontend
