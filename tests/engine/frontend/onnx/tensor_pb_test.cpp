// Reading and writing TensorProto files (the layout of ONNX test data).
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "engine/core/error.h"
#include "engine/frontend/onnx/onnx_importer.h"

namespace tessera::frontend {
namespace {

using graph::DType;
using graph::TensorType;

std::string data_file(const std::string& test, const std::string& file) {
    return std::string(TESSERA_ONNX_TESTDATA) + "/node/" + test + "/test_data_set_0/" + file;
}

TEST(TensorPb, ReadsShippedInput) {
    runtime::NDArray a = read_tensor_pb(data_file("test_conv_with_strides_padding", "input_0.pb"));
    EXPECT_EQ(a.type(), (TensorType{DType::Float32, {1, 1, 7, 5}}));
    // The ONNX test feeds x = arange(35).
    for (int i = 0; i < 35; ++i) EXPECT_FLOAT_EQ(a.data<float>()[i], float(i)) << i;
    runtime::NDArray w = read_tensor_pb(data_file("test_conv_with_strides_padding", "input_1.pb"));
    EXPECT_EQ(w.shape(), (std::vector<int64_t>{1, 1, 3, 3}));
    for (int i = 0; i < 9; ++i) EXPECT_FLOAT_EQ(w.data<float>()[i], 1.0f);
}

TEST(TensorPb, ReadsInt64Data) {
    runtime::NDArray s = read_tensor_pb(data_file("test_reshape_negative_dim", "input_1.pb"));
    EXPECT_EQ(s.dtype(), DType::Int64);
    ASSERT_EQ(s.num_elements(), 3);
    EXPECT_EQ(s.data<int64_t>()[0], 2);
    EXPECT_EQ(s.data<int64_t>()[1], -1);
    EXPECT_EQ(s.data<int64_t>()[2], 2);
}

TEST(TensorPb, WriteThenReadRoundTrips) {
    std::string dir = ::testing::TempDir();
    for (DType dt : {DType::Float32, DType::Int64, DType::Int32, DType::Float64, DType::Bool}) {
        TensorType t{dt, {2, 3, 5}};
        runtime::NDArray a = runtime::random_ndarray(t, 42);
        if (dt == DType::Bool)
            for (int i = 0; i < 30; ++i) a.data<uint8_t>()[i] = uint8_t(i % 3 == 0);
        std::string path = dir + "/roundtrip_" + graph::dtype_name(dt) + ".pb";
        write_tensor_pb(a, "x", path);
        runtime::NDArray b = read_tensor_pb(path);
        EXPECT_EQ(b.type(), t) << graph::dtype_name(dt);
        ASSERT_EQ(b.num_bytes(), a.num_bytes());
        EXPECT_EQ(std::memcmp(a.raw(), b.raw(), a.num_bytes()), 0) << graph::dtype_name(dt);
        std::filesystem::remove(path);
    }
}

TEST(TensorPb, ErrorsNameTheFile) {
    try {
        read_tensor_pb("/nonexistent/input_0.pb");
        FAIL() << "expected UserError";
    } catch (const UserError& e) {
        EXPECT_NE(std::string(e.what()).find("'/nonexistent/input_0.pb'"), std::string::npos)
            << e.what();
    }
    std::string bad = std::string(TESSERA_SOURCE_DIR) + "/tests/data/bad_inputs/not_onnx.onnx";
    try {
        read_tensor_pb(bad);
        FAIL() << "expected UserError";
    } catch (const UserError& e) {
        EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace tessera::frontend
