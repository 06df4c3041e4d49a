// GridSample (every mode, padding and align_corners), RoiAlign (avg, max, both
// coordinate modes) and MaxUnpool on random data against naive loops written
// from ONNX Runtime's definitions.
#include <cmath>
#include <set>

#include "tests/engine/frontend/onnx/index_test_util.h"

namespace tessera::index_test {
namespace {

using graph::DType;

double reflect(double x, double lo, double hi) {
    double range = hi - lo;
    if (range <= 0) return lo;
    if (x < lo) {
        double dx = lo - x;
        int64_t n = int64_t(dx / range);
        double r = dx - double(n) * range;
        return n % 2 == 0 ? lo + r : hi - r;
    }
    if (x > hi) {
        double dx = x - hi;
        int64_t n = int64_t(dx / range);
        double r = dx - double(n) * range;
        return n % 2 == 0 ? hi - r : lo + r;
    }
    return x;
}

struct GridRef {
    const float* plane;
    int64_t h, w;
    std::string padding;
    bool align;
    double pixel(int64_t r, int64_t c) const {
        if (padding == "zeros") return r >= 0 && r < h && c >= 0 && c < w ? plane[r * w + c] : 0.0;
        if (padding == "border") {
            r = std::clamp<int64_t>(r, 0, h - 1);
            c = std::clamp<int64_t>(c, 0, w - 1);
        } else {
            r = int64_t(reflect(double(r), align ? 0 : -0.5, align ? double(h - 1) : h - 0.5));
            c = int64_t(reflect(double(c), align ? 0 : -0.5, align ? double(w - 1) : w - 0.5));
        }
        return plane[r * w + c];
    }
};

double cubic(double t, int tap) {
    const double a = -0.75;
    double d = std::abs(t - double(tap - 1));  // distance of tap (-1, 0, 1, 2) from t
    if (d <= 1) return ((a + 2) * d - (a + 3)) * d * d + 1;
    if (d < 2) return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a;
    return 0;
}

TEST(GridSample, EveryModePaddingAndAlignmentMatchesLoops) {
    Ints xs = {2, 3, 5, 4}, gs = {2, 3, 6, 2};
    NDArray x = random_floats(xs, 41), grid = random_floats(gs, 42, -1.4f, 1.4f);
    // Every mode x padding pair; align_corners alternates so that each mode and
    // each padding runs with both settings (9 builds instead of 18).
    const std::vector<std::string> modes = {"bilinear", "nearest", "bicubic"};
    const std::vector<std::string> pads = {"zeros", "border", "reflection"};
    for (size_t mi = 0; mi < 3; ++mi)
        for (size_t pi = 0; pi < 3; ++pi) {
            const std::string& mode = modes[mi];
            const std::string& pad = pads[pi];
            const int64_t align = int64_t((mi + pi) % 2);
            SCOPED_TRACE(mode + " " + pad + " align_corners=" + std::to_string(align));
            graph::Graph g = OneNodeModel("GridSample", 16)
                                 .input("x", DType::Float32, xs)
                                 .input("grid", DType::Float32, gs)
                                 .output("y", DType::Float32, {2, 3, 3, 6})
                                 .attr("mode", mode)
                                 .attr("padding_mode", pad)
                                 .attr("align_corners", align)
                                 .load("grid_sample");
            std::vector<double> want;
            for (int64_t n = 0; n < 2; ++n)
                for (int64_t c = 0; c < 3; ++c) {
                    GridRef ref{x.data<float>() + (n * 3 + c) * 20, 5, 4, pad, align != 0};
                    for (int64_t oh = 0; oh < 3; ++oh)
                        for (int64_t ow = 0; ow < 6; ++ow) {
                            const float* p = grid.data<float>() + offset(gs, {n, oh, ow, 0});
                            auto denorm = [&](double v, int64_t len) {
                                return align ? (v + 1) / 2 * double(len - 1)
                                             : ((v + 1) * double(len) - 1) / 2;
                            };
                            double gx = denorm(p[0], 4), gy = denorm(p[1], 5);
                            double v = 0;
                            if (mode == "nearest") {
                                v = ref.pixel(int64_t(std::nearbyint(gy)), int64_t(std::nearbyint(gx)));
                            } else if (mode == "bilinear") {
                                int64_t x0 = int64_t(std::floor(gx)), y0 = int64_t(std::floor(gy));
                                double fx = gx - double(x0), fy = gy - double(y0);
                                v = (1 - fy) * ((1 - fx) * ref.pixel(y0, x0) + fx * ref.pixel(y0, x0 + 1)) +
                                    fy * ((1 - fx) * ref.pixel(y0 + 1, x0) + fx * ref.pixel(y0 + 1, x0 + 1));
                            } else {
                                int64_t x0 = int64_t(std::floor(gx)), y0 = int64_t(std::floor(gy));
                                double fx = gx - double(x0), fy = gy - double(y0);
                                for (int r = 0; r < 4; ++r)
                                    for (int k = 0; k < 4; ++k)
                                        v += cubic(fy, r) * cubic(fx, k) * ref.pixel(y0 + r - 1, x0 + k - 1);
                            }
                            want.push_back(v);
                        }
                }
            expect_close(run(g, {x, grid})[0], want, 1e-4);
        }
}

// ONNX Runtime's RoiAlign bilinear sample (zero outside [-1, len]).
double roi_sample(const float* plane, int64_t h, int64_t w, double y, double x, bool is_max) {
    if (y < -1 || y > double(h) || x < -1 || x > double(w)) return 0;
    y = std::max(y, 0.0);
    x = std::max(x, 0.0);
    int64_t yl = int64_t(y), xl = int64_t(x), yh, xh;
    if (yl >= h - 1) yh = yl = h - 1, y = double(yl);
    else yh = yl + 1;
    if (xl >= w - 1) xh = xl = w - 1, x = double(xl);
    else xh = xl + 1;
    double ly = y - double(yl), lx = x - double(xl), hy = 1 - ly, hx = 1 - lx;
    double t[4] = {hy * hx * plane[yl * w + xl], hy * lx * plane[yl * w + xh],
                   ly * hx * plane[yh * w + xl], ly * lx * plane[yh * w + xh]};
    if (is_max) return std::max(std::max(t[0], t[1]), std::max(t[2], t[3]));
    return t[0] + t[1] + t[2] + t[3];
}

// Naive RoiAlign over (N, C, 8, 8) input; ratio 0 = adaptive (ceil(roi / bins) samples).
std::vector<double> roi_align_ref(const NDArray& x, const NDArray& rois, const NDArray& batch,
                                  const std::string& mode, bool half, int64_t OH, int64_t OW,
                                  int64_t ratio, double scale) {
    std::vector<double> want;
    const int64_t C = x.shape()[1], H = x.shape()[2], W = x.shape()[3];
    for (int64_t r = 0; r < rois.shape()[0]; ++r) {
        const float* p = rois.data<float>() + r * 4;
        double off = half ? 0.5 : 0.0;
        double sw = p[0] * scale - off, sh = p[1] * scale - off;
        double rw = p[2] * scale - off - sw, rh = p[3] * scale - off - sh;
        if (!half) rw = std::max(rw, 1.0), rh = std::max(rh, 1.0);
        double bh = rh / double(OH), bw = rw / double(OW);
        int64_t gh = ratio > 0 ? ratio : int64_t(std::ceil(rh / double(OH)));
        int64_t gw = ratio > 0 ? ratio : int64_t(std::ceil(rw / double(OW)));
        for (int64_t c = 0; c < C; ++c) {
            const float* plane = x.data<float>() + (batch.data<int64_t>()[r] * C + c) * H * W;
            for (int64_t ph = 0; ph < OH; ++ph)
                for (int64_t pw = 0; pw < OW; ++pw) {
                    double acc = mode == "max" ? -1e30 : 0;
                    for (int64_t iy = 0; iy < gh; ++iy)
                        for (int64_t ix = 0; ix < gw; ++ix) {
                            double y = sh + double(ph) * bh + (double(iy) + 0.5) * bh / double(gh);
                            double xx = sw + double(pw) * bw + (double(ix) + 0.5) * bw / double(gw);
                            double v = roi_sample(plane, H, W, y, xx, mode == "max");
                            acc = mode == "max" ? std::max(acc, v) : acc + v;
                        }
                    want.push_back(mode == "max" ? acc : acc / double(std::max<int64_t>(gh * gw, 1)));
                }
        }
    }
    return want;
}

// Random rois (x1, y1, x2, y2) inside [0, 17] with x1 < x2, y1 <= y2.
NDArray random_rois(int64_t R, uint32_t seed) {
    NDArray rois = NDArray::empty({DType::Float32, {R, 4}});
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(0.f, 17.f);
    for (int64_t r = 0; r < R; ++r) {
        float a = u(rng), b = u(rng), c = u(rng), d = u(rng);
        float* p = rois.data<float>() + r * 4;
        p[0] = std::min(a, b), p[2] = std::max(a, b) + 0.5f, p[1] = std::min(c, d), p[3] = std::max(c, d);
    }
    return rois;
}

TEST(RoiAlign, AvgAndMaxInBothCoordinateModesMatchLoops) {
    Ints xs = {2, 3, 8, 8};
    const int64_t R = 4, OH = 3, OW = 4, S = 2;
    NDArray x = random_floats(xs, 51), rois = random_rois(R, 52), batch = random_ints({R}, 53, 0, 1);
    for (std::string mode : {"avg", "max"})
        for (std::string ctm : {"half_pixel", "output_half_pixel"}) {
            SCOPED_TRACE(mode + " " + ctm);
            graph::Graph g = OneNodeModel("RoiAlign", 16)
                                 .input("x", DType::Float32, xs)
                                 .input("rois", DType::Float32, {R, 4})
                                 .input("batch", DType::Int64, {R})
                                 .output("y", DType::Float32, {R, 3, OH, OW})
                                 .attr("mode", mode)
                                 .attr("coordinate_transformation_mode", ctm)
                                 .attr("output_height", OH)
                                 .attr("output_width", OW)
                                 .attr("sampling_ratio", S)
                                 .attr("spatial_scale", 0.5)
                                 .load("roi_align");
            expect_close(run(g, {x, rois, batch})[0],
                         roi_align_ref(x, rois, batch, mode, ctm == "half_pixel", OH, OW, S, 0.5), 1e-4);
        }
}

TEST(RoiAlign, AdaptiveSamplingWithConstantRoisMatchesLoops) {
    Ints xs = {2, 3, 8, 8};
    const int64_t R = 5, OH = 2, OW = 3;
    NDArray x = random_floats(xs, 54), rois = random_rois(R, 55), batch = random_ints({R}, 56, 0, 1);
    for (std::string mode : {"avg", "max"}) {
        SCOPED_TRACE(mode);
        graph::Graph g = OneNodeModel("RoiAlign", 16)
                             .input("x", DType::Float32, xs)
                             .constant("rois", rois)
                             .input("batch", DType::Int64, {R})
                             .output("y", DType::Float32, {R, 3, OH, OW})
                             .attr("mode", mode)
                             .attr("output_height", OH)
                             .attr("output_width", OW)
                             .load("roi_align_adaptive");
        expect_close(run(g, {x, batch})[0], roi_align_ref(x, rois, batch, mode, true, OH, OW, 0, 1.0), 1e-4);
    }
}

TEST(RoiAlign, AdaptiveSamplingOfRuntimeRoisAndBadBatchIndexAreClearErrors) {
    OneNodeModel m("RoiAlign", 16);
    m.input("x", DType::Float32, {1, 1, 4, 4}).input("rois", DType::Float32, {1, 4});
    m.constant("batch", ints({1}, {1})).output("y", DType::Float32, {1, 1, 1, 1});
    m.attr("sampling_ratio", int64_t(2));
    EXPECT_NE(user_error([&] { m.load("roi_bad_batch"); }).find("batch index 1 is out of range [0, 1)"),
              std::string::npos);
    OneNodeModel a("RoiAlign", 16);
    a.input("x", DType::Float32, {1, 1, 4, 4}).input("rois", DType::Float32, {1, 4});
    a.input("batch", DType::Int64, {1}).output("y", DType::Float32, {1, 1, 1, 1});
    EXPECT_NE(user_error([&] { a.load("roi_adaptive"); }).find("sampling_ratio 0 (adaptive) needs constant rois"),
              std::string::npos);
}

// out = zeros(out_shape); out.flat[I[j]] = X[j].
std::vector<double> unpool_ref(const NDArray& x, const NDArray& ind, int64_t out_elements) {
    std::vector<double> out(size_t(out_elements), 0.0);
    for (int64_t j = 0; j < x.num_elements(); ++j)
        out[size_t(ind.data<int64_t>()[j])] = x.data<float>()[j];
    return out;
}

TEST(MaxUnpool, MaxPoolStyleIndicesMatchLoops) {
    // Indices of a 2x2 stride-2 max pool over (1, 2, 6, 6): one random cell per window.
    Ints xs = {1, 2, 3, 3};
    NDArray ind = NDArray::empty({DType::Int64, xs});
    std::mt19937 rng(61);
    for (int64_t f = 0; f < 18; ++f) {
        Ints i = unravel(xs, f);
        int64_t r = i[2] * 2 + int64_t(rng() % 2), c = i[3] * 2 + int64_t(rng() % 2);
        ind.data<int64_t>()[f] = offset({1, 2, 6, 6}, {0, i[1], r, c});
    }
    graph::Graph g = OneNodeModel("MaxUnpool", 11)
                         .input("x", DType::Float32, xs)
                         .input("i", DType::Int64, xs)
                         .output("y", DType::Float32, {1, 2, 6, 6})
                         .attr("kernel_shape", Ints{2, 2})
                         .attr("strides", Ints{2, 2})
                         .load("max_unpool");
    NDArray x = random_floats(xs, 62);
    std::vector<NDArray> out = run(g, {x, ind});
    ASSERT_EQ(out[0].shape(), (Ints{1, 2, 6, 6}));
    expect_close(out[0], unpool_ref(x, ind, 72));
}

TEST(MaxUnpool, OutputShapeAndAnyIndexInThePlane) {
    // Indices address the unpooled (2, 1, 4, 4) shape; output_shape (2, 1, 5, 6)
    // pads it at the end of each dim.
    Ints xs = {2, 1, 2, 2};
    NDArray ind = ints(xs, {5, 7, 13, 0, 16 + 15, 16 + 11, 16 + 3, 16 + 4});
    graph::Graph g = OneNodeModel("MaxUnpool", 11)
                         .input("x", DType::Float32, xs)
                         .input("i", DType::Int64, xs)
                         .constant("shape", ints({4}, {2, 1, 5, 6}))
                         .output("y", DType::Float32, {2, 1, 5, 6})
                         .attr("kernel_shape", Ints{2, 2})
                         .attr("strides", Ints{2, 2})
                         .load("max_unpool_shape");
    NDArray x = random_floats(xs, 63);
    std::vector<NDArray> out = run(g, {x, ind});
    ASSERT_EQ(out[0].shape(), (Ints{2, 1, 5, 6}));
    std::vector<double> unpooled = unpool_ref(x, ind, 32), want(60, 0.0);
    for (int64_t f = 0; f < 32; ++f) {
        Ints i = unravel({2, 1, 4, 4}, f);
        want[size_t(offset({2, 1, 5, 6}, i))] = unpooled[size_t(f)];
    }
    expect_close(out[0], want);
}

TEST(MaxUnpool, ConstantIndexOutsideItsPlaneIsAnImportError) {
    OneNodeModel m("MaxUnpool", 11);
    m.input("x", DType::Float32, {1, 2, 1, 1}).constant("i", ints({1, 2, 1, 1}, {0, 2}));
    m.output("y", DType::Float32, {1, 2, 2, 2}).attr("kernel_shape", Ints{2, 2}).attr("strides", Ints{2, 2});
    std::string msg = user_error([&] { m.load("max_unpool_bad"); });
    EXPECT_NE(msg.find("index 2 at position 1 is outside its (n, c) plane [4, 8)"), std::string::npos)
        << msg;
}

}  // namespace
}  // namespace tessera::index_test
