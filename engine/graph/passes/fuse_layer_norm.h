// Recognises LayerNorm written out in elementwise ops (as exporters below
// opset 17 write it) and replaces it by one nn.layer_norm node.
#pragma once

#include "engine/graph/passes/pass.h"

namespace tessera::passes {

/// Rewrites
///   m = reduce_mean(x, axes = the last r axes, keepdims)
///   d = x - m
///   v = reduce_mean(d ^ 2 | d * d, same axes, keepdims)
///   y = d / sqrt(v + eps) | d * reciprocal(sqrt(v + eps))
///   [y = y * gamma] [y = y + beta]        (gamma, beta constants)
/// into y = nn.layer_norm(x, gamma, beta) (axis = rank - r, epsilon = eps;
/// gamma of ones when absent). Every intermediate must have no other reader
/// and not be a graph output; the matched nodes are removed.
graph::Graph fuse_layer_norm(const graph::Graph& g, const PassContext& ctx);

}  // namespace tessera::passes
