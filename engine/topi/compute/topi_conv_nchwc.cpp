// Computes of the blocked-layout ops: layout_transform (NCHW <-> NCHW[x]c,
// zero-padding the last channel block) and nn.conv2d_NCHWc (TVM's x86
// conv2d_NCHWc: padded data stage, reduction over input-channel blocks,
// kernel rows and columns, and the channels inside a block; with groups =
// channels, TVM's depthwise_conv2d_NCHWc: a reduction over the window only),
// and the blocked max / global average pools (add_layout_computes).
#include "engine/tir/op.h"
#include "engine/topi/compute/topi_detail.h"

namespace tessera::topi::detail {

using tir::Expr;
using tir::Var;

Tensors layout_transform(const graph::Node& n, const Tensors& in, const Types& out) {
    check_arity(n, in, out, 1, 1);
    const te::Tensor& x = in[0];
    const auto& xs = x.shape();
    const auto& os = out[0].shape;
    if (xs.size() == 4 && os.size() == 5) {  // NCHW -> NCHW[b]c
        const int64_t C = xs[1], b = os[4];
        return {te::compute(
            os,
            [&](const std::vector<Var>& i) {
                Expr c = mul_const(i[1], b) + i[4];
                if (os[1] * b == C) return x(i[0], c, i[2], i[3]);
                return tir::if_then_else(c < Expr(C), x(i[0], tir::min(c, Expr(C - 1)), i[2], i[3]),
                                         tir::make_zero(x.dtype()));
            },
            "T_layout_pack", "injective")};
    }
    TS_USER_CHECK(xs.size() == 5 && os.size() == 4)
        << where(n) << ": layout_transform converts between rank-4 NCHW and rank-5 NCHW[x]c data";
    const int64_t b = xs[4];
    return {te::compute(
        os,
        [&](const std::vector<Var>& i) {
            return x(i[0], tir::floordiv(i[1], Expr(b)), i[2], i[3], tir::floormod(i[1], Expr(b)));
        },
        "T_layout_unpack", "injective")};
}

namespace {

/// `conv` plus the optional bias in[2] of shape (OCo, ob).
Tensors with_bias(const graph::Node& n, const te::Tensor& conv, const Tensors& in,
                  const std::vector<int64_t>& os, int64_t OCo, int64_t ob) {
    if (in.size() < 3) return {conv};
    const te::Tensor& b = in[2];
    TS_USER_CHECK(b.shape() == std::vector<int64_t>({OCo, ob}))
        << where(n) << ": bias must have shape (" << OCo << ", " << ob << ")";
    return {te::compute(
        os, [&](const std::vector<Var>& i) { return conv(as_exprs(i)) + b(i[1], i[4]); },
        "T_bias_add", "broadcast")};
}

}  // namespace

Tensors conv2d_nchwc(const graph::Node& n, const Tensors& in, const Types& out) {
    check_arity(n, in, out, 2, 3);
    const te::Tensor& x = in[0];
    const te::Tensor& w = in[1];
    TS_USER_CHECK(x.ndim() == 5 && w.ndim() == 6)
        << where(n) << ": expects NCHW[x]c data and OIHW[x]i[y]o weights";
    std::vector<int64_t> strides = attr_ints_sized(n, "strides", 2, {1, 1});
    std::vector<int64_t> dil = attr_ints_sized(n, "dilation", 2, {1, 1});
    std::vector<int64_t> pad = attr_padding(n);
    const auto& xs = x.shape();
    const auto& ws = w.shape();
    const int64_t N = xs[0], ICo = xs[1], H = xs[2], W = xs[3], ib = xs[4];
    const int64_t OCo = ws[0], KH = ws[2], KW = ws[3], ob = ws[5];
    const bool depthwise = n.attr_int("groups", 1) != 1;
    TS_USER_CHECK(depthwise || (ws[1] == ICo && ws[4] == ib))
        << where(n) << ": packed weight does not match the data's channel blocks";
    const auto& os = out[0].shape;
    TS_USER_CHECK(os.size() == 5 && os[0] == N && os[1] == OCo && os[4] == ob)
        << where(n) << ": output type " << out[0].str() << " does not match the convolution";

    te::Tensor data = x;
    if (pad[0] || pad[1] || pad[2] || pad[3]) {
        data = te::compute(
            {N, ICo, H + pad[0] + pad[2], W + pad[1] + pad[3], ib},
            [&](const std::vector<Var>& i) {
                Expr h = add_const(i[2], -pad[0]), ww = add_const(i[3], -pad[1]);
                Expr inside = h >= int64_t(0) && h < H && ww >= int64_t(0) && ww < W;
                Expr v = x(i[0], i[1], clamp_index(h, H), clamp_index(ww, W), i[4]);
                return tir::if_then_else(inside, v, tir::make_zero(x.dtype()));
            },
            "data_pad", "injective");
    }
    if (depthwise) {
        // Depthwise: channel block i of block c reads only its own channel.
        TS_USER_CHECK(ws[1] == 1 && ws[4] == 1 && OCo == ICo && ob == ib)
            << where(n) << ": depthwise weight must be (" << ICo << ", 1, KH, KW, 1, " << ib << ")";
        tir::IterVar dy = te::reduce_axis(KH, "ry");
        tir::IterVar dx = te::reduce_axis(KW, "rx");
        te::Tensor dw = te::compute(
            os,
            [&](const std::vector<Var>& i) {
                Expr h = mul_const(i[2], strides[0]) + mul_const(dy.var, dil[0]);
                Expr ww = mul_const(i[3], strides[1]) + mul_const(dx.var, dil[1]);
                return te::sum(data(i[0], i[1], h, ww, i[4]) * w(i[1], Expr(int64_t(0)), dy.var,
                                                                 dx.var, Expr(int64_t(0)), i[4]),
                               {dy, dx});
            },
            "depthwise_conv2d_NCHWc", "conv2d_NCHWc");
        return with_bias(n, dw, in, os, OCo, ob);
    }
    tir::IterVar rco = te::reduce_axis(ICo, "rco");
    tir::IterVar ry = te::reduce_axis(KH, "ry");
    tir::IterVar rx = te::reduce_axis(KW, "rx");
    tir::IterVar rci = te::reduce_axis(ib, "rci");
    te::Tensor conv = te::compute(
        os,
        [&](const std::vector<Var>& i) {
            Expr h = mul_const(i[2], strides[0]) + mul_const(ry.var, dil[0]);
            Expr ww = mul_const(i[3], strides[1]) + mul_const(rx.var, dil[1]);
            return te::sum(data(i[0], rco.var, h, ww, rci.var) *
                               w(i[1], rco.var, ry.var, rx.var, rci.var, i[4]),
                           {rco, ry, rx, rci});
        },
        "conv2d_NCHWc", "conv2d_NCHWc");
    return with_bias(n, conv, in, os, OCo, ob);
}

namespace {

// Max pooling of NCHW[b]c data: padded positions never win (a select of the
// lowest value), so zero-padded channels stay zero.
Tensors max_pool2d_nchwc(const graph::Node& n, const Tensors& in, const Types& out) {
    check_arity(n, in, out, 1, 1);
    const te::Tensor& x = in[0];
    TS_USER_CHECK(x.ndim() == 5) << where(n) << ": expects NCHW[x]c data";
    std::vector<int64_t> kernel = attr_ints_sized(n, "kernel", 2, {});
    std::vector<int64_t> strides = attr_ints_sized(n, "strides", 2, {1, 1});
    std::vector<int64_t> dil = attr_ints_sized(n, "dilation", 2, {1, 1});
    std::vector<int64_t> pad = attr_padding(n);
    const auto& xs = x.shape();
    const int64_t H = xs[2], W = xs[3];
    const auto& os = out[0].shape;
    TS_USER_CHECK(os.size() == 5 && os[0] == xs[0] && os[1] == xs[1] && os[4] == xs[4])
        << where(n) << ": output type " << out[0].str() << " does not fit the input";
    tir::IterVar ry = te::reduce_axis(kernel[0], "ry");
    tir::IterVar rx = te::reduce_axis(kernel[1], "rx");
    return {te::compute(
        os,
        [&](const std::vector<Var>& i) {
            Expr h = add_const(mul_const(i[2], strides[0]) + mul_const(ry.var, dil[0]), -pad[0]);
            Expr w = add_const(mul_const(i[3], strides[1]) + mul_const(rx.var, dil[1]), -pad[1]);
            Expr inside = h >= int64_t(0) && h < H && w >= int64_t(0) && w < W;
            Expr v = x(i[0], i[1], clamp_index(h, H), clamp_index(w, W), i[4]);
            return te::max(tir::if_then_else(inside, v, tir::min_value(x.dtype())), {ry, rx});
        },
        "pool_max_NCHWc", "pool")};
}

// Mean over H and W of NCHW[b]c data: a sum stage, then a divide stage.
Tensors global_avg_pool2d_nchwc(const graph::Node& n, const Tensors& in, const Types& out) {
    check_arity(n, in, out, 1, 1);
    const te::Tensor& x = in[0];
    TS_USER_CHECK(x.ndim() == 5) << where(n) << ": expects NCHW[x]c data";
    const auto& xs = x.shape();
    const auto& os = out[0].shape;
    TS_USER_CHECK(os == std::vector<int64_t>({xs[0], xs[1], 1, 1, xs[4]}))
        << where(n) << ": output type " << out[0].str() << " is not (N, C/b, 1, 1, b)";
    tir::IterVar rh = te::reduce_axis(xs[2], "rh");
    tir::IterVar rw = te::reduce_axis(xs[3], "rw");
    te::Tensor sum = te::compute(
        os,
        [&](const std::vector<Var>& i) {
            return te::sum(x(i[0], i[1], rh.var, rw.var, i[4]), {rh, rw});
        },
        "pool_sum_NCHWc", "pool");
    const double count = double(xs[2] * xs[3]);
    return {te::compute(
        os,
        [&](const std::vector<Var>& i) {
            return sum(as_exprs(i)) / tir::make_const(x.dtype(), count);
        },
        "pool_avg", "elemwise")};
}

}  // namespace

void add_layout_computes(ComputeTable& t) {
    t["nn.max_pool2d_NCHWc"] = max_pool2d_nchwc;
    t["nn.global_avg_pool2d_NCHWc"] = global_avg_pool2d_nchwc;
}

}  // namespace tessera::topi::detail
