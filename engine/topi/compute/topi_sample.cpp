// Computes for sampling ops: image.grid_sample (2-D and 3-D; bilinear,
// nearest, bicubic; zeros, border, reflection padding) and vision.roi_align (avg, max), with
// ONNX Runtime's pixel and border conventions.
#include "engine/topi/compute/topi_detail.h"

namespace tessera::topi::detail {

using tir::Expr;
using tir::IterVar;
using tir::Var;

namespace {

const tir::DataType kF32 = tir::DataType::float32();
const tir::DataType kI64 = tir::DataType::int64();

Expr f32(double v) { return tir::make_const(kF32, v); }
Expr to_int(Expr v) { return tir::cast(kI64, std::move(v)); }
Expr to_float(Expr v) { return tir::cast(kF32, std::move(v)); }

// Reflects x into [lo, hi] by mirroring at the borders as often as needed.
Expr reflect(Expr x, double lo, double hi) {
    double range = hi - lo;
    if (range <= 0) return f32(lo);
    auto fold = [&](Expr dx, double near, double far) {
        // dx >= 0 beyond the `near` border; even flips land near + r, odd far - r.
        Expr flips = tir::floor(dx / f32(range));
        Expr r = dx - flips * f32(range);
        Expr even = tir::floormod(to_int(flips), int64_t(2)) == int64_t(0);
        double s = near < far ? 1.0 : -1.0;
        return tir::select(even, f32(near) + f32(s) * r, f32(far) - f32(s) * r);
    };
    return tir::select(x < f32(lo), fold(f32(lo) - x, lo, hi),
                       tir::select(x > f32(hi), fold(x - f32(hi), hi, lo), x));
}

struct GridSampler {
    const te::Tensor& x;
    std::string padding;
    bool align;
    std::vector<int64_t> dims;  // the spatial extents, (D,) H, W

