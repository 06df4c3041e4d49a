// Common subexpression elimination over graph nodes.
#pragma once

#include "engine/graph/passes/pass.h"

namespace tessera::passes {

/// Replaces each node that repeats an earlier node (same op, attributes and inputs) by the earlier node's outputs. Nodes producing graph outputs are kept.
graph::Graph eliminate_common_subexpr(const graph::Graph& g, const PassContext& ctx);

}  // namespace tessera::passes
