// ConvTranspose whose kernel is as large as its stride (2x2 / 2 upsampling):
// each output takes one kernel tap (topi's tiled form, without the taps'
// divisibility tests); outputs against the definition (every input pixel
// scattered through the kernel), with pads and groups.
#include "tests/engine/frontend/onnx/index_test_util.h"

namespace tessera::index_test {
namespace {

struct Case {
    int64_t C, K, H, W, kernel, group;
    Ints pads;  // top, left, bottom, right
};

void check(const Case& c, uint32_t seed) {
    SCOPED_TRACE("kernel " + std::to_string(c.kernel) + " group " + std::to_string(c.group) +
                 " pad " + std::to_string(c.pads[0]));
    const int64_t s = c.kernel, Kg = c.K / c.group, Cg = c.C / c.group;
    const int64_t OH = (c.H - 1) * s + c.kernel - c.pads[0] - c.pads[2];
    const int64_t OW = (c.W - 1) * s + c.kernel - c.pads[1] - c.pads[3];
    NDArray x = random_floats({1, c.C, c.H, c.W}, seed);
    NDArray w = random_floats({c.C, Kg, c.kernel, c.kernel}, seed + 1);
    OneNodeModel m("ConvTranspose", 13);
    m.input("x", graph::DType::Float32, {1, c.C, c.H, c.W}).constant("w", w);
    m.output("y", graph::DType::Float32, {1, c.K, OH, OW});
    m.attr("strides", Ints{s, s}).attr("pads", c.pads).attr("group", c.group);
    NDArray y = run(m.load("convtranspose_tiled"), {x}).at(0);
    std::vector<double> want(size_t(c.K * OH * OW), 0.0);
    for (int64_t ci = 0; ci < c.C; ++ci)
        for (int64_t h = 0; h < c.H; ++h)
            for (int64_t v = 0; v < c.W; ++v)
                for (int64_t kk = 0; kk < Kg; ++kk)
                    for (int64_t r = 0; r < c.kernel; ++r)
                        for (int64_t q = 0; q < c.kernel; ++q) {
                            const int64_t oh = h * s + r - c.pads[0], ow = v * s + q - c.pads[1];
                            if (oh < 0 || oh >= OH || ow < 0 || ow >= OW) continue;
                            const int64_t k = ci / Cg * Kg + kk;
                            want[size_t((k * OH + oh) * OW + ow)] +=
                                double(x.data<float>()[(ci * c.H + h) * c.W + v]) *
                                w.data<float>()[((ci * Kg + kk) * c.kernel + r) * c.kernel + q];
                        }
    ASSERT_EQ(y.num_elements(), int64_t(want.size()));
    for (size_t i = 0; i < want.size(); ++i)
        ASSERT_NEAR(y.data<float>()[i], want[i], 1e-4) << "element " << i;
}

TEST(ConvTransposeTiled, KernelAsLargeAsTheStrideMatchesTheDefinition) {
    check({6, 4, 5, 37, 2, 1, {0, 0, 0, 0}}, 1);  // rows of 74: vectors and a tail
    check({6, 4, 5, 7, 2, 2, {0, 0, 0, 0}}, 3);   // groups
    check({4, 3, 4, 6, 3, 1, {1, 1, 1, 2}}, 5);   // 3x3 / 3 with pads
}

}  // namespace
}  // namespace tessera::index_test
