// Per-layer fp32-vs-int8 error of a QDQ model (driver::layer_errors): its
// float reading (activation Q/DQ pairs as the identity) is the reference;
// the error of each layer is small, non-zero, and grows where a layer reads a
// quantized activation; a float model has nothing to report.
#include "engine/driver/quantization_error.h"

#include <gtest/gtest.h>

#include <cmath>

#include "engine/frontend/onnx/onnx_importer.h"

namespace tessera::driver {
namespace {

const std::string kData = std::string(TESSERA_SOURCE_DIR) + "/tests/data/onnx_models/";

TEST(LayerErrors, AQdqConvModelReportsEachLayersErrorAgainstItsFloatReading) {
    const std::string path = kData + "qdq_conv/model.onnx";
    const graph::Graph g = load_model(path);
    EXPECT_TRUE(has_quantized_tensors(g));
    const std::vector<runtime::NDArray> inputs = random_inputs(g, 7);
    BuildOptions o;
    o.threads = 1;
    const std::vector<LayerError> rows = layer_errors(path, {}, inputs, o);
    ASSERT_FALSE(rows.empty());
    std::map<std::string, LayerError> by_tensor;
    for (const LayerError& r : rows) {
        by_tensor[r.tensor] = r;
        EXPECT_TRUE(std::isfinite(r.max_abs) && std::isfinite(r.rel_rms)) << r.tensor;
        EXPECT_GT(r.elements, 0) << r.tensor;
        EXPECT_FALSE(r.node.empty()) << r.tensor;
    }
    // Both convs read quantized activations: their outputs differ from the
    // float reading by a little (8-bit steps), not by nothing and not by much.
    for (const char* t : {"c0", "y"}) {
        ASSERT_TRUE(by_tensor.count(t)) << t;
        EXPECT_GT(by_tensor[t].max_abs, 0.0) << t;
        EXPECT_LT(by_tensor[t].rel_rms, 0.1) << t;
    }
    // The layer after two quantized activations carries the first one's error too.
    EXPECT_GE(by_tensor["y"].rel_rms, 0.5 * by_tensor["c0"].rel_rms);
}

TEST(LayerErrors, AFloatModelHasNothingToReport) {
    const std::string path = kData + "symbolic_batch/model.onnx";
    const graph::Graph g = load_model(path, {{"x", {2, 3}}});
    EXPECT_FALSE(has_quantized_tensors(g));
    EXPECT_TRUE(layer_errors(path, {{"x", {2, 3}}}, random_inputs(g, 1), BuildOptions{}).empty());
}

}  // namespace
}  // namespace tessera::driver
