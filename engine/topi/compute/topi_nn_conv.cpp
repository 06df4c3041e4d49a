// nn.conv2d in NCHW / OIHW layout: strides, asymmetric padding (a padded
// stage), dilation, groups (incl. depthwise) and an optional bias stage.
#include "engine/topi/compute/topi_detail.h"

namespace tessera::topi::detail {

using tir::Expr;
using tir::Var;

namespace {

// Narrower outputs of a stride-1 depthwise conv on bytes compute over the
// flattened padded plane (flat_depthwise_conv2d).
constexpr int64_t kFlatDepthwiseWidth = 32;

// The conv's output plus the bias in[2] per channel (a stage of its own),
// or the output alone without one.
Tensors with_bias(const te::Tensor& conv, const Tensors& in) {
    if (in.size() < 3) return {conv};
    const te::Tensor& b = in[2];
    te::Tensor biased = te::compute(
        conv.shape(), [&](const std::vector<Var>& i) { return conv(as_exprs(i)) + b(i[1]); },
        "T_bias_add", "broadcast");
    return {biased};
}

// A conv's shapes, and its input read as the weights' type at a padded
// position (8-bit data as floats), pad_value (a quantized conv's zero point)
// in the padding. The input index is clamped: both sides of the select are
// evaluated.
struct PaddedInput {
    const te::Tensor& x;
    const te::Tensor& w;
    int64_t N, C, H, W, KH, KW, Hp, Wp;
    std::vector<int64_t> pad;
    double pad_value;

    PaddedInput(const graph::Node& n, const Tensors& in)
        : x(in[0]),
          w(in[1]),
          N(x.shape()[0]),
          C(x.shape()[1]),
          H(x.shape()[2]),
          W(x.shape()[3]),
          KH(w.shape()[2]),
          KW(w.shape()[3]),
          pad(attr_padding(n)),
          pad_value(double(n.attr_int("pad_value", 0))) {
        Hp = H + pad[0] + pad[2];
        Wp = W + pad[1] + pad[3];
    }

