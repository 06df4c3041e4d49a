// Private to the ONNX converters: constant-building helpers shared by the
// extra elementwise/window converters (onnx_math_signal.cpp), the
// quantization converters and FusedMatMul's scale (onnx_math.cpp).
#pragma once

#include <string>
#include <vector>

#include "engine/frontend/onnx/onnx_context.h"

namespace tessera::frontend::onnx_import {

/// Values of constant input i converted to double; UserError naming `what` if not constant.
std::vector<double> constant_doubles(const NodeCtx& ctx, int i, const std::string& what);
/// A constant of dtype `dt` and `shape` holding `v` (converted element by element).
ConstTensor typed_tensor(graph::DType dt, std::vector<int64_t> shape, const std::vector<double>& v);
/// Registers `c` under a generated name and returns its graph value.
int internal_constant(NodeCtx& ctx, ConstTensor c);
/// An int64 constant of rank `rank`, all dims 1 but `axis` = extent, holding 0..extent-1.
int iota_along(NodeCtx& ctx, int64_t rank, int64_t axis, int64_t extent);
/// QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, MatMulInteger,
/// ConvInteger, QLinearMatMul, QLinearConv (onnx_quantization.cpp).
void add_quant_converters(ConverterTable& t);

}  // namespace tessera::frontend::onnx_import
