// Common subexpression elimination over graph nodes (like Relay's
// EliminateCommonSubexpr): a node equal to an earlier one is replaced by it.
#include "engine/graph/passes/eliminate_common_subexpr.h"

#include <map>
#include <tuple>

#include "engine/graph/passes/graph_rewrite.h"

namespace tessera::passes {

graph::Graph eliminate_common_subexpr(const graph::Graph& in, const PassContext&) {
    graph::Graph g = in;
    using Key = std::tuple<std::string, std::vector<int>, std::map<std::string, graph::AttrValue>>;
    std::map<Key, int> seen;
    std::vector<int> replace(g.values.size());
    for (size_t v = 0; v < replace.size(); ++v) replace[v] = int(v);
    std::vector<bool> keep(g.nodes.size(), true);
    bool changed = false;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
        graph::Node& n = g.nodes[i];
        for (int& v : n.inputs) v = replace[size_t(v)];
        Key key{n.op, n.inputs, n.attrs};
        auto it = seen.find(key);
        if (it == seen.end()) {
            seen.emplace(std::move(key), int(i));
            continue;
        }
        const graph::Node& first = g.nodes[size_t(it->second)];
        bool output_kept = false;
        for (int v : n.outputs) output_kept = output_kept || is_graph_output(g, v);
        if (output_kept || first.outputs.size() != n.outputs.size()) continue;
        for (size_t k = 0; k < n.outputs.size(); ++k)
            replace[size_t(n.outputs[k])] = first.outputs[k];
        keep[i] = false;
        changed = true;
    }
    return changed ? compact(g, keep) : g;
}

}  // namespace tessera::passes