    Expr padded(const Expr& n, const Expr& c, const Expr& hp, const Expr& wp) const {
        Expr h = add_const(hp, -pad[0]), ww = add_const(wp, -pad[1]);
        Expr inside = h >= int64_t(0) && h < H && ww >= int64_t(0) && ww < W;
        Expr v = tir::cast(w.dtype(), x(n, c, clamp_index(h, H), clamp_index(ww, W)));
        return tir::if_then_else(inside, v, tir::make_const(w.dtype(), pad_value));
    }
};

// A stride-1 depthwise conv of 8-bit data over its padded plane flattened:
// with Wp the padded width, output (oh, ow) of one channel is the sum over
// the window of padded[(oh + ry) * Wp + ow + rx], so with (oh, ow) fused
// into q = oh * Wp + ow (the schedule's), a run of q is one contiguous read
// per tap whatever the rows; the Wp - OW columns past each row are computed
// and dropped. A 7x7 or 14x14 plane's rows are half a vector or less; over
// the flattened plane the vectors are full. Stages: pad_temp (N, C, (Hp + 1)
// * Wp) floats (a row more, which the last dropped columns read),
// conv2d_flat (N, C, OH, Wp), then the output (its first OW columns) with
// its bias.
Tensors flat_depthwise_conv2d(const graph::Node& n, const Tensors& in, int64_t OH, int64_t OW) {
    const PaddedInput d(n, in);
    const te::Tensor& w = d.w;
    const int64_t N = d.N, C = d.C, KH = d.KH, KW = d.KW, Wp = d.Wp;
    te::Tensor padded = te::compute(
        {N, C, (d.Hp + 1) * Wp},
        [&](const std::vector<Var>& i) {
            return d.padded(i[0], i[1], tir::floordiv(i[2], Expr(Wp)),
                            tir::floormod(i[2], Expr(Wp)));
        },
        "pad_temp", "injective");
    tir::IterVar ry = te::reduce_axis(KH, "ry");
    tir::IterVar rx = te::reduce_axis(KW, "rx");
    te::Tensor flat = te::compute(
        {N, C, OH, Wp},
        [&](const std::vector<Var>& i) {
            Expr at = mul_const(i[2] + ry.var, Wp) + i[3] + rx.var;
            return te::sum(padded(i[0], i[1], at) * w(i[1], Expr(int64_t(0)), ry.var, rx.var),
                           {ry, rx});
        },
        "conv2d_flat", "conv2d");
    const bool biased = in.size() == 3;
    te::Tensor result = te::compute(
        {N, C, OH, OW},
        [&](const std::vector<Var>& i) {
            Expr v = flat(as_exprs(i));
            return biased ? v + in[2](i[1]) : v;
        },
        biased ? "T_bias_add" : "conv2d_nchw", "broadcast");
    return {result};
}

// A depthwise conv of 8-bit data with a column stride S > 1: its padded
// rows as floats split by column phase, pad_temp (N, C, Hp, S, ceil(Wp /
// S)) with padded column j * S + p at [p, j], so that the window's tap rx
// reads output columns ow.. at [rx % S, ow + rx / S]: one contiguous vector
// per tap. Over the plain padded rows each tap read every S-th float, a
// shuffle of two vectors per vector (QDQ MobileNetV2's 112 -> 56 stride-2
// layer: 24 GFLOP/s); the phase split reads every S-th byte once per input
// element instead of once per tap.
Tensors phase_split_depthwise_conv2d(const graph::Node& n, const Tensors& in,
                                     const std::vector<int64_t>& strides, int64_t OH, int64_t OW) {
    const PaddedInput d(n, in);
    const te::Tensor& w = d.w;
    const int64_t S = strides[1];
    te::Tensor split = te::compute(
        {d.N, d.C, d.Hp, S, (d.Wp + S - 1) / S},
        [&](const std::vector<Var>& i) {
            return d.padded(i[0], i[1], i[2], mul_const(i[4], S) + i[3]);
        },
        "pad_temp", "injective");
    tir::IterVar rc = te::reduce_axis(1, "rc");
    tir::IterVar ry = te::reduce_axis(d.KH, "ry");
    tir::IterVar rx = te::reduce_axis(d.KW, "rx");
    te::Tensor conv = te::compute(
        {d.N, d.C, OH, OW},
        [&](const std::vector<Var>& i) {
            Expr h = mul_const(i[2], strides[0]) + ry.var;
            Expr phase = tir::floormod(rx.var, Expr(S));
            Expr col = i[3] + tir::floordiv(rx.var, Expr(S));
            return te::sum(
                split(i[0], i[1] + rc.var, h, phase, col) * w(i[1], rc.var, ry.var, rx.var),
                {rc, ry, rx});
        },
        "conv2d_nchw", "conv2d");
    return with_bias(conv, in);
}

}  // namespace

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

    const bool bytes = x.dtype() != w.dtype();
    if (bytes && groups == C && K == C && Cg == 1 && strides == std::vector<int64_t>{1, 1} &&
        dil == std::vector<int64_t>{1, 1} && (pad[0] || pad[1] || pad[2] || pad[3]) &&
        OW < kFlatDepthwiseWidth)
        return flat_depthwise_conv2d(n, in, OH, OW);

    if (bytes && groups == C && K == C && Cg == 1 && strides[1] > 1 &&
        dil == std::vector<int64_t>{1, 1})
        return phase_split_depthwise_conv2d(n, in, strides, OH, OW);

    // 8-bit data (a quantized conv's) is read as float(x), padded with its
    // zero point; the padded copy holds the floats (a stride-2 window's
    // every other float is a shuffle of two vectors, every other byte a
    // per-lane insert).
    te::Tensor data = x;
    if (pad[0] || pad[1] || pad[2] || pad[3]) {
        const PaddedInput d(n, in);
        data = te::compute(
            {N, C, d.Hp, d.Wp},
            [&](const std::vector<Var>& i) { return d.padded(i[0], i[1], i[2], i[3]); }, "pad_temp",
            "injective");
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
    return with_bias(conv, in);
}

}  // namespace tessera::topi::detail
