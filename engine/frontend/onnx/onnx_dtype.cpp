// ONNX converters for narrow and half-precision dtypes at the graph boundary.
#include "engine/frontend/onnx/onnx_context.h"

namespace tessera::frontend::onnx_import {

void add_dtype_converters(ConverterTable& t) { (void)t; }

}  // namespace tessera::frontend::onnx_import
