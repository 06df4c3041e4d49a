// QuantizeLinear / DequantizeLinear with constant parameters leave their
// quantized tensors' mapping on the graph values (what the studio shows).
#include <gtest/gtest.h>

#include "engine/driver/driver.h"

namespace tessera::frontend {
namespace {

const graph::Value& value_named(const graph::Graph& g, const std::string& name) {
    for (const graph::Value& v : g.values)
        if (v.name == name) return v;
    ADD_FAILURE() << "no value " << name;
    return g.values.front();
}

TEST(QuantizationText, QuantizedTensorsSayTheirScaleAndZeroPoint) {
    const graph::Graph g = driver::load_model(std::string(TESSERA_SOURCE_DIR) +
                                              "/tests/data/onnx_models/qdq_matmul/model.onnx");
    EXPECT_EQ(value_named(g, "xa_q").quantization, "uint8, scale 0.01569, zero point 128");
    EXPECT_EQ(value_named(g, "h_q").quantization, "uint8, scale 0.05, zero point 0");
    const std::string w1 = value_named(g, "w1").quantization;
    EXPECT_EQ(w1.rfind("int8 per channel (axis 1, 45), scale 0.00", 0), 0u) << w1;
    EXPECT_NE(w1.find(", zero point 0"), std::string::npos) << w1;
    EXPECT_EQ(value_named(g, "w2").quantization, "int8, scale 0.01, zero point 0");
    EXPECT_TRUE(value_named(g, "x").quantization.empty());
}

}  // namespace
}  // namespace tessera::frontend
