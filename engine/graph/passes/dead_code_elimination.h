// Dead code elimination: nodes and values no graph output needs.
#pragma once

#include "engine/graph/passes/pass.h"

namespace tessera::passes {

/// Removes nodes whose outputs no graph output depends on, and constants nothing reads. Graph inputs are always kept.
graph::Graph dead_code_elimination(const graph::Graph& g, const PassContext& ctx);

}  // namespace tessera::passes
