// Helpers of the topi tests: build a one-node graph, lower it, run it with the
// loop-IR interpreter, and compare with a naive reference.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "engine/core/error.h"
#include "engine/graph/graph.h"
#include "engine/tir/interpreter.h"
#include "engine/topi/topi.h"

namespace tessera::topi::testing {

using Shape = std::vector<int64_t>;
using Data = std::vector<float>;

inline int64_t numel(const Shape& s) {
    int64_t n = 1;
    for (int64_t d : s) n *= d;
    return n;
}

/// Uniform in [-1, -0.1] u [0.1, 1]: random, non-zero, safe to divide by.
inline Data random_data(const Shape& s, unsigned seed) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<float> mag(0.1f, 1.0f);
    std::bernoulli_distribution neg(0.5);
    Data d(size_t(numel(s)));
    for (float& v : d) v = neg(gen) ? -mag(gen) : mag(gen);
    return d;
}

/// A graph with one node `op` over fresh float32 inputs of `in_shapes`
/// (named in0, in1, ...) and one output of `out_shape`.
struct OneNode {
    graph::Graph g;
    int node = -1;

    OneNode(const std::string& op, const std::vector<Shape>& in_shapes, const Shape& out_shape,
            std::map<std::string, graph::AttrValue> attrs = {}, const std::string& name = "n0") {
        g.name = "test";
        graph::Node n;
        n.op = op;
        n.name = name;
        n.attrs = std::move(attrs);
        for (size_t i = 0; i < in_shapes.size(); ++i) {
            graph::Value v;
            v.name = "in" + std::to_string(i);
            v.type = {graph::DType::Float32, in_shapes[i]};
            int id = g.add_value(v);
            g.inputs.push_back(id);
            n.inputs.push_back(id);
        }
        graph::Value o;
        o.name = "out";
        o.type = {graph::DType::Float32, out_shape};
        int out = g.add_value(o);
        n.outputs.push_back(out);
        node = g.add_node(n);
        g.outputs.push_back(out);
    }

    /// Lowers the node and runs it on `inputs`; returns the output.
    Data run(std::vector<Data> inputs) const {
        graph::verify(g);  // the test graph agrees with the op's shape rule
        tir::PrimFunc f = lower_node(g, node);
        EXPECT_EQ(f->params.size(), inputs.size() + 1);
        const graph::Value& out = g.values[g.nodes[node].outputs[0]];
        Data result(size_t(out.type.num_elements()), std::nanf(""));
        std::vector<void*> args;
        for (Data& d : inputs) args.push_back(d.data());
        args.push_back(result.data());
        tir::interpret(f, args);
        return result;
    }
};

/// Every element within rtol * max(|expected|, 1): relative for large values,
/// absolute near zero (sums of products may cancel).
inline void expect_close(const Data& actual, const Data& expected, double rtol = 1e-5) {
    ASSERT_EQ(actual.size(), expected.size());
    int bad = 0;
    for (size_t i = 0; i < actual.size(); ++i) {
        double tol = rtol * std::max(std::fabs(double(expected[i])), 1.0);
        if (!(std::fabs(double(actual[i]) - expected[i]) <= tol) && ++bad <= 5)
            ADD_FAILURE() << "element " << i << ": got " << actual[i] << ", expected "
                          << expected[i];
    }
    EXPECT_EQ(bad, 0) << "mismatching elements of " << actual.size();
}

}  // namespace tessera::topi::testing
