// Import-time folding of shape subgraphs, --input-shape and float16 weights.
#include <gtest/gtest.h>

#include <cmath>

#include "engine/core/error.h"
#include "engine/driver/driver.h"
#include "engine/frontend/onnx/onnx_importer.h"

namespace tessera::frontend {
namespace {

const std::string kModel =
    std::string(TESSERA_SOURCE_DIR) + "/tests/data/onnx_models/shape_subgraph.onnx";

std::string load_error(const std::map<std::string, std::vector<int64_t>>& shapes) {
    try {
        driver::load_model(kModel, shapes);
    } catch (const UserError& e) {
        return e.what();
    }
    return "";
}

TEST(ShapeSubgraph, FoldsToStaticReshapeWithInputShape) {
    graph::Graph g = driver::load_model(kModel, {{"x", {5, 3, 4}}});
    ASSERT_EQ(g.nodes.size(), 2u) << graph::print(g);
    EXPECT_EQ(g.nodes[0].op, "reshape");
    EXPECT_EQ(g.nodes[0].attr_ints("newshape"), std::vector<int64_t>({5, 12}));
    EXPECT_EQ(g.nodes[1].op, "nn.matmul");
}

TEST(ShapeSubgraph, RunsAgainstNaiveReferenceWithFloat16Weights) {
    graph::Graph g = driver::load_model(kModel, {{"x", {2, 3, 4}}});
    auto model = driver::build(g);
    std::vector<runtime::NDArray> in = driver::random_inputs(g, 7);
    std::vector<runtime::NDArray> out = model->run(in);
    ASSERT_EQ(out[0].shape(), std::vector<int64_t>({2, 1}));
    const float* x = in[0].data<float>();
    for (int n = 0; n < 2; ++n) {
        double ref = 0;
        for (int k = 0; k < 12; ++k) {
            // linspace(-1, 1, 12) rounded to float16 by the generator.
            double w = -1.0 + 2.0 * k / 11.0;
            ref += double(x[n * 12 + k]) * w;
        }
        EXPECT_NEAR(out[0].data<float>()[n], ref, 2e-3 * 12) << n;
    }
}

TEST(ShapeSubgraph, SymbolicDimErrorNamesInputAndFlag) {
    std::string msg = load_error({});
    EXPECT_NE(msg.find("input 'x' dimension 0 is symbolic ('N')"), std::string::npos) << msg;
    EXPECT_NE(msg.find("--input-shape x:"), std::string::npos) << msg;
}

TEST(ShapeSubgraph, InputShapeMustFitTheModel) {
    EXPECT_NE(load_error({{"y", {1, 3, 4}}}).find("--input-shape names 'y', which is not a graph input"),
              std::string::npos);
    EXPECT_NE(load_error({{"x", {1, 12}}}).find("input 'x' has rank 3 but --input-shape gives 2 dims"),
              std::string::npos);
    EXPECT_NE(load_error({{"x", {1, 4, 4}}}).find("dimension 1 is 3 but --input-shape gives 4"),
              std::string::npos);
}

TEST(ShapeSubgraph, ParsesInputShapeSpecs) {
    std::map<std::string, std::vector<int64_t>> shapes;
    parse_input_shape("a:1x3x224x224,b:7", shapes);
    EXPECT_EQ(shapes["a"], std::vector<int64_t>({1, 3, 224, 224}));
    EXPECT_EQ(shapes["b"], std::vector<int64_t>({7}));
    EXPECT_THROW(parse_input_shape("a", shapes), UserError);
    EXPECT_THROW(parse_input_shape("a:1x-2", shapes), UserError);
    EXPECT_THROW(parse_input_shape("a:", shapes), UserError);
}

}  // namespace
}  // namespace tessera::frontend
