// Recognises GELU written out in elementwise ops (the erf and tanh forms
// exporters below opset 20 write) and replaces it by one nn.gelu node.
#pragma once

#include "engine/graph/passes/pass.h"

namespace tessera::passes {

/// Rewrites x * 0.5 * (1 + erf(x / sqrt(2))) (the erf's argument also as
/// x * (1 / sqrt(2)); the three products in any order and grouping
/// exporters use) into nn.gelu(x), and
/// x * 0.5 * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))) (x^3 as
/// power(x, 3) or x * x * x) into nn.gelu(x, approximate = "tanh"). Every
/// intermediate must have no other reader and not be a graph output; the
/// matched nodes are removed.
graph::Graph fuse_gelu(const graph::Graph& g, const PassContext& ctx);

}  // namespace tessera::passes
