// ONNX converters for indexing, scatter and data-dependent-shape ops.
#include "engine/frontend/onnx/onnx_context.h"

namespace tessera::frontend::onnx_import {

void add_index_converters(ConverterTable& t) { (void)t; }

}  // namespace tessera::frontend::onnx_import
