// nn.conv2d in NCHW / OIHW layout: strides, asymmetric padding (a padded
// stage), dilation, groups (incl. depthwise) and an optional bias stage.
#include "engine/topi/compute/topi_detail.h"

namespace tessera::topi::detail {

using tir::Expr;
using tir::Var;

Tensors conv2d(const graph::Node& n, const Tensors& in, const Types& out) {
    check_arity(n, in, out, 2, 3);
    const te::Tensor& x = in[0];
    const te::Tensor& w = in[1];
    TS_USER_CHECK(x.ndim() == 4 && w.ndim() == 4)
        << where(n) << ": only 2-D convolution in NCHW layout is supported (input rank " << x.ndim()
        << ", weight rank " << w.ndim() << ")";
    std::vector<int64_t> strides = attr_ints_sized(n, "strides", 2, {1, 1});
    std::vector<int64_t> dil = attr_ints_sized(n, "dilation", 2, {1, 1});
    std::vector<int64_t> pad = attr_padding(n);
    int64_t groups = n.attr_int("groups", 1);
    for (int64_t s : strides) TS_USER_CHECK(s >= 1) << where(n) << ": stride must be >= 1";
    for (int64_t d : dil) TS_USER_CHECK(d >= 1) << where(n) << ": dilation must be >= 1";

    const auto& xs = x.shape();
    const auto& ws = w.shape();
    int64_t N = xs[0], C = xs[1], H = xs[2], W = xs[3];
    int64_t K = ws[0], Cg = ws[1], KH = ws[2], KW = ws[3];
    TS_USER_CHECK(groups >= 1 && C % groups == 0 && K % groups == 0 && C / groups == Cg)
        << where(n) << ": groups=" << groups << " does not fit input channels " << C
        << ", output channels " << K << " and weight input channels " << Cg;
    int64_t Kg = K / groups;

    const auto& os = out[0].shape;
    int64_t OH = (H + pad[0] + pad[2] - dil[0] * (KH - 1) - 1) / strides[0] + 1;
    int64_t OW = (W + pad[1] + pad[3] - dil[1] * (KW - 1) - 1) / strides[1] + 1;
    TS_USER_CHECK(os == std::vector<int64_t>({N, K, OH, OW}))
        << where(n) << ": output type " << out[0].str() << " does not match the convolution (" << N
        << ", " << K << ", " << OH << ", " << OW << ")";
    if (in.size() == 3) {
        TS_USER_CHECK(in[2].shape() == std::vector<int64_t>({K}))
            << where(n) << ": bias must have shape (" << K << ")";
    }

    // 8-bit data (a quantized conv's) is read as float(x), padded with its
    // zero point; the padded copy holds the floats (a stride-2 window's
    // every other float is a shuffle of two vectors, every other byte a
    // per-lane insert).
    const bool bytes = x.dtype() != w.dtype();
    const double pad_value = double(n.attr_int("pad_value", 0));
    // Padded input: zero (pad_value) outside the original bounds. The read index is
    // clamped because both branches of a select are evaluated.
    te::Tensor data = x;
    bool padded = pad[0] || pad[1] || pad[2] || pad[3];
    if (padded) {
        data = te::compute(
            {N, C, H + pad[0] + pad[2], W + pad[1] + pad[3]},
            [&](const std::vector<Var>& i) {
                Expr h = add_const(i[2], -pad[0]), ww = add_const(i[3], -pad[1]);
                Expr inside = h >= int64_t(0) && h < H && ww >= int64_t(0) && ww < W;
                Expr v = x(i[0], i[1], clamp_index(h, H), clamp_index(ww, W));
                if (bytes) v = tir::cast(w.dtype(), v);
                return tir::if_then_else(inside, v, tir::make_const(w.dtype(), pad_value));
            },
            "pad_temp", "injective");
    }

    tir::IterVar rc = te::reduce_axis(Cg, "rc");
    tir::IterVar ry = te::reduce_axis(KH, "ry");
    tir::IterVar rx = te::reduce_axis(KW, "rx");
    te::Tensor conv = te::compute(
        {N, K, OH, OW},
        [&](const std::vector<Var>& i) {
            Expr c = groups == 1 ? Expr(rc.var) : mul_const(tir::floordiv(i[1], Kg), Cg) + rc.var;
            Expr h = mul_const(i[2], strides[0]) + mul_const(ry.var, dil[0]);
            Expr ww = mul_const(i[3], strides[1]) + mul_const(rx.var, dil[1]);
            Expr v = data(i[0], c, h, ww);
            if (v.dtype() != w.dtype()) v = tir::cast(w.dtype(), v);
            return te::sum(v * w(i[1], rc.var, ry.var, rx.var), {rc, ry, rx});
        },
        "conv2d_nchw", "conv2d");
    if (in.size() < 3) return {conv};

    const te::Tensor& b = in[2];
    te::Tensor biased = te::compute(
        {N, K, OH, OW}, [&](const std::vector<Var>& i) { return conv(as_exprs(i)) + b(i[1]); },
        "T_bias_add", "broadcast");
    return {biased};
}

}  // namespace tessera::topi::detail
