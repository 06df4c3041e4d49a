// image.resize: nearest and (multi-)linear interpolation with ONNX's
// coordinate_transformation_mode, nearest_mode and tf_crop_and_resize
// extrapolation; axes whose extent and scale are unchanged are copied.
#include "engine/topi/topi_detail.h"

namespace tessera::topi::detail {

using tir::Expr;
using tir::Var;

namespace {

Expr f32(double v) { return tir::make_const(tir::DataType::float32(), v); }

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
    TS_USER_CHECK(mode == "nearest" || mode == "linear")
        << where(n) << ": resize mode '" << mode << "' is not supported (nearest, linear are)";
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
    TS_USER_CHECK(crop || ctm == "half_pixel" || ctm == "pytorch_half_pixel" ||
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
