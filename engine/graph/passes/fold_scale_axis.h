// Folds per-output-channel scales (and shifts) after conv2d into its weights and bias.
#pragma once

#include "engine/graph/passes/pass.h"

namespace tessera::passes {

/// Rewrites nn.conv2d(x, W, b) -> multiply(., s) [-> add(., t)] with constant W, b and per-channel constants s (shape (K,1,1), (1,K,1,1) or a scalar) into nn.conv2d(x, W*s, b*s [+t]) when the conv's output has no other reader.
graph::Graph fold_scale_axis(const graph::Graph& g, const PassContext& ctx);

}  // namespace tessera::passes
