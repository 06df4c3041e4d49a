// What every graph pass sees: the signature of a pass, and the context it runs
// in (opt level, how to evaluate a node on constant data).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "engine/graph/graph.h"
#include "engine/runtime/ndarray.h"

namespace tessera::passes {

/// Computes the outputs of node `node` of `g` from concrete input arrays (in
/// node input order). The driver installs a JIT-based one; without one, passes
/// use the loop-IR interpreter (tir::interpret on topi::lower_node).
using NodeEvaluator = std::function<std::vector<runtime::NDArray>(
    const graph::Graph& g, int node, const std::vector<runtime::NDArray>& inputs)>;

struct PassContext {
    int opt_level = 2;
    NodeEvaluator evaluator;  // may be empty: the interpreter is used
};

/// A graph pass is a pure function: it returns the rewritten graph and never
/// changes its input. Graph inputs and outputs keep their order and types.
using PassFn = graph::Graph (*)(const graph::Graph& g, const PassContext& ctx);

/// Evaluates node `node` with ctx.evaluator, or the interpreter when unset.
std::vector<runtime::NDArray> evaluate_node(const graph::Graph& g, int node,
                                            const std::vector<runtime::NDArray>& inputs,
                                            const PassContext& ctx);

}  // namespace tessera::passes
