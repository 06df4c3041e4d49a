// Resize with antialias (see onnx_resize_antialias.h).
#include "engine/frontend/onnx/onnx_resize_antialias.h"

#include <algorithm>
#include <cmath>

#include "engine/core/checked_math.h"
#include "engine/core/error.h"
#include "engine/frontend/onnx/onnx_compose.h"

namespace tessera::frontend::onnx_import {

namespace {

// The kernel weights of one output at `ratio` (its source coordinate's
// fraction, in (0, 1]) for `scale`; wider than 2 (linear) or 4 (cubic) taps
// when downsampling.
std::vector<double> coefficients(const AntialiasResize& r, double ratio, double scale) {
    scale = std::min(scale, 1.0);
    std::vector<double> c;
    if (r.mode == "linear") {
        const int64_t start = int64_t(std::floor(-1.0 / scale)) + 1;
        const int64_t footprint = 2 - 2 * start;
        for (int64_t i = start; i < start + footprint; ++i)
            c.push_back(std::clamp(1.0 - std::abs((double(i) - ratio) * scale), 0.0, 1.0));
    } else {
        const double A = r.cubic_coeff_a;
        auto cubic = [A](double x) {
            x = std::abs(x);
            const double x2 = x * x, x3 = x * x2;
            if (x <= 1) return (A + 2) * x3 - (A + 3) * x2 + 1;
            if (x < 2) return A * x3 - 5 * A * x2 + 8 * A * x - 4 * A;
            return 0.0;
        };
        const int64_t start = int64_t(std::floor(-2.0 / scale)) + 1, end = 2 - start;
        for (int64_t i = start; i < end; ++i) c.push_back(cubic(scale * (double(i) - ratio)));
    }
    double sum = 0;
    for (double v : c) sum += v;
    for (double& v : c) v /= sum;
    return c;
}

// Output o's coordinate in the input (ONNX's coordinate transformations).
double source_coordinate(const AntialiasResize& r, double o, double scale, int64_t in,
                         int64_t out) {
    const double out_width = scale * double(in);
    const std::string& m = r.coordinate_transformation_mode;
    if (m == "align_corners") return out_width == 1 ? 0.0 : o * double(in - 1) / (out_width - 1);
    if (m == "asymmetric") return o / scale;
    if (m == "pytorch_half_pixel") return out_width == 1 ? -0.5 : (o + 0.5) / scale - 0.5;
    if (m == "half_pixel_symmetric") {
        const double adjustment = double(out) / out_width, center = double(in) / 2;
        return center * (1 - adjustment) + (o + 0.5) / scale - 0.5;
    }
    return (o + 0.5) / scale - 0.5;  // half_pixel
}

}  // namespace

std::vector<double> antialias_weights(const AntialiasResize& r, int64_t in, size_t axis) {
    const int64_t out = r.sizes[axis];
    const double scale = r.scales[axis];
    std::vector<double> w(size_t(out * in), 0.0);
    for (int64_t o = 0; o < out; ++o) {
        const double x = source_coordinate(r, double(o), scale, in, out);
        const double x_floor = std::floor(x);
        const double ratio = x == x_floor ? 1.0 : x - x_floor;  // prefer the pixel on the left
        std::vector<double> c = coefficients(r, ratio, scale);
        const int64_t n = int64_t(c.size()), pad = (n + 1) / 2;
        // The n taps nearest x in the edge-padded input, ties to the smaller.
        const double xp = x + double(pad);
        const int64_t p = int64_t(std::floor(xp));
        const double frac = xp - double(p);
        const int64_t offset = n % 2 == 0 ? (frac == 0 ? -(n / 2) : -(n / 2) + 1)
                                          : (frac <= 0.5 ? -((n - 1) / 2) : -((n - 1) / 2) + 1);
        const int64_t first = p + offset - pad;
        if (r.exclude_outside) {
            double sum = 0;
            for (int64_t j = 0; j < n; ++j) {
                if (first + j < 0 || first + j >= in) c[size_t(j)] = 0;
                sum += c[size_t(j)];
            }
            if (sum != 0)
                for (double& v : c) v /= sum;
        }
        for (int64_t j = 0; j < n; ++j)  // edge padding: taps outside read the border
            w[size_t(o * in + std::clamp<int64_t>(first + j, 0, in - 1))] += c[size_t(j)];
    }
    return w;
}

void convert_resize_antialias(NodeCtx& ctx, const AntialiasResize& r) {
    TS_USER_CHECK(r.mode == "linear" || r.mode == "cubic")
        << ctx.where() << ": antialias needs mode linear or cubic, not " << r.mode;
    TS_USER_CHECK(r.coordinate_transformation_mode != "tf_crop_and_resize")
        << ctx.where() << ": antialias with tf_crop_and_resize is not supported";
    Composer c(ctx);
    const std::vector<int64_t> s = ctx.input_type(0).shape;
    const int64_t rank = int64_t(s.size());
    std::vector<int64_t> resized;
    for (int64_t d = 0; d < rank; ++d)
        if (r.sizes[size_t(d)] != s[size_t(d)] || r.scales[size_t(d)] != 1.0) resized.push_back(d);
    std::string x = ctx.node.input(0);
    if (resized.empty()) {
        c.op("Identity", {x}, {}, ctx.node.output(0));
        return;
    }
    for (size_t k = 0; k < resized.size(); ++k) {
        const int64_t d = resized[k], in = s[size_t(d)], out = r.sizes[size_t(d)];
        TS_USER_CHECK(in >= 1 && out >= 1) << ctx.where() << ": cannot resize an empty axis";
        check_constant_size(ctx, {in, out}, "the antialias weights");
        const std::vector<double> w = antialias_weights(r, in, size_t(d));
        std::vector<double> wt(w.size());  // (in, out): x (..., in) @ wt
        for (int64_t o = 0; o < out; ++o)
            for (int64_t i = 0; i < in; ++i) wt[size_t(i * out + o)] = w[size_t(o * in + i)];
        // Axis d last, the product, axis d back in place.
        std::vector<int64_t> perm;
        for (int64_t a = 0; a < rank; ++a)
            if (a != d) perm.push_back(a);
        perm.push_back(d);
        std::vector<int64_t> restore(static_cast<size_t>(rank));
        for (int64_t a = 0; a < rank; ++a) restore[size_t(perm[size_t(a)])] = a;
        const bool last = d == rank - 1, final_step = k + 1 == resized.size();
        const std::string moved = last ? x : c.op("Transpose", {x}, {ints_attr("perm", perm)});
        const std::string product = c.op("MatMul", {moved, c.floats({in, out}, wt)}, {},
                                         last && final_step ? ctx.node.output(0) : "");
        if (last)
            x = product;
        else
            x = c.op("Transpose", {product}, {ints_attr("perm", restore)},
                     final_step ? ctx.node.output(0) : "");
    }
}

}  // namespace tessera::frontend::onnx_import
