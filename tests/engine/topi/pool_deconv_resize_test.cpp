// nn.conv3d_transpose, nn.max_pool2d_indices, uint8 nn.max_pool2d and cubic
// image.resize vs naive loops.
#include <limits>

#include "tests/engine/topi/topi_test_util.h"

namespace tessera::topi::testing {
namespace {

TEST(Conv3dTranspose, StridePadOutputPaddingBias) {
    const Shape xs = {1, 2, 3, 2, 3}, ws = {2, 3, 2, 3, 2};
    const Shape s = {2, 1, 2}, p = {1, 0, 0, 0, 1, 1}, op = {1, 0, 0};
    Shape os = {1, 3, 0, 0, 0};
    for (size_t d = 0; d < 3; ++d)
        os[d + 2] = (xs[d + 2] - 1) * s[d] - p[d] - p[d + 3] + (ws[d + 2] - 1) + op[d] + 1;
    OneNode t("nn.conv3d_transpose", {xs, ws, {3}}, os,
              {{"strides", s}, {"padding", p}, {"output_padding", op}});
    Data x = random_data(xs, 21), w = random_data(ws, 22), b = random_data({3}, 23);
    // Scatter form: every input element adds x * w to the outputs it reaches.
    std::vector<double> acc(size_t(numel(os)), 0.0);
    for (int64_t k = 0; k < os[1]; ++k)
        for (int64_t o = 0; o < os[2] * os[3] * os[4]; ++o) acc[size_t(k * os[2] * os[3] * os[4] + o)] = b[size_t(k)];
    for (int64_t c = 0; c < xs[1]; ++c)
        for (int64_t z = 0; z < xs[2]; ++z)
            for (int64_t y = 0; y < xs[3]; ++y)
                for (int64_t xx = 0; xx < xs[4]; ++xx)
                    for (int64_t k = 0; k < ws[1]; ++k)
                        for (int64_t a = 0; a < ws[2]; ++a)
                            for (int64_t bb = 0; bb < ws[3]; ++bb)
                                for (int64_t cc = 0; cc < ws[4]; ++cc) {
                                    int64_t oz = z * s[0] + a - p[0], oy = y * s[1] + bb - p[1],
                                            ox = xx * s[2] + cc - p[2];
                                    if (oz < 0 || oz >= os[2] || oy < 0 || oy >= os[3] ||
                                        ox < 0 || ox >= os[4])
                                        continue;
                                    acc[size_t(((k * os[2] + oz) * os[3] + oy) * os[4] + ox)] +=
                                        double(x[size_t(((c * xs[2] + z) * xs[3] + y) * xs[4] + xx)]) *
                                        w[size_t((((c * ws[1] + k) * ws[2] + a) * ws[3] + bb) * ws[4] + cc)];
                                }
    expect_close(t.run({x, w, b}), Data(acc.begin(), acc.end()));
}

TEST(MaxPool2dIndices, PaddedStridedWindowsRowAndColumnMajor) {
    const Shape xs = {2, 3, 5, 6}, os = {2, 3, 3, 3};
    for (int64_t order : {0, 1}) {
        OneNode t("nn.max_pool2d_indices", {xs}, os,
                  {{"kernel", Shape{3, 2}},
                   {"strides", Shape{2, 2}},
                   {"padding", Shape{1, 0, 1, 0}},
                   {"storage_order", order}});
        t.g.values[size_t(t.g.nodes[size_t(t.node)].outputs[0])].type.dtype = graph::DType::Int64;
        graph::verify(t.g);
        Data x = random_data(xs, 41);
        std::vector<int64_t> got(size_t(numel(os)), -7), expected;
        std::vector<void*> args = {x.data(), got.data()};
        tir::interpret(lower_node(t.g, t.node), args);
        const int64_t H = xs[2], W = xs[3];
        for (int64_t nc = 0; nc < xs[0] * xs[1]; ++nc)
            for (int64_t oy = 0; oy < os[2]; ++oy)
                for (int64_t ox = 0; ox < os[3]; ++ox) {
                    float best = -std::numeric_limits<float>::infinity();
                    int64_t at = -1;
                    for (int64_t ky = 0; ky < 3; ++ky)
                        for (int64_t kx = 0; kx < 2; ++kx) {
                            int64_t iy = oy * 2 + ky - 1, ix = ox * 2 + kx;
                            if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                            float v = x[size_t((nc * H + iy) * W + ix)];
                            if (v > best) {
                                best = v;
                                at = order ? nc * H * W + ix * H + iy : (nc * H + iy) * W + ix;
                            }
                        }
                    expected.push_back(at);
                }
        EXPECT_EQ(got, expected) << "storage_order " << order;
    }
}

TEST(MaxPool2d, Uint8Input) {
    const Shape xs = {1, 2, 4, 5}, os = {1, 2, 3, 4};
    OneNode t("nn.max_pool2d", {xs}, os, {{"kernel", Shape{2, 2}}});
    for (int v : {0, 1}) t.g.values[size_t(v)].type.dtype = graph::DType::UInt8;
    graph::verify(t.g);
    std::mt19937 gen(5);
    std::vector<uint8_t> x(size_t(numel(xs))), got(size_t(numel(os)), 0), expected;
    for (auto& v : x) v = uint8_t(gen() % 256);
    std::vector<void*> args = {x.data(), got.data()};
    tir::interpret(lower_node(t.g, t.node), args);
    for (int64_t c = 0; c < 2; ++c)
        for (int64_t y = 0; y < 3; ++y)
            for (int64_t xx = 0; xx < 4; ++xx) {
                uint8_t m = 0;
                for (int64_t a = 0; a < 2; ++a)
                    for (int64_t b = 0; b < 2; ++b)
                        m = std::max(m, x[size_t((c * 4 + y + a) * 5 + xx + b)]);
                expected.push_back(m);
            }
    EXPECT_EQ(got, expected);
}

/// ONNX's reference 1-D cubic interpolation at source coordinate `c`: the 4
/// nearest integer positions (ties to the lower), edge values outside.
double cubic_1d(const std::vector<double>& v, double c, double a, bool exclude) {
    double fl = std::floor(c), r = c - fl;
    if (r == 0) {
        r = 1;
        fl -= 1;
    }
    auto k = [a](double t) {  // Keys kernel
        t = std::fabs(t);
        if (t <= 1) return ((a + 2) * t - (a + 3)) * t * t + 1;
        if (t < 2) return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a;
        return 0.0;
    };
    double sum = 0, wsum = 0;
    for (int j = -1; j <= 2; ++j) {
        int64_t pos = int64_t(fl) + j;
        double w = k(c - double(pos));
        bool in = pos >= 0 && pos < int64_t(v.size());
        if (exclude && !in) w = 0;
        wsum += w;
        sum += w * v[size_t(std::clamp<int64_t>(pos, 0, int64_t(v.size()) - 1))];
    }
    return exclude ? sum / wsum : sum;
}

void check_cubic(const Shape& xs, const Shape& os, bool exclude, const std::string& ctm) {
    OneNode t("image.resize", {xs}, os,
              {{"sizes", os},
               {"mode", std::string("cubic")},
               {"coordinate_transformation_mode", ctm},
               {"cubic_coeff_a", -0.5},
               {"exclude_outside", int64_t(exclude)}});
    Data x = random_data(xs, 51);
    const int64_t H = xs[2], W = xs[3], OH = os[2], OW = os[3];
    auto src = [&](int64_t o, int64_t in, int64_t out) {
        double s = double(out) / double(in);
        return ctm == "align_corners" ? (out == 1 ? 0.0 : double(o) * double(in - 1) / double(out - 1))
                                      : (double(o) + 0.5) / s - 0.5;
    };
    Data expected;
    for (int64_t nc = 0; nc < xs[0] * xs[1]; ++nc)
        for (int64_t oy = 0; oy < OH; ++oy)
            for (int64_t ox = 0; ox < OW; ++ox) {
                std::vector<double> col(static_cast<size_t>(H));  // interpolate rows along W first
                for (int64_t y = 0; y < H; ++y) {
                    std::vector<double> row(static_cast<size_t>(W));
                    for (int64_t xx = 0; xx < W; ++xx) row[size_t(xx)] = x[size_t((nc * H + y) * W + xx)];
                    col[size_t(y)] = cubic_1d(row, src(ox, W, OW), -0.5, exclude);
                }
                expected.push_back(float(cubic_1d(col, src(oy, H, OH), -0.5, exclude)));
            }
    expect_close(t.run({x}), expected, 1e-4);
}

TEST(ResizeCubic, UpsampleHalfPixel) { check_cubic({1, 2, 4, 5}, {1, 2, 7, 9}, false, "half_pixel"); }
TEST(ResizeCubic, DownsampleExcludeOutside) { check_cubic({1, 1, 8, 6}, {1, 1, 3, 4}, true, "half_pixel"); }
TEST(ResizeCubic, UpsampleAlignCorners) { check_cubic({2, 1, 3, 4}, {2, 1, 5, 7}, false, "align_corners"); }

}  // namespace
}  // namespace tessera::topi::testing
