// nn.avg_pool2d (count_include_pad, ceil_mode, dilation), nn.global_max_pool2d
// and nn.conv2d_transpose (groups, dilation, output_padding, bias).
#include "engine/topi/compute/topi_detail.h"

namespace tessera::topi::detail {

using tir::Expr;
using tir::Var;

Tensors avg_pool2d(const graph::Node& n, const Tensors& in, const Types& out) {
    check_arity(n, in, out, 1, 1);
    const te::Tensor& x = in[0];
    std::vector<int64_t> k = attr_ints_sized(n, "kernel", 2, {});
    std::vector<int64_t> s = attr_ints_sized(n, "strides", 2, {1, 1});
    std::vector<int64_t> d = attr_ints_sized(n, "dilation", 2, {1, 1});
    std::vector<int64_t> p = attr_padding(n);
    bool include_pad = n.attr_int("count_include_pad", 0) != 0;
    int64_t H = x.shape()[2], W = x.shape()[3];
    const auto& os = out[0].shape;
    // Window positions of output (i2, i3) and whether each is counted / read.
    auto window = [&](const std::vector<Var>& i, const tir::IterVar& ry, const tir::IterVar& rx,
                      Expr& h, Expr& w) {
        h = add_const(mul_const(i[2], s[0]) + mul_const(ry.var, d[0]), -p[0]);
        w = add_const(mul_const(i[3], s[1]) + mul_const(rx.var, d[1]), -p[1]);
    };
    te::Tensor sum = te::compute(
        os,
        [&](const std::vector<Var>& i) {
            tir::IterVar ry = te::reduce_axis(k[0], "ry"), rx = te::reduce_axis(k[1], "rx");
            Expr h, w;
            window(i, ry, rx, h, w);
            Expr inside = h >= int64_t(0) && h < H && w >= int64_t(0) && w < W;
            Expr v = x(i[0], i[1], clamp_index(h, H), clamp_index(w, W));
            return te::sum(tir::select(inside, v, tir::make_zero(x.dtype())), {ry, rx});
        },
        "pool_sum", "pool");
    te::Tensor count = te::compute(
        {os[2], os[3]},
        [&](const std::vector<Var>& j) {
            std::vector<Var> i = {j[0], j[0], j[0], j[1]};
            tir::IterVar ry = te::reduce_axis(k[0], "ry"), rx = te::reduce_axis(k[1], "rx");
            Expr h, w;
            window(i, ry, rx, h, w);
            int64_t lo_h = include_pad ? -p[0] : 0, hi_h = include_pad ? H + p[2] : H;
            int64_t lo_w = include_pad ? -p[1] : 0, hi_w = include_pad ? W + p[3] : W;
            Expr ok = h >= lo_h && h < hi_h && w >= lo_w && w < hi_w;
            return te::sum(tir::select(ok, tir::make_const(x.dtype(), 1), tir::make_zero(x.dtype())),
                           {ry, rx});
        },
        "pool_count", "pool");
    te::Tensor y = te::compute(
        os,
        [&](const std::vector<Var>& i) {
            return sum(as_exprs(i)) / tir::max(count(i[2], i[3]), tir::make_const(x.dtype(), 1));
        },
        "pool_avg", "elemwise");
    return {y};
}

Tensors global_max_pool2d(const graph::Node& n, const Tensors& in, const Types& out) {
    check_arity(n, in, out, 1, 1);
    const te::Tensor& x = in[0];
    const auto& xs = x.shape();
    // No reduction axis of extent 1: over one row (H = 1, magika's max over
    // 508 positions) the reduction is the CPU rule's row reduction in
    // vectors, 0.31 -> 0.02 ms; with an extent-1 axis it ran scalar.
    te::Tensor y = te::compute(
        out[0].shape,
        [&](const std::vector<Var>& i) {
            std::vector<tir::IterVar> axes;
            if (xs[2] > 1) axes.push_back(te::reduce_axis(xs[2], "ry"));
            if (xs[3] > 1 || axes.empty()) axes.push_back(te::reduce_axis(xs[3], "rx"));
            const Expr h = xs[2] > 1 ? Expr(axes.front().var) : Expr(int64_t(0));
            const Expr w = xs[3] > 1 || xs[2] == 1 ? Expr(axes.back().var) : Expr(int64_t(0));
            return te::max(x(i[0], i[1], h, w), axes);
        },
        "pool_max", "pool");
    return {y};
}

Tensors conv2d_transpose(const graph::Node& n, const Tensors& in, const Types& out) {
    check_arity(n, in, out, 2, 3);
    const te::Tensor& x = in[0];
    const te::Tensor& w = in[1];
    std::vector<int64_t> s = attr_ints_sized(n, "strides", 2, {1, 1});
    std::vector<int64_t> d = attr_ints_sized(n, "dilation", 2, {1, 1});
    std::vector<int64_t> p = attr_padding(n);
    int64_t groups = n.attr_int("groups", 1);
    int64_t C = x.shape()[1], H = x.shape()[2], W = x.shape()[3];
    int64_t Cg = C / groups, Kg = w.shape()[1], R = w.shape()[2], S = w.shape()[3];
    // Kernel as large as the stride (2x2 / 2, the usual upsampling): every
    // output takes exactly one kernel tap, (oh + pad) % stride, from input
    // (oh + pad) / stride; a sum over the input channels only, without the
    // taps' divisibility tests (R*S times less work, no selects: PP-OCRv4
    // det's 2x2/2 deconvs took 107 and 18 ms).
    const bool tiled = R == s[0] && S == s[1] && d[0] == 1 && d[1] == 1 && p[0] >= 0 && p[1] >= 0;
    te::Tensor y = tiled ? te::compute(
        out[0].shape,
        [&](const std::vector<Var>& i) {
            tir::IterVar rc = te::reduce_axis(Cg, "rc");
            Expr c = groups == 1 ? Expr(rc.var) : mul_const(tir::floordiv(i[1], Kg), Cg) + rc.var;
            Expr kk = groups == 1 ? Expr(i[1]) : tir::floormod(i[1], Kg);
            Expr th = add_const(i[2], p[0]), tw = add_const(i[3], p[1]);
            Expr ih = tir::floordiv(th, s[0]), iw = tir::floordiv(tw, s[1]);
            Expr v = x(i[0], c, clamp_index(ih, H), clamp_index(iw, W)) *
                     w(c, kk, tir::floormod(th, s[0]), tir::floormod(tw, s[1]));
            // Outputs past the last input (end padding negative) read nothing;
            // without them, no select (the row then vectorizes).
            const auto& os = out[0].shape;
            const bool guard = (os[2] - 1 + p[0]) / s[0] >= H || (os[3] - 1 + p[1]) / s[1] >= W;
            if (guard) v = tir::select(ih < H && iw < W, v, tir::make_zero(x.dtype()));
            return te::sum(v, {rc});
        },
        "conv2d_transpose_nchw", "conv2d_transpose")
    : te::compute(
        out[0].shape,
        [&](const std::vector<Var>& i) {
            tir::IterVar rc = te::reduce_axis(Cg, "rc"), ry = te::reduce_axis(R, "ry"),
                         rx = te::reduce_axis(S, "rx");
            Expr c = groups == 1 ? Expr(rc.var) : mul_const(tir::floordiv(i[1], Kg), Cg) + rc.var;
            Expr kk = groups == 1 ? Expr(i[1]) : tir::floormod(i[1], Kg);
            Expr th = add_const(i[2], p[0]) - mul_const(ry.var, d[0]);
            Expr tw = add_const(i[3], p[1]) - mul_const(rx.var, d[1]);
            Expr ih = s[0] == 1 ? th : tir::floordiv(th, s[0]);
            Expr iw = s[1] == 1 ? tw : tir::floordiv(tw, s[1]);
            Expr ok = th >= int64_t(0) && tw >= int64_t(0) && ih < H && iw < W;
            if (s[0] != 1) ok = ok && tir::floormod(th, s[0]) == int64_t(0);
            if (s[1] != 1) ok = ok && tir::floormod(tw, s[1]) == int64_t(0);
            Expr v = x(i[0], c, clamp_index(ih, H), clamp_index(iw, W)) * w(c, kk, ry.var, rx.var);
            return te::sum(tir::select(ok, v, tir::make_zero(x.dtype())), {rc, ry, rx});
        },
        "conv2d_transpose_nchw", "conv2d_transpose");
    if (in.size() < 3) return {y};
    te::Tensor b = te::compute(
        out[0].shape, [&](const std::vector<Var>& i) { return y(as_exprs(i)) + in[2](i[1]); },
        "T_bias_add", "broadcast");
    return {b};
}

}  // namespace tessera::topi::detail
