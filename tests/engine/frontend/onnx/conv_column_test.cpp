// A 2-D convolution down a column (input width 1, kernel width 1: a 1-D
// convolution as jax2tf writes it) imports as one along a row (the blocked
// conv schedule tiles the output width); outputs against a naive reference.
#include <algorithm>

#include "tests/engine/frontend/onnx/index_test_util.h"

namespace tessera::index_test {
namespace {

TEST(ConvColumn, RunsAsARowAndMatchesTheDirectConvolution) {
    const int64_t C = 6, H = 40, O = 5, KH = 3, stride = 2, pad = 1;
    const int64_t OH = (H + 2 * pad - KH) / stride + 1;
    NDArray x = random_floats({1, C, H, 1}, 1), w = random_floats({O, C, KH, 1}, 2);
    NDArray b = random_floats({O}, 3);
    OneNodeModel m("Conv", 13);
    m.input("x", graph::DType::Float32, {1, C, H, 1}).constant("w", w).constant("b", b);
    m.output("y", graph::DType::Float32, {1, O, OH, 1});
    m.attr("strides", Ints{stride, 1}).attr("pads", Ints{pad, 0, pad, 0});
    graph::Graph g = m.load("conv_column");
    // The conv itself runs over a unit height: (1, C, 1, H).
    const auto conv = std::find_if(g.nodes.begin(), g.nodes.end(),
                                   [](const graph::Node& n) { return n.op == "nn.conv2d"; });
    ASSERT_NE(conv, g.nodes.end());
    EXPECT_EQ(g.values[size_t(conv->inputs[0])].type.shape, (Ints{1, C, 1, H}));
    NDArray y = run(g, {x}).at(0);
    ASSERT_EQ(y.shape(), (Ints{1, O, OH, 1}));
    for (int64_t o = 0; o < O; ++o)
        for (int64_t i = 0; i < OH; ++i) {
            double acc = b.data<float>()[o];
            for (int64_t c = 0; c < C; ++c)
                for (int64_t r = 0; r < KH; ++r) {
                    const int64_t h = i * stride - pad + r;
                    if (h < 0 || h >= H) continue;
                    acc +=
                        double(x.data<float>()[c * H + h]) * w.data<float>()[(o * C + c) * KH + r];
                }
            EXPECT_NEAR(y.data<float>()[o * OH + i], acc, 1e-4) << o << ", " << i;
        }
}

}  // namespace
}  // namespace tessera::index_test
