// Recognises GELU written out in elementwise ops (the erf form exporters
// below opset 20 write) and replaces it by one nn.gelu node.
#pragma once

#include "engine/passes/pass.h"

namespace tessera::passes {

/// Rewrites x * 0.5 * (1 + erf(x / sqrt(2))) (the erf's argument also as
/// x * (1 / sqrt(2)); the three products in any order and grouping
/// exporters use) into nn.gelu(x). Every intermediate must have no other
/// reader and not be a graph output; the matched nodes are removed.
graph::Graph fuse_gelu(const graph::Graph& g, const PassContext& ctx);

}  // namespace tessera::passes
