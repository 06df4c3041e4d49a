// Helpers for the graph pass tests: hand-built graphs with random non-zero
// constants, and a numeric comparison of two graphs through the loop-IR
// interpreter on the same random inputs.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/driver/driver.h"
#include "engine/graph/op_registry.h"
#include "engine/runtime/ndarray.h"

namespace tessera::passes::testing {

inline graph::TensorType f32(std::vector<int64_t> shape) {
    return graph::TensorType{graph::DType::Float32, std::move(shape)};
}

inline int input(graph::Graph& g, const std::string& name, std::vector<int64_t> shape) {
    graph::Value v;
    v.name = name;
    v.type = f32(std::move(shape));
    int idx = g.add_value(std::move(v));
    g.inputs.push_back(idx);
    return idx;
}

/// A float32 constant with seeded random non-zero values (or all `fill` when given).
inline int constant(graph::Graph& g, const std::string& name, std::vector<int64_t> shape,
                    uint64_t seed, float fill = 0.f) {
    graph::TensorType t = f32(std::move(shape));
    runtime::NDArray a = runtime::random_ndarray(t, seed);
    if (fill != 0.f)
        for (int64_t i = 0; i < a.num_elements(); ++i) a.data<float>()[i] = fill;
    auto data = std::make_shared<graph::ConstantData>();
    data->bytes.assign(static_cast<uint8_t*>(a.raw()), static_cast<uint8_t*>(a.raw()) + a.num_bytes());
    graph::Value v;
    v.name = name;
    v.type = t;
    v.constant = data;
    return g.add_value(std::move(v));
}

/// Appends node `op` named `name` whose single output (also named `name`) has
/// the type the op's shape rule gives.
inline int node(graph::Graph& g, const std::string& op, const std::string& name,
                std::vector<int> inputs, std::map<std::string, graph::AttrValue> attrs = {}) {
    graph::Node n;
    n.op = op;
    n.name = name;
    n.inputs = std::move(inputs);
    n.attrs = std::move(attrs);
    std::vector<graph::TensorType> types = graph::infer_types(g, n);
    graph::Value v;
    v.name = name;
    v.type = types.at(0);
    int o = g.add_value(std::move(v));
    n.outputs = {o};
    g.add_node(std::move(n));
    return o;
}

/// Both graphs give the same outputs (rtol 1e-4) on the same random inputs,
/// and the outputs are not all zero (so the comparison means something).
inline void expect_same_outputs(const graph::Graph& before, const graph::Graph& after,
                                uint64_t seed = 3) {
    std::vector<runtime::NDArray> in = driver::random_inputs(before, seed);
    std::vector<runtime::NDArray> a = driver::interpret_graph(before, in);
    std::vector<runtime::NDArray> b = driver::interpret_graph(after, in);
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
        runtime::Difference d = runtime::compare(b[i], a[i]);
        EXPECT_TRUE(runtime::allclose(b[i], a[i], 1e-4, 1e-5))
            << "output " << i << ": max abs err " << d.max_abs << ", max rel err " << d.max_rel;
        bool nonzero = false;
        for (int64_t k = 0; k < a[i].num_elements() && !nonzero; ++k)
            nonzero = a[i].data<float>()[k] != 0.f;
        EXPECT_TRUE(nonzero) << "output " << i << " is all zero";
    }
}

/// Number of nodes with op `op`.
inline int count_op(const graph::Graph& g, const std::string& op) {
    int k = 0;
    for (const auto& n : g.nodes) k += n.op == op;
    return k;
}

}  // namespace tessera::passes::testing
