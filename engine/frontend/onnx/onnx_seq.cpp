// ONNX converters for sequence, optional, string and control-flow ops.
#include "engine/frontend/onnx/onnx_context.h"

namespace tessera::frontend::onnx_import {

void add_seq_converters(ConverterTable& t) { (void)t; }

}  // namespace tessera::frontend::onnx_import
