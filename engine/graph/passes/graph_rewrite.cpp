// Shared helpers of the graph passes.
#include "engine/graph/passes/graph_rewrite.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "engine/core/error.h"

namespace tessera::passes {

std::vector<std::vector<int>> value_consumers(const graph::Graph& g) {
    std::vector<std::vector<int>> uses(g.values.size());
    for (int i = 0; i < int(g.nodes.size()); ++i) {
        for (int v : g.nodes[size_t(i)].inputs) {
            if (v < 0 || v >= int(uses.size())) continue;
            auto& list = uses[size_t(v)];
            if (list.empty() || list.back() != i) list.push_back(i);
        }
    }
    return uses;
}

bool is_graph_output(const graph::Graph& g, int v) {
    return std::find(g.outputs.begin(), g.outputs.end(), v) != g.outputs.end();
}

graph::Graph compact(const graph::Graph& g, const std::vector<bool>& keep_node) {
    TS_CHECK(keep_node.size() == g.nodes.size()) << "compact: keep list size";
    std::vector<bool> keep_value(g.values.size(), false);
    for (int v : g.inputs) keep_value[size_t(v)] = true;
    for (int v : g.outputs) keep_value[size_t(v)] = true;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
        if (!keep_node[i]) continue;
        for (int v : g.nodes[i].inputs) keep_value[size_t(v)] = true;
        for (int v : g.nodes[i].outputs) keep_value[size_t(v)] = true;
    }
    graph::Graph out;
    out.name = g.name;
    std::vector<int> vmap(g.values.size(), -1);
    for (size_t v = 0; v < g.values.size(); ++v) {
        if (!keep_value[v]) continue;
        graph::Value val = g.values[v];
        val.producer = -1;
        vmap[v] = out.add_value(std::move(val));
    }
    auto remap = [&](std::vector<int> list) {
        for (int& v : list) {
            TS_CHECK(vmap[size_t(v)] >= 0) << "compact: value '" << g.values[size_t(v)].name
                                           << "' is used but was dropped";
            v = vmap[size_t(v)];
        }
        return list;
    };
    for (size_t i = 0; i < g.nodes.size(); ++i) {
        if (!keep_node[i]) continue;
        graph::Node n = g.nodes[i];
        n.inputs = remap(n.inputs);
        n.outputs = remap(n.outputs);
        out.add_node(std::move(n));
    }
    out.inputs = remap(g.inputs);
    out.outputs = remap(g.outputs);
    return out;
}

NameGen::NameGen(const graph::Graph& g) {
    for (const graph::Value& v : g.values) m_used.insert(v.name);
}

std::string NameGen::fresh(const std::string& hint) {
    std::string name = hint;
    for (int k = 1; m_used.count(name); ++k) name = hint + "_" + std::to_string(k);
    m_used.insert(name);
    return name;
}

int add_float_constant(graph::Graph& g, const std::string& name, const std::vector<int64_t>& shape,
                       const std::vector<float>& data) {
    graph::Value v;
    v.name = name;
    v.type = graph::TensorType{graph::DType::Float32, shape};
    TS_CHECK(v.type.num_elements() == int64_t(data.size()))
        << "constant '" << name << "': " << data.size() << " values for " << v.type.str();
    auto c = std::make_shared<graph::ConstantData>();
    c->bytes.resize(data.size() * sizeof(float));
    if (!data.empty()) std::memcpy(c->bytes.data(), data.data(), c->bytes.size());
    v.constant = std::move(c);
    return g.add_value(std::move(v));
}

std::vector<float> constant_floats(const graph::Value& v) {
    if (!v.is_constant() || v.type.dtype != graph::DType::Float32) return {};
    size_t n = size_t(v.type.num_elements());
    TS_USER_CHECK(v.constant->bytes.size() == n * sizeof(float))
        << "constant '" << v.name << "' holds " << v.constant->bytes.size()
        << " bytes but its type " << v.type.str() << " needs " << n * sizeof(float);
    std::vector<float> out(n);
    if (n) std::memcpy(out.data(), v.constant->bytes.data(), n * sizeof(float));
    return out;
}

bool is_float_constant(const graph::Graph& g, int v) {
    const graph::Value& val = g.values[size_t(v)];
    return val.is_constant() && val.type.dtype == graph::DType::Float32;
}

int sole_consumer(const graph::Graph& g, const std::vector<std::vector<int>>& uses, int v) {
    if (v < 0 || uses[size_t(v)].size() != 1 || is_graph_output(g, v)) return -1;
    return uses[size_t(v)][0];
}

bool is_scalar_constant(const graph::Graph& g, int v, double want, double tol) {
    if (v < 0 || !is_float_constant(g, v) || g.values[size_t(v)].type.num_elements() != 1) return false;
    const double x = constant_floats(g.values[size_t(v)]).at(0);
    return std::fabs(x - want) <= tol * std::max(1.0, std::fabs(want));
}

int other_operand(const graph::Node& n, int v) {
    if (n.inputs.size() != 2) return -1;
    if (n.inputs[0] == v) return n.inputs[1];
    if (n.inputs[1] == v) return n.inputs[0];
    return -1;
}

}  // namespace tessera::passes
