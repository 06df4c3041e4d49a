// Private to the ONNX frontend: helpers shared by the indexing converters
// (onnx_index.cpp) and the data-dependent-shape ones (onnx_index_dynamic.cpp).
#pragma once

#include <string>
#include <vector>

#include "engine/frontend/onnx/onnx_context.h"

namespace tessera::frontend::onnx_import {

/// The elements of a constant as doubles (any dtype; bool gives 0 or 1).
std::vector<double> constant_values(const ConstTensor& c);
/// A constant of `type` holding `values` (converted to its dtype).
ConstTensor make_tensor(graph::TensorType type, const std::vector<double>& values);
/// Makes ONNX output k (when present and named) the constant `c`.
void define_output(NodeCtx& ctx, int k, ConstTensor c);
/// Constant input i of an op whose output shape depends on it; otherwise a
/// UserError "output shape of OP depends on input values, ..." naming `what`.
const ConstTensor& value_dependent_input(const NodeCtx& ctx, int i, const std::string& what);

/// NonZero, Unique, NonMaxSuppression: evaluated at import on constant inputs.
void add_dynamic_shape_converters(ConverterTable& t);

}  // namespace tessera::frontend::onnx_import
