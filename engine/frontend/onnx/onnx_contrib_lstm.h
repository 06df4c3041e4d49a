// Private to the ONNX frontend: com.microsoft DynamicQuantizeLSTM (written by
// ONNX Runtime's dynamic quantizer for LSTMs) as a standard LSTM over its
// dequantized weights. ORT also quantizes the activations of each step
// (uint8, per tensor); Tessera computes them in float, as for its other
// dynamically quantized ops, so outputs differ from ORT's by that rounding.
#pragma once

#include <vector>

#include "engine/frontend/onnx/onnx_node_rewrite.h"

namespace tessera::frontend::onnx_import {

/// Appends the LSTM that `n` (a DynamicQuantizeLSTM) denotes, and the nodes
/// dequantizing and transposing its weights, to `out`.
void expand_dynamic_quantize_lstm(NodeRewriter& r, const Graphs& graphs, const onnx::NodeProto& n,
                                  std::vector<onnx::NodeProto>& out);

}  // namespace tessera::frontend::onnx_import
