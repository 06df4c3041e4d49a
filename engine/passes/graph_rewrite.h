// Small helpers that graph passes share: use lists, replacing uses, adding
// constants with fresh names, and compacting a graph after nodes were dropped.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "engine/graph/graph.h"

namespace tessera::passes {

/// For every value index, the nodes that read it (ascending, each node once).
std::vector<std::vector<int>> value_consumers(const graph::Graph& g);

/// True if value `v` is one of the graph outputs.
bool is_graph_output(const graph::Graph& g, int v);

/// Keeps the nodes with keep_node[i] (in order) and drops every value that no
/// kept node, graph input or graph output references; renumbers all indices.
graph::Graph compact(const graph::Graph& g, const std::vector<bool>& keep_node);

/// Fresh value names derived from a hint ("w_folded", "w_folded_1", ...).
class NameGen {
public:
    explicit NameGen(const graph::Graph& g);
    std::string fresh(const std::string& hint);

private:
    std::set<std::string> m_used;
};

/// Appends a float32 constant value; returns its index.
int add_float_constant(graph::Graph& g, const std::string& name, const std::vector<int64_t>& shape,
                       const std::vector<float>& data);

/// The elements of a float32 constant (empty if `v` is not a float32 constant).
std::vector<float> constant_floats(const graph::Value& v);

/// True if value `v` is a float32 constant.
bool is_float_constant(const graph::Graph& g, int v);

}  // namespace tessera::passes
