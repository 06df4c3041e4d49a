// ONNX Runtime's com.microsoft fused ops that exporters and ORT's offline
// optimizer write into models (issue #15), expanded into the standard ops
// that define them before ONNX 1.12 checks the model: FusedConv, FusedGemm,
// Gelu, FastGelu, BiasGelu, QuickGelu, SkipLayerNormalization, and the
// quantized elementwise ops of ORT's quantizer (QLinearAdd, QLinearMul,
// QLinearSigmoid, QLinearLeakyRelu, QLinearGlobalAveragePool, QLinearConcat:
// dequantize, the float op, quantize); the transformers optimizer's
// Attention, MultiHeadAttention and EmbedLayerNormalization
// (onnx_contrib_attention.h), ORT's dynamically quantized products
// MatMulIntegerToFloat and DynamicQuantizeMatMul (as the MatMulInteger, Cast,
// Mul and Add that quantize_dynamic writes), the RMS norms SimplifiedLayerNormalization and
// SkipSimplifiedLayerNormalization, and LayerNormalization in the default
// domain before opset 17 (ORT registered it there before ONNX defined it).
// Tessera's fusion passes fuse them again. Checked against ONNX Runtime's outputs
// (tests/data/onnx_models/contrib_*).
#pragma once

#include <string>

#include "onnx/onnx_pb.h"

namespace tessera::frontend::onnx_import {

/// Rewrites every com.microsoft node of the list above; other com.microsoft
/// ops are left for the converters (FusedMatMul, whose transposes need its
/// operands' ranks: onnx_math.cpp; DynamicQuantizeLSTM, unrolled with integer
/// products: onnx_rnn.cpp), which refuse unknown ones by name.
void expand_contrib_ops(onnx::ModelProto& model, const std::string& origin);

}  // namespace tessera::frontend::onnx_import
