// Helpers for the extra elementwise/window/quantization op tests: one-node
// graphs, JIT and interpreter runs, element access and seeded random data.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "engine/core/error.h"
#include "engine/driver/driver.h"
#include "engine/graph/op_registry.h"

namespace tessera::elemx_test {

using graph::DType;
using graph::TensorType;
using runtime::NDArray;

/// A graph of one node `op` over fresh graph inputs of `types`.
inline graph::Graph one_node(const std::string& op, const std::vector<TensorType>& types,
                             std::map<std::string, graph::AttrValue> attrs = {}) {
    graph::Graph g;
    graph::Node n;
    n.op = op;
    n.name = "n0";
    n.attrs = std::move(attrs);
    for (size_t i = 0; i < types.size(); ++i) {
        graph::Value v;
        v.name = "in" + std::to_string(i);
        v.type = types[i];
        int idx = g.add_value(std::move(v));
        g.inputs.push_back(idx);
        n.inputs.push_back(idx);
    }
    std::vector<TensorType> out = graph::infer_types(g, n);
    for (size_t i = 0; i < out.size(); ++i) {
        graph::Value v;
        v.name = "out" + std::to_string(i);
        v.type = out[i];
        int idx = g.add_value(std::move(v));
        n.outputs.push_back(idx);
        g.outputs.push_back(idx);
    }
    g.add_node(std::move(n));
    return g;
}

/// float32 array of `shape` with values uniform in [lo, hi], away from zero by `gap`.
inline NDArray uniform(std::vector<int64_t> shape, double lo, double hi, uint64_t seed,
                       double gap = 0.05) {
    NDArray a = NDArray::empty({DType::Float32, std::move(shape)});
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> d(lo, hi);
    for (int64_t i = 0; i < a.num_elements(); ++i) {
        double v = d(rng);
        while (std::fabs(v) < gap) v = d(rng);
        a.data<float>()[i] = float(v);
    }
    return a;
}

/// Integer array (stored as `dtype`) with values uniform in [lo, hi].
template <typename T>
NDArray uniform_int(DType dtype, std::vector<int64_t> shape, int64_t lo, int64_t hi,
                    uint64_t seed) {
    NDArray a = NDArray::empty({dtype, std::move(shape)});
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<int64_t> d(lo, hi);
    for (int64_t i = 0; i < a.num_elements(); ++i) a.data<T>()[i] = T(d(rng));
    return a;
}

/// The compiled (JIT) outputs of g on `inputs`.
inline std::vector<NDArray> run_jit(const graph::Graph& g, const std::vector<NDArray>& inputs) {
    return driver::build(g)->run(inputs);
}

/// Expects `got` (float32) to match `want` element by element within rtol/atol.
inline void expect_close(const NDArray& got, const std::vector<double>& want, double rtol,
                         double atol, const std::string& what) {
    ASSERT_EQ(got.dtype(), DType::Float32) << what;
    ASSERT_EQ(size_t(got.num_elements()), want.size()) << what;
    int bad = 0;
    for (size_t i = 0; i < want.size(); ++i) {
        double g = got.data<float>()[i];
        if (!(std::fabs(g - want[i]) <= atol + rtol * std::fabs(want[i])) && ++bad <= 5)
            ADD_FAILURE() << what << ": element " << i << " is " << g << ", expected " << want[i];
    }
}

}  // namespace tessera::elemx_test
