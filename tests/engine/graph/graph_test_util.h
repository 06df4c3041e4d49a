// Helpers for building small graphs by hand in the graph tests.
#pragma once

#include <string>
#include <vector>

#include "engine/graph/graph.h"

namespace tessera::graph::testing {

inline TensorType f32(std::vector<int64_t> shape) {
    return TensorType{DType::Float32, std::move(shape)};
}

inline int input(Graph& g, const std::string& name, TensorType t) {
    Value v;
    v.name = name;
    v.type = std::move(t);
    int idx = g.add_value(std::move(v));
    g.inputs.push_back(idx);
    return idx;
}

/// A float32 constant filled with 0.5f (contents do not matter to the graph tests).
inline int constant(Graph& g, const std::string& name, TensorType t) {
    auto data = std::make_shared<ConstantData>();
    data->bytes.resize(size_t(t.num_bytes()));
    float* p = reinterpret_cast<float*>(data->bytes.data());
    for (int64_t i = 0; i < t.num_elements(); ++i) p[i] = 0.5f;
    Value v;
    v.name = name;
    v.type = std::move(t);
    v.constant = data;
    return g.add_value(std::move(v));
}

/// Appends node `op` with one output named `name` of type `out`.
inline int node(Graph& g, const std::string& op, const std::string& name, std::vector<int> inputs,
                TensorType out, std::map<std::string, AttrValue> attrs = {}) {
    Value v;
    v.name = name;
    v.type = std::move(out);
    int o = g.add_value(std::move(v));
    Node n;
    n.op = op;
    n.name = name;
    n.inputs = std::move(inputs);
    n.outputs = {o};
    n.attrs = std::move(attrs);
    g.add_node(std::move(n));
    return o;
}

}  // namespace tessera::graph::testing
