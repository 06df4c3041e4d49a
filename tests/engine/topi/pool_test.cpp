// nn.max_pool2d (padding excluded, dilation, ceil_mode) and
// nn.global_avg_pool2d vs naive references.
#include <limits>

#include "tests/engine/topi/topi_test_util.h"

namespace tessera::topi::testing {
namespace {

struct PoolParams {
    Shape x;
    std::vector<int64_t> kernel, strides{1, 1}, pad{0, 0, 0, 0}, dil{1, 1};
    bool ceil_mode = false;
    Shape out;
};

void check_max_pool(const PoolParams& p) {
    OneNode t("nn.max_pool2d", {p.x}, p.out,
              {{"kernel", p.kernel},
               {"strides", p.strides},
               {"padding", p.pad},
               {"dilation", p.dil},
               {"ceil_mode", int64_t(p.ceil_mode)}});
    Data x = random_data(p.x, 31);
    int64_t H = p.x[2], W = p.x[3];
    const Shape& o = p.out;
    Data expected(size_t(numel(o)));
    for (int64_t nc = 0; nc < o[0] * o[1]; ++nc)
        for (int64_t oy = 0; oy < o[2]; ++oy)
            for (int64_t ox = 0; ox < o[3]; ++ox) {
                float m = -std::numeric_limits<float>::infinity();
                for (int64_t ky = 0; ky < p.kernel[0]; ++ky)
                    for (int64_t kx = 0; kx < p.kernel[1]; ++kx) {
                        int64_t iy = oy * p.strides[0] + ky * p.dil[0] - p.pad[0];
                        int64_t ix = ox * p.strides[1] + kx * p.dil[1] - p.pad[1];
                        if (iy >= 0 && iy < H && ix >= 0 && ix < W)
                            m = std::max(m, x[size_t((nc * H + iy) * W + ix)]);
                    }
                expected[size_t((nc * o[2] + oy) * o[3] + ox)] = m;
            }
    expect_close(t.run({x}), expected);
}

TEST(MaxPool2d, Plain2x2Stride2) {
    check_max_pool({{1, 2, 6, 6}, {2, 2}, {2, 2}, {0, 0, 0, 0}, {1, 1}, false, {1, 2, 3, 3}});
}

TEST(MaxPool2d, Pad1Kernel3Stride2) {
    // Every value is negative in some windows; padding must not win with 0.
    check_max_pool({{2, 3, 7, 7}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, false, {2, 3, 4, 4}});
}

TEST(MaxPool2d, CeilModeWithPadding) {
    // H=6: span = 6+1+0-3 = 4 -> floor 3, ceil 3; W=7: span = 7+0+1-3 = 5 -> ceil 4.
    check_max_pool({{1, 2, 6, 7}, {3, 3}, {2, 2}, {1, 0, 0, 1}, {1, 1}, true, {1, 2, 3, 4}});
}

TEST(MaxPool2d, CeilModePartialLastWindow) {
    // H=W=5, k=2, s=2: floor gives 2, ceil gives 3 (last window half outside).
    check_max_pool({{1, 1, 5, 5}, {2, 2}, {2, 2}, {0, 0, 0, 0}, {1, 1}, true, {1, 1, 3, 3}});
}

TEST(MaxPool2d, Dilated) {
    check_max_pool({{1, 2, 7, 8}, {2, 3}, {1, 2}, {1, 1, 0, 1}, {2, 2}, false, {1, 2, 6, 3}});
}

TEST(GlobalAvgPool2d, MeanOverSpatial) {
    Shape s = {2, 3, 5, 4};
    OneNode t("nn.global_avg_pool2d", {s}, {2, 3, 1, 1});
    Data x = random_data(s, 32);
    Data expected(6);
    for (int64_t nc = 0; nc < 6; ++nc) {
        double acc = 0;
        for (int64_t i = 0; i < 20; ++i) acc += x[size_t(nc * 20 + i)];
        expected[size_t(nc)] = float(acc / 20);
    }
    expect_close(t.run({x}), expected);
}

}  // namespace
}  // namespace tessera::topi::testing
