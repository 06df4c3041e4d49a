// Dead code elimination: keep only what the graph outputs depend on.
#include "engine/graph/passes/dead_code_elimination.h"

#include "engine/graph/passes/graph_rewrite.h"

namespace tessera::passes {

graph::Graph dead_code_elimination(const graph::Graph& g, const PassContext&) {
    std::vector<bool> live_value(g.values.size(), false);
    for (int v : g.outputs) live_value[size_t(v)] = true;
    std::vector<bool> keep(g.nodes.size(), false);
    for (size_t i = g.nodes.size(); i-- > 0;) {
        const graph::Node& n = g.nodes[i];
        for (int v : n.outputs) keep[i] = keep[i] || live_value[size_t(v)];
        if (!keep[i]) continue;
        for (int v : n.inputs) live_value[size_t(v)] = true;
    }
    return compact(g, keep);
}

}  // namespace tessera::passes
