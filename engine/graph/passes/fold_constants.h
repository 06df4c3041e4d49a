// Constant folding: nodes whose inputs are all constants become constants.
#pragma once

#include "engine/graph/passes/pass.h"

namespace tessera::passes {

/// Evaluates every node whose inputs are all constants (with ctx.evaluator or the interpreter) and turns its outputs into constants. Nodes producing a graph output are kept so the graph keeps at least one kernel per output.
graph::Graph fold_constants(const graph::Graph& g, const PassContext& ctx);

}  // namespace tessera::passes
