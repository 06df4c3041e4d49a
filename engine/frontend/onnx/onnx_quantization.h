// Quantization steps the ONNX converters share (onnx_quantization.cpp): the
// integer recurrence of ONNX Runtime's DynamicQuantizeLSTM (onnx_rnn.cpp)
// quantizes and multiplies as DynamicQuantizeLinear and MatMulInteger do.
#pragma once

#include "engine/frontend/onnx/onnx_context.h"

namespace tessera::frontend::onnx_import {

/// Graph values of a float32 tensor quantized to uint8 over all its
/// elements, as DynamicQuantizeLinear does: the bytes, the scale
/// (max(0, max x) - min(0, min x)) / 255 and the zero point.
struct DynamicQuantized {
    int q = -1, scale = -1, zero_point = -1;
};
DynamicQuantized dynamic_quantize(NodeCtx& ctx, int x);
/// The same for each row of a 2-D x: scale and zero point [rows, 1].
DynamicQuantized dynamic_quantize_rows(NodeCtx& ctx, int x);

/// int32 (a - a_zp) @ (b - b_zp) of 8-bit (uint8 or int8) a [..., M, K] and
/// b [..., K, N] as packed integer products (vpdpbusd where the CPU has it);
/// the zero points are integer values (a_zp scalar or per row, b_zp scalar
/// or per column) or -1 for none.
int integer_product(NodeCtx& ctx, int a, int a_zp, int b, int b_zp);

}  // namespace tessera::frontend::onnx_import
