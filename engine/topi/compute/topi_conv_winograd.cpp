// Compute of nn.conv2d_winograd_NCHWc (TVM's conv2d_winograd, in the blocked
// layout): padded data -> input transform V = B^T d B per tile (per channel
// of a block) -> batched GEMM M[eps, nu] = U[eps, nu] x V[eps, nu] over the
// input channels -> inverse transform Y = A^T M A (+ bias) into NCHW[ob]c.
// The constant matrices enter as explicit sums (zero terms dropped) chosen by
// a select over the transform indices, which folds once the schedule unrolls
// those loops.
#include "engine/tir/op.h"
#include "engine/topi/compute/topi_detail.h"
#include "engine/topi/compute/winograd.h"

namespace tessera::topi::detail {

using tir::Expr;
using tir::Var;

namespace {

/// sum_k c[k] * e[k] without the zero terms (+-1 as add / subtract).
Expr linear_sum(const std::vector<double>& c, const std::vector<Expr>& e, tir::DataType dt) {
    Expr acc;
    bool any = false;
    for (size_t k = 0; k < c.size(); ++k) {
        if (c[k] == 0.0) continue;
        Expr term = c[k] == 1.0 || c[k] == -1.0 ? e[k] : tir::make_const(dt, c[k]) * e[k];
        if (!any)
            acc = c[k] == -1.0 ? -term : term;
        else
            acc = c[k] == -1.0 ? acc - term : acc + term;
        any = true;
    }
    return any ? acc : tir::make_zero(dt);
}

/// select(i == 0, f(0, j), select(i == 1, f(1, j), ...)) over i, j in [0, n).
template <typename F>
Expr select_2d(const Expr& i, const Expr& j, int64_t ni, int64_t nj, F&& f) {
    auto row = [&](int64_t a) {
        Expr r = f(a, nj - 1);
        for (int64_t b = nj - 2; b >= 0; --b) r = tir::select(j == Expr(b), f(a, b), r);
        return r;
    };
    Expr r = row(ni - 1);
    for (int64_t a = ni - 2; a >= 0; --a) r = tir::select(i == Expr(a), row(a), r);
    return r;
}

Tensors conv2d_winograd_nchwc(const graph::Node& n, const Tensors& in, const Types& out) {
    check_arity(n, in, out, 2, 3);
    const te::Tensor& x = in[0];
    const te::Tensor& u = in[1];
    TS_USER_CHECK(x.ndim() == 5 && u.ndim() == 6)
        << where(n) << ": expects NCHW[x]c data and (alpha, alpha, OCo, ICo, ib, ob) weights";
    const int64_t m = n.attr_int("tile", 2);
    const WinogradMatrices& W = winograd_matrices(m);
    const int64_t alpha = W.alpha;
    std::vector<int64_t> pad = attr_padding(n);
    const auto& xs = x.shape();
    const auto& us = u.shape();
    const int64_t N = xs[0], ICo = xs[1], H = xs[2], Wd = xs[3], ib = xs[4];
    const int64_t OCo = us[2], ob = us[5];
    TS_USER_CHECK(us[0] == alpha && us[1] == alpha && us[3] == ICo && us[4] == ib)
        << where(n) << ": transformed weight does not match the tile or the data's channel blocks";
    const auto& os = out[0].shape;
    TS_USER_CHECK(os.size() == 5 && os[0] == N && os[1] == OCo && os[4] == ob)
        << where(n) << ": output type " << out[0].str() << " does not match the convolution";
    const int64_t OH = os[2], OW = os[3];
    const int64_t nH = (OH + m - 1) / m, nW = (OW + m - 1) / m;
    const tir::DataType dt = x.dtype();

    // Padded input covering every whole tile (tails read zeros).
    te::Tensor data = te::compute(
        {N, ICo, nH * m + 2, nW * m + 2, ib},
        [&](const std::vector<Var>& i) {
            Expr h = add_const(i[2], -pad[0]), ww = add_const(i[3], -pad[1]);
            Expr inside = h >= int64_t(0) && h < H && ww >= int64_t(0) && ww < Wd;
            Expr v = x(i[0], i[1], clamp_index(h, H), clamp_index(ww, Wd), i[4]);
            return tir::if_then_else(inside, v, tir::make_zero(dt));
        },
        "data_pad", "injective");

    // V (N, nH, alpha, alpha, ICo, nW, ib) = B^T d B per tile and channel.
    te::Tensor v = te::compute(
        {N, nH, alpha, alpha, ICo, nW, ib},
        [&](const std::vector<Var>& i) {
            Expr h0 = mul_const(i[1], m), w0 = mul_const(i[5], m);
            return select_2d(i[2], i[3], alpha, alpha, [&](int64_t e, int64_t nu) {
                std::vector<double> c;
                std::vector<Expr> t;
                for (int64_t r1 = 0; r1 < alpha; ++r1)
                    for (int64_t r2 = 0; r2 < alpha; ++r2) {
                        const double k =
                            W.BT[size_t(e * alpha + r1)] * W.BT[size_t(nu * alpha + r2)];
                        if (k == 0.0) continue;
                        c.push_back(k);
                        t.push_back(data(i[0], i[4], add_const(h0, r1), add_const(w0, r2), i[6]));
                    }
                return linear_sum(c, t, dt);
            });
        },
        "winograd_V", "injective");

    // M (N, nH, alpha, alpha, OCo, nW, ob): per (eps, nu), U x V over input channels.
    tir::IterVar rco = te::reduce_axis(ICo, "rco");
    tir::IterVar rci = te::reduce_axis(ib, "rci");
    te::Tensor mm = te::compute(
        {N, nH, alpha, alpha, OCo, nW, ob},
        [&](const std::vector<Var>& i) {
            return te::sum(u(i[2], i[3], i[4], rco.var, rci.var, i[6]) *
                               v(i[0], i[1], i[2], i[3], rco.var, i[5], rci.var),
                           {rco, rci});
        },
        "winograd_M", "conv2d_NCHWc");

    // Y = A^T M A (+ bias), written as NCHW[ob]c.
    const bool bias = in.size() == 3;
    if (bias) {
        TS_USER_CHECK(in[2].shape() == std::vector<int64_t>({OCo, ob}))
            << where(n) << ": bias must have shape (" << OCo << ", " << ob << ")";
    }
    return {te::compute(
        os,
        [&](const std::vector<Var>& i) {
            Expr th = tir::floordiv(i[2], Expr(m)), tw = tir::floordiv(i[3], Expr(m));
            Expr y = select_2d(
                tir::floormod(i[2], Expr(m)), tir::floormod(i[3], Expr(m)), m, m,
                [&](int64_t a, int64_t b) {
                    std::vector<double> c;
                    std::vector<Expr> t;
                    for (int64_t e = 0; e < alpha; ++e)
                        for (int64_t nu = 0; nu < alpha; ++nu) {
                            const double k =
                                W.AT[size_t(a * alpha + e)] * W.AT[size_t(b * alpha + nu)];
                            if (k == 0.0) continue;
                            c.push_back(k);
                            t.push_back(mm(i[0], th, Expr(e), Expr(nu), i[1], tw, i[4]));
                        }
                    return linear_sum(c, t, dt);
                });
            return bias ? y + in[2](i[1], i[4]) : y;
        },
        "conv2d_winograd", "conv2d_NCHWc")};
}

}  // namespace

void add_winograd_computes(ComputeTable& t) {
    t["nn.conv2d_winograd_NCHWc"] = conv2d_winograd_nchwc;
}

}  // namespace tessera::topi::detail
