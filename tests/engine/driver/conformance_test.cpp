// ONNX node test cases through the whole pipeline (import, lower, JIT, run)
// against ONNX's shipped expected outputs.
#include <gtest/gtest.h>

#include <filesystem>

#include "engine/core/error.h"
#include "engine/driver/driver.h"

namespace tessera::driver {
namespace {

std::string node_case(const std::string& name) {
    return std::string(TESSERA_ONNX_TESTDATA) + "/node/" + name;
}

class NodeCase : public testing::TestWithParam<const char*> {};

TEST_P(NodeCase, Passes) {
    ConformanceResult r = run_conformance_case(node_case(GetParam()));
    EXPECT_EQ(r.name, GetParam());
    EXPECT_EQ(r.status, ConformanceResult::Passed) << r.message;
}

INSTANTIATE_TEST_SUITE_P(SkeletonOps, NodeCase,
                         testing::Values("test_relu", "test_add_bcast", "test_matmul_2d",
                                         "test_conv_with_strides_padding", "test_maxpool_2d_pads",
                                         "test_softmax_axis_1", "test_gemm_all_attributes",
                                         "test_globalaveragepool", "test_flatten_axis1",
                                         "test_reshape_negative_dim"),
                         [](const testing::TestParamInfo<const char*>& info) {
                             return std::string(info.param);
                         });

TEST(Conformance, UnsupportedOpIsSkippedWithItsName) {
    ConformanceResult r = run_conformance_case(node_case("test_bernoulli"));
    EXPECT_EQ(r.status, ConformanceResult::Skipped);
    EXPECT_EQ(r.message, "unsupported op Bernoulli");
}

TEST(Conformance, MissingCaseFails) {
    ConformanceResult r = run_conformance_case(node_case("test_no_such_case"));
    EXPECT_EQ(r.status, ConformanceResult::Failed);
    EXPECT_NE(r.message.find("test_no_such_case"), std::string::npos) << r.message;
}

TEST(TestData, ReadsInputsAndOutputs) {
    std::string dir = node_case("test_add_bcast") + "/test_data_set_0";
    auto in = read_test_data(dir, "input");
    auto out = read_test_data(dir, "output");
    ASSERT_EQ(in.size(), 2u);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].shape(), (std::vector<int64_t>{3, 4, 5}));
    EXPECT_THROW(read_test_data(node_case("test_no_such_case"), "input"), UserError);
}

TEST(LoadModel, MissingFileIsAUserErrorNamingIt) {
    try {
        load_model("/nonexistent/dir/model.onnx");
        FAIL() << "no exception";
    } catch (const UserError& e) {
        EXPECT_NE(std::string(e.what()).find("/nonexistent/dir/model.onnx"), std::string::npos)
            << e.what();
    }
}

TEST(LoadModel, FreezesShapeInputsFromTestData) {
    std::string dir = node_case("test_reshape_negative_dim");
    EXPECT_THROW(load_model(dir + "/model.onnx"), UserError);  // `shape` is a graph input
    graph::Graph g = load_model_for_inputs(dir + "/model.onnx",
                                           test_data_files(dir + "/test_data_set_0", "input"));
    ASSERT_EQ(g.inputs.size(), 1u);
    EXPECT_EQ(g.values[size_t(g.outputs[0])].type.shape, (std::vector<int64_t>{2, 6, 2}));
    // Without integer inputs to freeze, the original error stays.
    EXPECT_THROW(load_model_for_inputs(dir + "/model.onnx", {}), UserError);
}

}  // namespace
}  // namespace tessera::driver
