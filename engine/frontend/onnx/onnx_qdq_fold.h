// QDQ models (QuantizeLinear -> DequantizeLinear around the inputs of Conv
// and MatMul, as `tessera quantize` and ONNX Runtime's quantize_static write
// them) read as the integer ops they stand for, before the model is checked:
//   MatMul(DQ(xq, sx, zx), DQ(wq, sw, zw))    -> MatMulInteger(xq, wq, zx, zw) * (sx * sw)
//   Conv(DQ(xq, sx, zx), DQ(wq, sw, zw), b)   -> ConvInteger(xq, wq, zx, zw) * (sx * sw) + b
//   Gemm(DQ(xq, sx, zx), DQ(wq, sw, zw), c)   -> MatMulInteger(xq, wq (transposed if transB),
//                                                zx, zw) * (sx * sw) + c
// with constant 8-bit weights, per-tensor activations and per-tensor or
// per-output-channel weight scales; the integer ops then run as integer GEMMs
// (onnx_quantization.cpp). In exact arithmetic the same values as the float
// products of the dequantized operands (ONNX Runtime folds QDQ models the
// same way). A MaxPool between a DequantizeLinear and a QuantizeLinear of
// one scale and zero point pools the 8-bit tensor itself (exact: the
// maximum commutes with the dequantization). Other Q/DQ pairs stay as they
// are.
#pragma once

#include <string>

#include "onnx/onnx_pb.h"

namespace tessera::frontend::onnx_import {

/// Rewrites the matching MatMul, Gemm (alpha = beta = 1, A not transposed)
/// and Conv nodes (ungrouped with at least 3 input channels, or grouped,
/// e.g. depthwise, with windows of at most 258 terms) and MaxPool nodes of
/// the model's main graph; returns how many.
int fold_qdq_into_integer_ops(onnx::ModelProto& model, const std::string& origin);

/// The model's float reading, the reference its quantization error is measured
/// against: every QuantizeLinear -> DequantizeLinear pair on an activation
/// (the quantized value read by nothing else) becomes the identity, so the
/// consumers read the float tensor; constant weights keep their
/// DequantizeLinear (their float values are the quantized ones). Returns how
/// many pairs.
int read_activation_qdq_as_float(onnx::ModelProto& model);

}  // namespace tessera::frontend::onnx_import
