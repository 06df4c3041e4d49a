// fuse_layer_norm and fuse_gelu on hand-built graphs in the forms exporters
// write: one fused node after the pass, the same outputs on random data, and
// nothing changed where a pattern does not hold exactly.
#include <gtest/gtest.h>

#include <cmath>

#include "engine/graph/passes/fuse_gelu.h"
#include "engine/graph/passes/fuse_layer_norm.h"
#include "tests/engine/graph/passes/passes_test_util.h"

namespace tessera::passes {
namespace {

using namespace testing;

enum class Square { kPow, kMul };
enum class Scale { kDivide, kTimesReciprocal };

struct LayerNormForm {
    Square square = Square::kPow;
    Scale scale = Scale::kDivide;
    std::vector<int64_t> gamma_shape = {32};  // empty: no scale and shift
    bool d_is_output = false;                 // d also read outside the pattern
};

/// (x - mean) / sqrt(mean((x - mean)^2) + eps) [* gamma + beta] over the
/// last axis of x[2, 5, 32].
graph::Graph decomposed_layer_norm(const LayerNormForm& f) {
    graph::Graph g;
    int x = input(g, "x", {2, 5, 32});
    const std::map<std::string, graph::AttrValue> mean_attrs = {
        {"axes", std::vector<int64_t>{2}}, {"keepdims", int64_t(1)}};
    int m = node(g, "reduce_mean", "m", {x}, mean_attrs);
    int d = node(g, "subtract", "d", {x, m});
    int sq = f.square == Square::kPow ? node(g, "power", "sq", {d, constant(g, "two", {}, 0, 2.f)})
                                      : node(g, "multiply", "sq", {d, d});
    int v = node(g, "reduce_mean", "v", {sq}, mean_attrs);
    int e = node(g, "add", "e", {v, constant(g, "eps", {}, 0, 1e-5f)});
    int s = node(g, "sqrt", "s", {e});
    int y = f.scale == Scale::kDivide
                ? node(g, "divide", "y", {d, s})
                : node(g, "multiply", "y", {d, node(g, "reciprocal", "r", {s})});
    if (!f.gamma_shape.empty()) {
        y = node(g, "multiply", "yg", {constant(g, "gamma", f.gamma_shape, 4), y});
        y = node(g, "add", "yb", {y, constant(g, "beta", {32}, 5)});
    }
    g.outputs = {y};
    if (f.d_is_output) g.outputs.push_back(d);
    return g;
}

TEST(FuseLayerNorm, DecomposedFormsBecomeOneNodeWithTheSameOutputs) {
    std::vector<LayerNormForm> forms = {
        {},
        {Square::kMul, Scale::kTimesReciprocal, {1, 1, 32}},
        {Square::kPow, Scale::kDivide, {}},
    };
    for (const LayerNormForm& f : forms) {
        graph::Graph g = decomposed_layer_norm(f);
        graph::Graph after = fuse_layer_norm(g, {});
        ASSERT_EQ(after.nodes.size(), 1u) << graph::print(after);
        const graph::Node& n = after.nodes[0];
        EXPECT_EQ(n.op, "nn.layer_norm");
        EXPECT_EQ(n.attr_int("axis", -1), 2);
        EXPECT_NEAR(n.attr_float("epsilon", 0), 1e-5, 1e-12);
        EXPECT_EQ(n.inputs.size(), f.gamma_shape.empty() ? 2u : 3u);
        EXPECT_EQ(after.values[size_t(n.outputs[0])].name, g.values[size_t(g.outputs[0])].name);
        expect_same_outputs(g, after);
    }
}

TEST(FuseLayerNorm, LeavesAPatternWhoseIntermediateIsReadElsewhere) {
    LayerNormForm f;
    f.d_is_output = true;
    graph::Graph g = decomposed_layer_norm(f);
    EXPECT_EQ(graph::print(fuse_layer_norm(g, {})), graph::print(g));
}

enum class Grouping { kXTimesPThenHalf, kHalfXThenP, kPHalfThenX };

/// GELU's erf form over x[4, 37] as exporters group its products.
graph::Graph erf_gelu(Grouping grouping, float half = 0.5f, bool multiply_by_inverse = false) {
    graph::Graph g;
    int x = input(g, "x", {4, 37});
    int t = multiply_by_inverse
                ? node(g, "multiply", "t", {x, constant(g, "inv_sqrt2", {}, 0, float(M_SQRT1_2))})
                : node(g, "divide", "t", {x, constant(g, "sqrt2", {}, 0, float(M_SQRT2))});
    int e = node(g, "erf", "e", {t});
    int p = node(g, "add", "p", {constant(g, "one", {}, 0, 1.f), e});
    int h = constant(g, "half", {}, 0, half);
    int y = -1;
    switch (grouping) {
        case Grouping::kXTimesPThenHalf: y = node(g, "multiply", "y", {node(g, "multiply", "xp", {x, p}), h}); break;
        case Grouping::kHalfXThenP: y = node(g, "multiply", "y", {node(g, "multiply", "xh", {h, x}), p}); break;
        case Grouping::kPHalfThenX: y = node(g, "multiply", "y", {node(g, "multiply", "ph", {p, h}), x}); break;
    }
    // x has another reader: the fused node reads it too.
    int z = node(g, "add", "z", {y, x});
    g.outputs = {z};
    return g;
}

TEST(FuseGelu, ErfFormsBecomeOneNodeWithTheSameOutputs) {
    for (Grouping grouping : {Grouping::kXTimesPThenHalf, Grouping::kHalfXThenP, Grouping::kPHalfThenX})
        for (bool inverse : {false, true}) {
            graph::Graph g = erf_gelu(grouping, 0.5f, inverse);
            graph::Graph after = fuse_gelu(g, {});
            EXPECT_EQ(count_op(after, "nn.gelu"), 1) << graph::print(after);
            EXPECT_EQ(after.nodes.size(), 2u) << graph::print(after);
            expect_same_outputs(g, after);
        }
}

/// GELU's tanh form over x[4, 37]: (x * 0.5) * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3))).
graph::Graph tanh_gelu(bool cube_as_power, float cubic = 0.044715f) {
    graph::Graph g;
    int x = input(g, "x", {4, 37});
    int c3 = cube_as_power ? node(g, "power", "c3", {x, constant(g, "three", {}, 0, 3.f)})
                           : node(g, "multiply", "c3", {node(g, "multiply", "x2", {x, x}), x});
    int m = node(g, "multiply", "m", {constant(g, "cubic", {}, 0, cubic), c3});
    int a = node(g, "add", "a", {x, m});
    int t = node(g, "multiply", "t", {a, constant(g, "k", {}, 0, float(std::sqrt(2.0 / M_PI)))});
    int th = node(g, "tanh", "th", {t});
    int p = node(g, "add", "p", {th, constant(g, "one", {}, 0, 1.f)});
    int y = node(g, "multiply", "y", {node(g, "multiply", "xh", {x, constant(g, "half", {}, 0, 0.5f)}), p});
    g.outputs = {y};
    return g;
}

TEST(FuseGelu, TanhFormsBecomeOneNodeWithTheSameOutputs) {
    for (bool power : {true, false}) {
        graph::Graph g = tanh_gelu(power);
        graph::Graph after = fuse_gelu(g, {});
        ASSERT_EQ(after.nodes.size(), 1u) << graph::print(after);
        EXPECT_EQ(after.nodes[0].op, "nn.gelu");
        EXPECT_EQ(after.nodes[0].attr_str("approximate"), "tanh");
        expect_same_outputs(g, after);
    }
    graph::Graph other = tanh_gelu(true, 0.05f);
    EXPECT_EQ(graph::print(fuse_gelu(other, {})), graph::print(other));
}

TEST(FuseGelu, LeavesOtherConstants) {
    graph::Graph g = erf_gelu(Grouping::kXTimesPThenHalf, 0.6f);
    EXPECT_EQ(graph::print(fuse_gelu(g, {})), graph::print(g));
}

}  // namespace
}  // namespace tessera::passes
