// ONNX converters for extra elementwise/unary/window/quantization ops.
#include "engine/frontend/onnx/onnx_context.h"

namespace tessera::frontend::onnx_import {

void add_elemx_converters(ConverterTable& t) { (void)t; }

}  // namespace tessera::frontend::onnx_import