    // Pixel `idx` (one index per spatial axis) of plane (n, ch) with the
    // padding mode applied to the indices.
    Expr pixel(Expr n, Expr ch, std::vector<Expr> idx) const {
        Expr inside;
        for (size_t d = 0; d < idx.size(); ++d) {
            const int64_t len = dims[d];
            if (padding == "zeros") {
                Expr in_d = idx[d] >= int64_t(0) && idx[d] < len;
                inside = inside.defined() ? (inside && in_d) : in_d;
            } else if (padding == "reflection") {
                double lo = align ? 0.0 : -0.5;
                idx[d] = to_int(
                    reflect(to_float(idx[d]), lo, align ? double(len - 1) : double(len) - 0.5));
            }
            idx[d] = clamp_index(idx[d], len);
        }
        std::vector<Expr> at = {n, ch};
        at.insert(at.end(), idx.begin(), idx.end());
        Expr v = x(at);
        return inside.defined() ? tir::select(inside, v, f32(0)) : v;
    }
    // Normalized [-1, 1] position to pixel coordinates along an axis of `len`.
    Expr denormalize(Expr v, int64_t len) const {
        if (align) return (v + f32(1)) * f32(0.5 * double(len - 1));
        return ((v + f32(1)) * f32(double(len)) - f32(1)) * f32(0.5);
    }
};

// Keys' cubic convolution weights (a = -0.75) for the 4 taps around fraction t.
std::vector<Expr> cubic_weights(Expr t) {
    const double a = -0.75;
    Expr t1 = t + f32(1), u = f32(1) - t, u1 = f32(2) - t;
    return {((f32(a) * t1 - f32(5 * a)) * t1 + f32(8 * a)) * t1 - f32(4 * a),
            ((f32(a + 2) * t - f32(a + 3)) * t) * t + f32(1),
            ((f32(a + 2) * u - f32(a + 3)) * u) * u + f32(1),
            ((f32(a) * u1 - f32(5 * a)) * u1 + f32(8 * a)) * u1 - f32(4 * a)};
}

// Sum over the taps of every spatial axis from `d` on of the product of their
// weights times the pixel; the outermost axis outermost (y before x).
Expr interpolate(const GridSampler& s, Expr b, Expr ch, const std::vector<Expr>& first,
                 const std::vector<std::vector<Expr>>& weights, std::vector<Expr>& idx, size_t d) {
    if (d == first.size()) return s.pixel(b, ch, idx);
    const int64_t taps = int64_t(weights[d].size()), offset = taps == 4 ? -1 : 0;
    Expr acc;
    for (int64_t t = 0; t < taps; ++t) {
        idx[d] = first[d] + (t + offset);
        Expr term = weights[d][size_t(t)] * interpolate(s, b, ch, first, weights, idx, d + 1);
        acc = t == 0 ? term : acc + term;
    }
    return acc;
}

}  // namespace

Tensors grid_sample(const graph::Node& n, const Tensors& in, const Types& out) {
    check_arity(n, in, out, 2, 2);
    const te::Tensor& x = in[0];
    const te::Tensor& grid = in[1];
    std::string mode = n.attr_str("mode", "bilinear");
    const size_t dims = x.shape().size() - 2;
    GridSampler s{x, n.attr_str("padding_mode", "zeros"), n.attr_int("align_corners", 0) != 0,
                  std::vector<int64_t>(x.shape().begin() + 2, x.shape().end())};
    te::Tensor y = te::compute(
        out[0].shape,
        [&](const std::vector<Var>& i) {
            Expr b = i[0], ch = i[1];
            // The grid's last axis holds (x, y(, z)): the reverse of the spatial axes.
            std::vector<Expr> pos(dims);
            for (size_t d = 0; d < dims; ++d) {
                std::vector<Expr> at = {i[0]};
                for (size_t k = 0; k < dims; ++k) at.push_back(i[2 + k]);
                at.push_back(Expr(int64_t(dims - 1 - d)));
                pos[d] = s.denormalize(grid(at), s.dims[d]);
            }
            std::vector<Expr> idx(dims);
            if (mode == "nearest") {
                for (size_t d = 0; d < dims; ++d) idx[d] = to_int(tir::round(pos[d]));
                return s.pixel(b, ch, idx);
            }
            std::vector<Expr> first(dims);
            std::vector<std::vector<Expr>> weights(dims);
            for (size_t d = 0; d < dims; ++d) {
                Expr f = tir::floor(pos[d]);
                first[d] = to_int(f);
                Expr frac = pos[d] - f;
                weights[d] = mode == "bilinear" ? std::vector<Expr>{f32(1) - frac, frac}
                                                : cubic_weights(frac);
            }
            return interpolate(s, b, ch, first, weights, idx, 0);
        },
        "T_grid_sample", "injective");
    return {y};
}

Tensors roi_align(const graph::Node& n, const Tensors& in, const Types& out) {
    TS_USER_CHECK((in.size() == 3 || in.size() == 4) && out.size() == 1)
        << where(n) << ": expects 3 or 4 inputs and 1 output";
    const te::Tensor& x = in[0];
    const te::Tensor& rois = in[1];
    const te::Tensor& bidx = in[2];
    const bool adaptive = in.size() == 4;  // in[3]: per-roi (grid_h, grid_w)
    const int64_t batch = x.shape()[0], h = x.shape()[2], w = x.shape()[3];
    const int64_t oh = out[0].shape[2], ow = out[0].shape[3];
    const int64_t ratio = n.attr_int("sampling_ratio", 1);
    const std::vector<int64_t> max_grid =
        adaptive ? n.attr_ints("max_grid") : std::vector<int64_t>{ratio, ratio};
    const bool half_pixel =
        n.attr_str("coordinate_transformation_mode", "half_pixel") == "half_pixel";
    const bool is_max = n.attr_str("mode", "avg") == "max";
    const double scale = n.attr_float("spatial_scale", 1.0);
    const double offset = half_pixel ? 0.5 : 0.0;
    // Samples per bin along an axis (0 = y, 1 = x) for roi r.
    auto grid = [&](Expr r, int64_t axis) -> Expr {
        if (!adaptive) return Expr(ratio);
        Expr g = in[3](r, Expr(axis));
        return g.dtype() == kI64 ? g : to_int(g);
    };
    auto value = [&](const std::vector<Var>& i, IterVar iy, IterVar ix) {
        Expr r = i[0];
        Expr b = bidx(r);
        b = clamp_index(b.dtype() == kI64 ? b : to_int(b), batch);
        auto coord = [&](int64_t k) { return rois(r, Expr(k)) * f32(scale) - f32(offset); };
        Expr sw = coord(0), sh = coord(1);
        Expr rw = coord(2) - sw, rh = coord(3) - sh;
        if (!half_pixel) {
            rw = tir::max(rw, f32(1));
            rh = tir::max(rh, f32(1));
        }
        Expr gh = grid(r, 0), gw = grid(r, 1);
        Expr bh = rh / f32(double(oh)), bw = rw / f32(double(ow));
        Expr yy = sh + to_float(i[2]) * bh + (to_float(iy.var) + f32(0.5)) * bh / to_float(gh);
        Expr xx = sw + to_float(i[3]) * bw + (to_float(ix.var) + f32(0.5)) * bw / to_float(gw);
        Expr valid = !(yy < f32(-1) || yy > f32(double(h)) || xx < f32(-1) || xx > f32(double(w)));
        // Caffe2/ONNX Runtime bilinear: clamp to the image, the last row/column repeats.
        auto axis = [&](Expr v, int64_t len, Expr& lo, Expr& hi, Expr& frac) {
            v = tir::max(v, f32(0));
            Expr fl = tir::floor(v);
            Expr at_end = fl >= f32(double(len - 1));
            lo = tir::min(to_int(fl), Expr(len - 1));
            hi = tir::min(lo + int64_t(1), Expr(len - 1));
            frac = tir::select(at_end, f32(0), v - fl);
        };
        Expr yl, yh, ly, xl, xh, lx;
        axis(yy, h, yl, yh, ly);
        axis(xx, w, xl, xh, lx);
        Expr hy = f32(1) - ly, hx = f32(1) - lx;
        Expr c = i[1];
        Expr t1 = hy * hx * x(b, c, yl, xl), t2 = hy * lx * x(b, c, yl, xh);
        Expr t3 = ly * hx * x(b, c, yh, xl), t4 = ly * lx * x(b, c, yh, xh);
        Expr v = is_max ? tir::max(tir::max(t1, t2), tir::max(t3, t4)) : t1 + t2 + t3 + t4;
        v = tir::select(valid, v, f32(0));
        if (!adaptive) return v;
        // Sample slots past this roi's count contribute the reduction's identity.
        Expr used = Expr(iy.var) < gh && Expr(ix.var) < gw;
        return tir::select(used, v, is_max ? tir::min_value(kF32) : f32(0));
    };
    te::Tensor acc = te::compute(
        out[0].shape,
        [&](const std::vector<Var>& i) {
            IterVar iy = te::reduce_axis(max_grid[0], "iy"),
                    ix = te::reduce_axis(max_grid[1], "ix");
            Expr v = value(i, iy, ix);
            return is_max ? te::max(v, {iy, ix}) : te::sum(v, {iy, ix});
        },
        "T_roi_align_acc", "reduce");
    if (is_max && !adaptive) return {acc};
    te::Tensor y = te::compute(
        out[0].shape,
        [&](const std::vector<Var>& i) {
            Expr a = acc(as_exprs(i));
            Expr count = grid(i[0], 0) * grid(i[0], 1);
            // A roi without samples gives 0 (ONNX Runtime).
            if (is_max) return tir::select(count > int64_t(0), a, f32(0));
            return a / to_float(tir::max(count, Expr(int64_t(1))));
        },
        "T_roi_align", "elemwise");
    return {y};
}

}  // namespace tessera::topi::detail
