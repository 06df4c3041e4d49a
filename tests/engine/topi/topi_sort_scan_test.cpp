// topk (rank-based selection) and cumsum (masked reduction) against naive
// loops, run through the loop-IR interpreter on random data with ties.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "engine/graph/op_registry.h"
#include "engine/tir/interpreter.h"
#include "engine/topi/topi.h"

namespace tessera::topi {
namespace {

// A one-node graph over a (rows, n) float32 input.
graph::Graph one_node(const std::string& op, std::map<std::string, graph::AttrValue> attrs,
                      int64_t rows, int64_t n) {
    graph::Graph g;
    graph::Value x;
    x.name = "x";
    x.type = {graph::DType::Float32, {rows, n}};
    g.inputs.push_back(g.add_value(x));
    graph::Node node;
    node.op = op;
    node.name = op;
    node.attrs = std::move(attrs);
    node.inputs = {0};
    for (const auto& t : graph::infer_types(g, node)) {
        graph::Value o;
        o.name = "out" + std::to_string(node.outputs.size());
        o.type = t;
        node.outputs.push_back(g.add_value(o));
    }
    g.add_node(node);
    return g;
}

std::vector<float> random_with_ties(size_t count, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> d(-6, 6);  // few distinct values: many ties
    std::vector<float> v(count);
    for (float& f : v) f = float(d(rng)) * 0.25f + (d(rng) == 0 ? 0.0f : 0.1f);
    return v;
}

TEST(TopiTopK, MatchesStableSortLargestAndSmallest) {
    const int64_t rows = 3, n = 9, k = 4;
    for (int64_t largest : {1, 0}) {
        graph::Graph g = one_node("topk", {{"k", k}, {"axis", int64_t(1)}, {"largest", largest}}, rows, n);
        std::vector<float> x = random_with_ties(size_t(rows * n), 5);
        std::vector<float> values(size_t(rows * k));
        std::vector<int64_t> indices(size_t(rows * k));
        tir::interpret(lower_node(g, 0), {x.data(), values.data(), indices.data()});
        for (int64_t r = 0; r < rows; ++r) {
            std::vector<int64_t> order(static_cast<size_t>(n), 0);
            std::iota(order.begin(), order.end(), 0);
            std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
                float xa = x[size_t(r * n + a)], xb = x[size_t(r * n + b)];
                return largest ? xa > xb : xa < xb;
            });
            for (int64_t j = 0; j < k; ++j) {
                EXPECT_EQ(indices[size_t(r * k + j)], order[size_t(j)]) << r << "," << j;
                EXPECT_EQ(values[size_t(r * k + j)], x[size_t(r * n + order[size_t(j)])]);
            }
        }
    }
}

TEST(TopiCumSum, MatchesRunningSumsInAllModes) {
    const int64_t rows = 2, n = 7;
    std::vector<float> x = random_with_ties(size_t(rows * n), 9);
    for (int64_t exclusive : {0, 1}) {
        for (int64_t reverse : {0, 1}) {
            graph::Graph g = one_node(
                "cumsum", {{"axis", int64_t(1)}, {"exclusive", exclusive}, {"reverse", reverse}}, rows, n);
            std::vector<float> y(size_t(rows * n));
            tir::interpret(lower_node(g, 0), {x.data(), y.data()});
            for (int64_t r = 0; r < rows; ++r) {
                for (int64_t i = 0; i < n; ++i) {
                    double ref = 0;
                    for (int64_t j = 0; j < n; ++j) {
                        bool in = reverse ? (exclusive ? j > i : j >= i) : (exclusive ? j < i : j <= i);
                        if (in) ref += x[size_t(r * n + j)];
                    }
                    EXPECT_NEAR(y[size_t(r * n + i)], ref, 1e-5) << exclusive << reverse << i;
                }
            }
        }
    }
}

}  // namespace
}  // namespace tessera::topi
