// Private to the ONNX frontend: ai.onnx.preview.training.Gradient, a symbolic
// reverse-mode differentiator over the imported graph (onnx_gradient.cpp).
#pragma once

#include "engine/frontend/onnx/onnx_context.h"

namespace tessera::frontend::onnx_import {

/// Registers "ai.onnx.preview.training.Gradient" (called by add_loss_converters).
void add_gradient_converters(ConverterTable& t);

}  // namespace tessera::frontend::onnx_import
