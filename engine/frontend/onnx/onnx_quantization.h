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

/// The right operand b [..., K, N] (uint8 or int8) of integer products as
/// they read it: int8 bytes packed four to a word along K, its zero point
/// (scalar or per column; -1 for none); its column sums once a product
/// needs them. Made once, it serves every product with it (an unrolled
/// LSTM's steps): constant weights are packed and summed once.
struct IntegerWeight {
    int bytes = -1, packed = -1, zero_point = -1, column_sums = -1;
    int64_t rank = 0;
};
IntegerWeight integer_weight(NodeCtx& ctx, int b, int b_zp);

/// int32 (a - a_zp) @ (b - b_zp) of 8-bit (uint8 or int8) a [..., M, K] as
/// packed integer products (vpdpbusd where the CPU has it); a_zp is an
/// integer value (scalar or per row) or -1 for none.
int integer_product(NodeCtx& ctx, int a, int a_zp, IntegerWeight& b);

}  // namespace tessera::frontend::onnx_import
