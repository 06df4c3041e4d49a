// image.resize: nearest, (multi-)linear and (multi-)cubic interpolation with ONNX's
// coordinate_transformation_mode, nearest_mode and tf_crop_and_resize
// extrapolation; axes whose extent and scale are unchanged are copied.
#include "engine/topi/compute/topi_detail.h"

namespace tessera::topi::detail {

using tir::Expr;
using tir::Var;

namespace {

Expr f32(double v) { return tir::make_const(tir::DataType::float32(), v); }

/// Cubic convolution (Keys, coefficient a) over the 4 neighbours of each
/// resized axis; neighbours past the edge read the edge value, or with
/// exclude_outside get weight 0 and the rest are renormalised (as ONNX's
/// reference implementation does).
Expr cubic(const te::Tensor& x, const std::vector<Var>& i, const std::vector<Expr>& coord,
           double a, bool exclude_outside) {
    const auto& xs = x.shape();
    std::vector<size_t> axes;
    for (size_t d = 0; d < coord.size(); ++d)
        if (coord[d].defined()) axes.push_back(d);
    std::vector<std::vector<Expr>> idx(coord.size()), coef(coord.size());
    for (size_t d : axes) {
        Expr fl = tir::floor(coord[d]);
        Expr r = coord[d] - fl;
        Expr base = tir::cast(tir::DataType::int64(), fl);
        Expr r1 = r + f32(1), q = f32(1) - r, q1 = q + f32(1);
        std::vector<Expr> c = {
            ((f32(a) * r1 - f32(5 * a)) * r1 + f32(8 * a)) * r1 - f32(4 * a),
            ((f32(a + 2) * r - f32(a + 3)) * r) * r + f32(1),
            ((f32(a + 2) * q - f32(a + 3)) * q) * q + f32(1),
            ((f32(a) * q1 - f32(5 * a)) * q1 + f32(8 * a)) * q1 - f32(4 * a)};
        Expr total;
        for (int64_t j = 0; j < 4; ++j) {
            Expr pos = base + (j - 1);
            idx[d].push_back(clamp_index(pos, xs[d]));
            if (exclude_outside) {
                Expr inside = pos >= int64_t(0) && pos < xs[d];
                c[size_t(j)] = tir::select(inside, c[size_t(j)], f32(0));
            }
            total = j == 0 ? c[size_t(j)] : total + c[size_t(j)];
        }
        if (exclude_outside)
            for (Expr& e : c) e = e / total;
        coef[d] = c;
    }
    Expr v;
    size_t combos = 1;
    for (size_t k = 0; k < axes.size(); ++k) combos *= 4;
    for (size_t m = 0; m < combos; ++m) {
        std::vector<Expr> at = as_exprs(i);
        Expr weight;
        size_t rest = m;
        for (size_t d : axes) {
            size_t j = rest % 4;
            rest /= 4;
            at[d] = idx[d][j];
            weight = weight.defined() ? weight * coef[d][j] : coef[d][j];
        }
        Expr term = weight.defined() ? x(at) * weight : x(at);
        v = v.defined() ? v + term : term;
    }
    return v;
}

}  // namespace

Tensors resize(const graph::Node& n, const Tensors& in, const Types& out) {
    check_arity(n, in, out, 1, 1);
    const te::Tensor& x = in[0];
    const auto& xs = x.shape();
    const auto& os = out[0].shape;
    const size_t rank = xs.size();
    const std::string mode = n.attr_str("mode", "nearest");
    const std::string ctm = n.attr_str("coordinate_transformation_mode", "half_pixel");
    const std::string nearest = n.attr_str("nearest_mode", "round_prefer_floor");
    TS_USER_CHECK(mode == "nearest" || mode == "linear" || mode == "cubic")
        << where(n) << ": resize mode '" << mode
        << "' is not supported (nearest, linear, cubic are)";
    const double cubic_a = n.attr_float("cubic_coeff_a", -0.75);
    const bool exclude_outside = n.attr_int("exclude_outside", 0) != 0;
    std::vector<double> scales;
    if (n.attrs.count("scales")) scales = std::get<std::vector<double>>(n.attrs.at("scales"));
    if (scales.size() != rank) {
        scales.clear();
        for (size_t d = 0; d < rank; ++d) scales.push_back(xs[d] ? double(os[d]) / double(xs[d]) : 1.0);
    }
    std::vector<double> roi;
    if (n.attrs.count("roi")) roi = std::get<std::vector<double>>(n.attrs.at("roi"));
    const bool crop = ctm == "tf_crop_and_resize";
    TS_USER_CHECK(!crop || roi.size() == 2 * rank)
        << where(n) << ": tf_crop_and_resize needs roi with " << 2 * rank << " values";
    TS_USER_CHECK(crop || ctm == "half_pixel" || ctm == "half_pixel_symmetric" ||
                  ctm == "pytorch_half_pixel" ||
                  ctm == "align_corners" || ctm == "asymmetric" || ctm == "tf_half_pixel_for_nn")
        << where(n) << ": coordinate_transformation_mode '" << ctm << "' is not supported";
    const double extrapolation = n.attr_float("extrapolation_value", 0.0);

    te::Tensor y = te::compute(
        os,
        [&](const std::vector<Var>& i) {
            // Per axis: the source coordinate (float) or, for untouched axes, none.
            std::vector<Expr> coord(rank);
            Expr outside;
            for (size_t d = 0; d < rank; ++d) {
                if (!crop && xs[d] == os[d] && scales[d] == 1.0) continue;
                Expr xf = tir::cast(tir::DataType::float32(), Expr(i[d]));
                double s = scales[d];
                // ONNX measures the resized length as in * scale, unrounded.
                double len = double(xs[d]) * s;
                Expr c;
                if (ctm == "half_pixel") {
                    c = (xf + f32(0.5)) / f32(s) - f32(0.5);
                } else if (ctm == "half_pixel_symmetric") {
                    // half_pixel about the input's centre (Resize-19): the
                    // rounded output length stretches the grid.
                    const double adjustment = double(os[d]) / len;
                    const double offset = double(xs[d]) / 2 * (1 - adjustment);
                    c = f32(offset) + (xf + f32(0.5)) / f32(s) - f32(0.5);
                } else if (ctm == "pytorch_half_pixel") {
                    c = len > 1 ? (xf + f32(0.5)) / f32(s) - f32(0.5) : f32(0);
                } else if (ctm == "align_corners") {
                    c = len == 1 ? f32(0) : xf * f32(double(xs[d] - 1) / (len - 1));
                } else if (ctm == "tf_half_pixel_for_nn") {
                    c = (xf + f32(0.5)) / f32(s);
                } else if (ctm == "asymmetric") {
                    c = xf / f32(s);
                } else {
                    double lo = roi[d], hi = roi[d + rank];
                    c = len > 1 ? f32(lo * double(xs[d] - 1)) +
                                      xf * f32((hi - lo) * double(xs[d] - 1) / (len - 1))
                                  : f32(0.5 * (lo + hi) * double(xs[d] - 1));
                    Expr out_d = c < f32(0) || c > f32(double(xs[d] - 1));
                    outside = outside.defined() ? (outside || out_d) : out_d;
                }
                coord[d] = c;
            }
            auto to_index = [&](Expr c, size_t d) {
                return clamp_index(tir::cast(tir::DataType::int64(), c), xs[d]);
            };
            Expr v;
            if (mode == "nearest") {
                std::vector<Expr> idx = as_exprs(i);
                for (size_t d = 0; d < rank; ++d) {
                    if (!coord[d].defined()) continue;
                    Expr c = coord[d];
                    if (nearest == "round_prefer_ceil")
                        c = tir::floor(c + f32(0.5));
                    else if (nearest == "floor")
                        c = tir::floor(c);
                    else if (nearest == "ceil")
                        c = tir::ceil(c);
                    else
                        c = tir::ceil(c - f32(0.5));
                    idx[d] = to_index(c, d);
                }
                v = x(idx);
            } else if (mode == "cubic") {
                v = cubic(x, i, coord, cubic_a, exclude_outside);
            } else {
                std::vector<size_t> axes;
                for (size_t d = 0; d < rank; ++d)
                    if (coord[d].defined()) axes.push_back(d);
                std::vector<Expr> lo(rank), hi(rank), w(rank);
                for (size_t d : axes) {
                    Expr c = tir::min(tir::max(coord[d], f32(0)), f32(double(xs[d] - 1)));
                    Expr fl = tir::floor(c);
                    lo[d] = to_index(fl, d);
                    hi[d] = clamp_index(lo[d] + int64_t(1), xs[d]);
                    w[d] = c - fl;
                }
                for (size_t mask = 0; mask < (size_t(1) << axes.size()); ++mask) {
                    std::vector<Expr> idx = as_exprs(i);
                    Expr weight;
                    for (size_t k = 0; k < axes.size(); ++k) {
                        size_t d = axes[k];
                        bool upper = (mask >> k) & 1;
                        idx[d] = upper ? hi[d] : lo[d];
                        Expr wk = upper ? w[d] : f32(1) - w[d];
                        weight = weight.defined() ? weight * wk : wk;
                    }
                    Expr term = weight.defined() ? x(idx) * weight : x(idx);
                    v = v.defined() ? v + term : term;
                }
            }
            if (outside.defined()) v = tir::select(outside, f32(extrapolation), v);
            return v;
        },
        "T_resize", "injective");
    return {y};
}

}  // namespace tessera::topi::detail
