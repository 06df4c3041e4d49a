// The fp32-vs-int8 error of a quantized model, layer by layer: the model as it
// runs (integer kernels) against its float reading (the same file with every
// activation QuantizeLinear -> DequantizeLinear pair read as the identity, so
// activations stay float and weights take their dequantized values), on the
// same inputs, at every float tensor both compute.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "engine/driver/driver.h"

namespace tessera::driver {

struct LayerError {
    std::string tensor;  // the value's name
    std::string node;    // the node of the quantized graph that computes it
    std::string op;
    double max_abs = 0;  // max |int8 - float|
    double rel_rms = 0;  // ||int8 - float|| / ||float||
    int64_t elements = 0;
};

/// Whether the graph holds quantized tensors (Value::quantization).
bool has_quantized_tensors(const graph::Graph& g);

/// The per-layer error of the model at `path` imported with `input_shapes`
/// (as load_model), run on `inputs` (the runtime inputs of that graph, in
/// order), built with `options` (its kernel cache is not used): one row per
/// float tensor that a node of both graphs computes with the same shape, in
/// the quantized graph's node order. Empty when the file has no activation
/// Q/DQ pair (nothing is quantized at run time).
std::vector<LayerError> layer_errors(
    const std::string& path, const std::map<std::string, std::vector<int64_t>>& input_shapes,
    const std::vector<runtime::NDArray>& inputs, const BuildOptions& options);

}  // namespace tessera::driver
