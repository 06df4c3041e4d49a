// Compute definitions (te) for every graph op, and lowering of one graph node
// to a PrimFunc with the default schedule.
#pragma once

#include "engine/graph/graph.h"
#include "engine/te/tensor.h"

namespace tessera::topi {

/// True if `op` has a compute definition.
bool has_compute(const std::string& op);

/// The output tensors of node `n` given its input tensors (in node input
/// order). Throws UserError naming the node for unsupported attributes.
std::vector<te::Tensor> compute_node(const graph::Node& n, const std::vector<te::Tensor>& inputs,
                                     const std::vector<graph::TensorType>& output_types);

/// One PrimFunc for node `node` of `g`: params are the node's inputs then its
/// outputs, each a placeholder of the value's type. Name: the kernel name
/// (sanitized node name).
tir::PrimFunc lower_node(const graph::Graph& g, int node);

/// A C identifier made from a node name ("conv1/Conv" -> "conv1_Conv").
std::string kernel_name(const graph::Graph& g, int node);

tir::DataType to_tir(graph::DType t);

/// The graph tensor type of a constant-shaped buffer (the inverse of to_tir
/// for the element type; other element types fail).
graph::TensorType tensor_type_of(const tir::Buffer& b);

}  // namespace tessera::topi
