// Inference simplification: batch norm folded into conv2d/gemm weights or decomposed into multiply + add; no-op reshapes (Identity, Dropout) removed.
#pragma once

#include "engine/graph/passes/pass.h"

namespace tessera::passes {

/// Folds nn.batch_norm with constant parameters into a preceding nn.conv2d / nn.gemm with constant weights (when the BN is that node's only reader), otherwise rewrites it as x * scale + shift with per-channel constants; removes reshapes to the same shape and merges reshape chains.
graph::Graph simplify_inference(const graph::Graph& g, const PassContext& ctx);

}  // namespace tessera::passes
