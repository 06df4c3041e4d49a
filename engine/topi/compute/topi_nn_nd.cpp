// nn.conv3d, nn.max_pool3d, nn.avg_pool3d (written over any number of spatial
// dims; padding is (begins..., ends...)) and einsum (a product of the operands
// summed over the labels missing from the output).
#include <cstdint>
#include <map>

#include "engine/topi/compute/topi_detail.h"

namespace tessera::topi::detail {

using tir::Expr;
using tir::Var;

namespace {

struct Window {
    size_t dims = 0;
    std::vector<int64_t> kernel, strides, dilation, pad;  // pad: begins..., ends...
};

Window window_attrs(const graph::Node& n, size_t dims, const std::vector<int64_t>& kernel) {
    Window w;
    w.dims = dims;
    w.kernel = kernel;
    w.strides = attr_ints_sized(n, "strides", dims, std::vector<int64_t>(dims, 1));
    w.dilation = attr_ints_sized(n, "dilation", dims, std::vector<int64_t>(dims, 1));
    w.pad = attr_ints_sized(n, "padding", 2 * dims, std::vector<int64_t>(2 * dims, 0));
    for (size_t d = 0; d < dims; ++d)
        TS_USER_CHECK(w.strides[d] >= 1 && w.dilation[d] >= 1 && w.kernel[d] >= 1)
            << where(n) << ": kernel, strides and dilation must be >= 1";
    return w;
}

/// Input positions read by output spatial indices `o` at window offsets `r`
/// (unpadded coordinates).
void window_pos(const Window& w, const std::vector<Var>& i, const std::vector<tir::IterVar>& r,
                std::vector<Expr>& pos) {
    pos.clear();
    for (size_t d = 0; d < w.dims; ++d)
        pos.push_back(add_const(
            mul_const(i[d + 2], w.strides[d]) + mul_const(r[d].var, w.dilation[d]), -w.pad[d]));
}

/// True where every pos[d] lies in [lo[d], hi[d]).

Expr inside_range(const std::vector<Expr>& pos, const std::vector<int64_t>& lo,
                  const std::vector<int64_t>& hi) {
    Expr ok;
    for (size_t d = 0; d < pos.size(); ++d) {
        Expr c = pos[d] >= lo[d] && pos[d] < hi[d];
        ok = d == 0 ? c : (ok && c);
    }
    return ok;
}

std::vector<tir::IterVar> window_axes(const std::vector<int64_t>& kernel) {
    std::vector<tir::IterVar> r;
    for (size_t d = 0; d < kernel.size(); ++d)
        r.push_back(te::reduce_axis(kernel[d], "r" + std::to_string(d)));
    return r;
}

}  // namespace

Tensors conv3d(const graph::Node& n, const Tensors& in, const Types& out) {
    check_arity(n, in, out, 2, 3);
    const te::Tensor& x = in[0];
    const te::Tensor& w = in[1];
    TS_USER_CHECK(x.ndim() == w.ndim() && x.ndim() >= 3)
        << where(n) << ": input rank " << x.ndim() << " and weight rank " << w.ndim();
    size_t dims = x.ndim() - 2;
    const auto& xs = x.shape();
    const auto& ws = w.shape();
    Window win = window_attrs(n, dims, std::vector<int64_t>(ws.begin() + 2, ws.end()));
    int64_t groups = n.attr_int("groups", 1);
    int64_t C = xs[1], K = ws[0], Cg = ws[1];
    TS_USER_CHECK(groups >= 1 && C % groups == 0 && K % groups == 0 && C / groups == Cg)
        << where(n) << ": groups=" << groups << " does not fit the input and weight channels";
    int64_t Kg = K / groups;
    const auto& os = out[0].shape;
    TS_USER_CHECK(os.size() == xs.size() && os[0] == xs[0] && os[1] == K)
        << where(n) << ": output type " << out[0].str() << " does not fit the convolution";

    // Padded input stage (zero outside the original bounds).
    te::Tensor data = x;
    bool padded = false;
    for (int64_t p : win.pad) padded = padded || p != 0;
    if (padded) {
        std::vector<int64_t> ps = {xs[0], C};
        std::vector<int64_t> lo(dims, 0), hi(xs.begin() + 2, xs.end());
        for (size_t d = 0; d < dims; ++d) ps.push_back(xs[d + 2] + win.pad[d] + win.pad[d + dims]);
        data = te::compute(
            ps,
            [&](const std::vector<Var>& i) {
                std::vector<Expr> pos, idx = {i[0], i[1]};
                for (size_t d = 0; d < dims; ++d) pos.push_back(add_const(i[d + 2], -win.pad[d]));
                for (size_t d = 0; d < dims; ++d) idx.push_back(clamp_index(pos[d], xs[d + 2]));
                return tir::if_then_else(inside_range(pos, lo, hi), x(idx),
                                         tir::make_zero(x.dtype()));
            },
            "pad_temp", "injective");
    }
    tir::IterVar rc = te::reduce_axis(Cg, "rc");
    std::vector<tir::IterVar> r = window_axes(win.kernel);
    std::vector<tir::IterVar> axes = {rc};
    axes.insert(axes.end(), r.begin(), r.end());
    te::Tensor conv = te::compute(
        os,
        [&](const std::vector<Var>& i) {
            Expr c = groups == 1 ? Expr(rc.var) : mul_const(tir::floordiv(i[1], Kg), Cg) + rc.var;
            std::vector<Expr> di = {i[0], c}, wi = {i[1], rc.var};
            for (size_t d = 0; d < dims; ++d) {
                di.push_back(mul_const(i[d + 2], win.strides[d]) +
                             mul_const(r[d].var, win.dilation[d]));
                wi.push_back(r[d].var);
            }
            return te::sum(data(di) * w(wi), axes);
        },
        "conv3d_ncdhw", "conv3d");
    if (in.size() < 3) return {conv};
    const te::Tensor& b = in[2];
    TS_USER_CHECK(b.shape() == std::vector<int64_t>({K})) << where(n) << ": bias shape";
    return {te::compute(
        os, [&](const std::vector<Var>& i) { return conv(as_exprs(i)) + b(i[1]); }, "T_bias_add",
        "broadcast")};
}

Tensors max_pool3d(const graph::Node& n, const Tensors& in, const Types& out) {
    check_arity(n, in, out, 1, 1);
    const te::Tensor& x = in[0];
    TS_USER_CHECK(x.ndim() >= 3) << where(n) << ": input rank " << x.ndim();
    size_t dims = x.ndim() - 2;
    const auto& xs = x.shape();
    Window win = window_attrs(n, dims, attr_ints_sized(n, "kernel", dims, {}));
    std::vector<int64_t> lo(dims, 0), hi(xs.begin() + 2, xs.end());
    tir::DataType dt = x.dtype();
    std::vector<tir::IterVar> r = window_axes(win.kernel);
    te::Tensor y = te::compute(
        out[0].shape,
        [&](const std::vector<Var>& i) {
            std::vector<Expr> pos, idx = {i[0], i[1]};
            window_pos(win, i, r, pos);
            for (size_t d = 0; d < dims; ++d) idx.push_back(clamp_index(pos[d], xs[d + 2]));
            return te::max(tir::if_then_else(inside_range(pos, lo, hi), x(idx), tir::min_value(dt)),
                           r);
        },
        "pool_max", "pool");
    return {y};
}

Tensors avg_pool3d(const graph::Node& n, const Tensors& in, const Types& out) {
    check_arity(n, in, out, 1, 1);
    const te::Tensor& x = in[0];
    TS_USER_CHECK(x.ndim() >= 3) << where(n) << ": input rank " << x.ndim();
    size_t dims = x.ndim() - 2;
    const auto& xs = x.shape();
    Window win = window_attrs(n, dims, attr_ints_sized(n, "kernel", dims, {}));
    bool include_pad = n.attr_int("count_include_pad", 0) != 0;
    std::vector<int64_t> lo(dims, 0), hi(xs.begin() + 2, xs.end());
    std::vector<int64_t> clo = lo, chi = hi;
    if (include_pad) {
        for (size_t d = 0; d < dims; ++d) {
            clo[d] = -win.pad[d];
            chi[d] = hi[d] + win.pad[d + dims];
        }
    }
    const auto& os = out[0].shape;
    tir::DataType dt = x.dtype();
    te::Tensor sum = te::compute(
        os,
        [&](const std::vector<Var>& i) {
            std::vector<tir::IterVar> r = window_axes(win.kernel);
            std::vector<Expr> pos, idx = {i[0], i[1]};
            window_pos(win, i, r, pos);
            for (size_t d = 0; d < dims; ++d) idx.push_back(clamp_index(pos[d], xs[d + 2]));
            return te::sum(tir::select(inside_range(pos, lo, hi), x(idx), tir::make_zero(dt)), r);
        },
        "pool_sum", "pool");
    std::vector<int64_t> cs(os.begin() + 2, os.end());
    te::Tensor count = te::compute(
        cs,
        [&](const std::vector<Var>& j) {
            std::vector<Var> i = {j[0], j[0]};
            i.insert(i.end(), j.begin(), j.end());
            std::vector<tir::IterVar> r = window_axes(win.kernel);
            std::vector<Expr> pos;
            window_pos(win, i, r, pos);
            return te::sum(tir::select(inside_range(pos, clo, chi), tir::make_const(dt, 1),
                                       tir::make_zero(dt)),
                           r);
        },
        "pool_count", "pool");
    te::Tensor y = te::compute(
        os,
        [&](const std::vector<Var>& i) {
            std::vector<Expr> ci(i.begin() + 2, i.end());
            return sum(as_exprs(i)) / tir::max(count(ci), tir::make_const(dt, 1));
        },
        "pool_avg", "elemwise");
    return {y};
}

Tensors conv3d_transpose(const graph::Node& n, const Tensors& in, const Types& out) {
    check_arity(n, in, out, 2, 3);
    const te::Tensor& x = in[0];
    const te::Tensor& w = in[1];
    TS_USER_CHECK(x.ndim() == w.ndim() && x.ndim() >= 3)
        << where(n) << ": input rank " << x.ndim() << " and weight rank " << w.ndim();
    size_t dims = size_t(x.ndim()) - 2;
    const auto& xs = x.shape();
    const auto& ws = w.shape();
    Window win = window_attrs(n, dims, std::vector<int64_t>(ws.begin() + 2, ws.end()));
    int64_t groups = n.attr_int("groups", 1);
    TS_USER_CHECK(groups >= 1 && xs[1] % groups == 0) << where(n) << ": groups=" << groups;
    int64_t Cg = xs[1] / groups, Kg = ws[1];
    tir::DataType dt = x.dtype();
    te::Tensor y = te::compute(
        out[0].shape,
        [&](const std::vector<Var>& i) {
            tir::IterVar rc = te::reduce_axis(Cg, "rc");
            std::vector<tir::IterVar> r = window_axes(win.kernel);
            Expr c = groups == 1 ? Expr(rc.var) : mul_const(tir::floordiv(i[1], Kg), Cg) + rc.var;
            Expr kk = groups == 1 ? Expr(i[1]) : tir::floormod(i[1], Kg);
            std::vector<Expr> xi = {i[0], c}, wi = {c, kk};
            Expr ok;
            for (size_t d = 0; d < dims; ++d) {
                int64_t s = win.strides[d], ext = xs[d + 2];
                Expr t = add_const(i[d + 2], win.pad[d]) - mul_const(r[d].var, win.dilation[d]);
                Expr pos = s == 1 ? t : tir::floordiv(t, s);
                Expr cond = t >= int64_t(0) && pos < ext;
                if (s != 1) cond = cond && tir::floormod(t, s) == int64_t(0);
                ok = d == 0 ? cond : (ok && cond);
                xi.push_back(clamp_index(pos, ext));
                wi.push_back(r[d].var);
            }
            std::vector<tir::IterVar> axes = {rc};
            axes.insert(axes.end(), r.begin(), r.end());
            return te::sum(tir::select(ok, x(xi) * w(wi), tir::make_zero(dt)), axes);
        },
        "conv3d_transpose_ncdhw", "conv3d_transpose");
    if (in.size() < 3) return {y};
    return {te::compute(
        out[0].shape, [&](const std::vector<Var>& i) { return y(as_exprs(i)) + in[2](i[1]); },
        "T_bias_add", "broadcast")};
}

Tensors max_pool2d_indices(const graph::Node& n, const Tensors& in, const Types& out) {
    check_arity(n, in, out, 1, 1);
    const te::Tensor& x = in[0];
    TS_USER_CHECK(x.ndim() == 4) << where(n) << ": input must be 4-D";
    Types value_type = {graph::TensorType{graph::DType::Float32, out[0].shape}};
    te::Tensor m = max_pool2d(n, in, value_type)[0];
    const auto& xs = x.shape();
    const int64_t H = xs[2], W = xs[3];
    std::vector<int64_t> k = attr_ints_sized(n, "kernel", 2, {});
    std::vector<int64_t> s = attr_ints_sized(n, "strides", 2, {1, 1});
    std::vector<int64_t> d = attr_ints_sized(n, "dilation", 2, {1, 1});
    std::vector<int64_t> p = attr_padding(n);
    const bool col_major = n.attr_int("storage_order", 0) != 0;
    const tir::DataType i64 = tir::DataType::int64();
    te::Tensor idx = te::compute(
        out[0].shape,
        [&](const std::vector<Var>& i) {
            tir::IterVar ry = te::reduce_axis(k[0], "ry"), rx = te::reduce_axis(k[1], "rx");
            Expr h = add_const(mul_const(i[2], s[0]) + mul_const(ry.var, d[0]), -p[0]);
            Expr w = add_const(mul_const(i[3], s[1]) + mul_const(rx.var, d[1]), -p[1]);
            Expr inside = h >= int64_t(0) && h < H && w >= int64_t(0) && w < W;
            Expr hc = clamp_index(h, H), wc = clamp_index(w, W);
            Expr hit = inside && x(i[0], i[1], hc, wc) == m(i[0], i[1], i[2], i[3]);
            Expr plane = mul_const(mul_const(i[0], xs[1]) + i[1], H * W);
            Expr flat = col_major ? plane + mul_const(wc, H) + hc : plane + mul_const(hc, W) + wc;
            return te::min(tir::select(hit, flat, tir::make_const(i64, double(INT64_MAX / 2))),
                           {ry, rx});
        },
        "pool_argmax", "pool");
    return {idx};
}

Tensors einsum(const graph::Node& n, const Tensors& in, const Types& out) {
    TS_USER_CHECK(!in.empty() && out.size() == 1) << where(n) << ": arity";
    std::string eq = n.attr_str("equation", "");
    size_t arrow = eq.find("->");
    TS_USER_CHECK(arrow != std::string::npos) << where(n) << ": equation needs '->'";
    std::vector<std::string> terms(1);
    for (size_t i = 0; i < arrow; ++i) {
        if (eq[i] == ',') terms.emplace_back();
        else terms.back().push_back(eq[i]);
    }
    std::string outs = eq.substr(arrow + 2);
    TS_USER_CHECK(terms.size() == in.size()) << where(n) << ": operand count";
    std::map<char, int64_t> extent;
    for (size_t t = 0; t < terms.size(); ++t) {
        TS_USER_CHECK(terms[t].size() == size_t(in[t].ndim())) << where(n) << ": term '" << terms[t] << "'";
        for (size_t j = 0; j < terms[t].size(); ++j) extent[terms[t][j]] = in[t].shape()[j];
    }
    std::vector<tir::IterVar> red;
    std::map<char, size_t> red_of;
    for (const auto& [c, e] : extent) {
        if (outs.find(c) != std::string::npos) continue;
        red_of[c] = red.size();
        red.push_back(te::reduce_axis(e, std::string("r_") + c));
    }
    te::Tensor y = te::compute(
        out[0].shape,
        [&](const std::vector<Var>& i) {
            auto label = [&](char c) -> Expr {
                size_t p = outs.find(c);
                return p != std::string::npos ? Expr(i[p]) : Expr(red[red_of.at(c)].var);
            };
            Expr prod;
            for (size_t t = 0; t < terms.size(); ++t) {
                std::vector<Expr> idx;
                for (char c : terms[t]) idx.push_back(label(c));
                Expr v = in[t](idx);
                prod = t == 0 ? v : prod * v;
            }
            return red.empty() ? prod : te::sum(prod, red);
        },
        "T_einsum", red.empty() ? "broadcast" : "einsum");
    return {y};
}

}  // namespace tessera::topi::detail
