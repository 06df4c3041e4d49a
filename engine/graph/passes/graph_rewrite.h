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

/// The one node that reads `v` when it has exactly one reader and is not a
/// graph output (a pattern may then absorb it), else -1.
int sole_consumer(const graph::Graph& g, const std::vector<std::vector<int>>& uses, int v);

/// True when `v` is a float32 constant of one element whose value is within
/// `tol` of `want` (relative).
bool is_scalar_constant(const graph::Graph& g, int v, double want, double tol = 1e-4);

/// The operand of binary node `n` other than value `v` (-1 if neither is `v`).
int other_operand(const graph::Node& n, int v);

/// What pattern matchers share: the graph, each value's readers, lookups.
class PatternMatcher {
public:
    explicit PatternMatcher(const graph::Graph& g) : m_g(g), m_uses(value_consumers(g)) {}

protected:
    const graph::Node& node(int i) const { return m_g.nodes[size_t(i)]; }
    /// The sole reader of `v` when it applies `op` (see sole_consumer), else -1.
    int sole(int v, const std::string& op) const {
        const int c = sole_consumer(m_g, m_uses, v);
        return c >= 0 && node(c).op == op ? c : -1;
    }

    const graph::Graph& m_g;
    std::vector<std::vector<int>> m_uses;
};

}  // namespace tessera::passes
