// Normalizations: inference batch norm, instance norm and layer norm (with
// optional mean / inverse-stddev outputs), as mean and variance reductions.
#include "engine/topi/compute/topi_detail.h"

namespace tessera::topi::detail {

using tir::Expr;
using tir::IterVar;
using tir::Var;

namespace {

// Mean and variance of x over dims [first, rank) (per the other dims), kept
// with extent 1: returns {mean, var}.
std::pair<te::Tensor, te::Tensor> moments(const te::Tensor& x, size_t first,
                                          const std::vector<size_t>& skip_dims,
                                          const std::string& prefix) {
    const auto& xs = x.shape();
    std::vector<bool> red(xs.size(), false);
    for (size_t d = first; d < xs.size(); ++d) red[d] = true;
    for (size_t d : skip_dims) red[d] = false;
    std::vector<int64_t> ms = xs;
    int64_t count = 1;
    for (size_t d = 0; d < xs.size(); ++d)
        if (red[d]) {
            ms[d] = 1;
            count *= xs[d];
        }
    auto over = [&](const std::vector<Var>& i, std::vector<IterVar>& rv) {
        std::vector<Expr> idx = as_exprs(i);
        for (size_t d = 0; d < xs.size(); ++d)
            if (red[d]) {
                rv.push_back(te::reduce_axis(xs[d], "k" + std::to_string(d)));
                idx[d] = rv.back().var;
            }
        return idx;
    };
    Expr inv = tir::make_const(x.dtype(), 1.0 / double(count));
    te::Tensor sum = te::compute(
        ms,
        [&](const std::vector<Var>& i) {
            std::vector<IterVar> rv;
            std::vector<Expr> idx = over(i, rv);
            return te::sum(x(idx), rv);
        },
        prefix + "_sum", "reduce");
    te::Tensor mean = te::compute(
        ms, [&](const std::vector<Var>& i) { return sum(as_exprs(i)) * inv; }, prefix + "_mean",
        "elemwise");
    te::Tensor sq = te::compute(
        ms,
        [&](const std::vector<Var>& i) {
            std::vector<IterVar> rv;
            std::vector<Expr> idx = over(i, rv);
            Expr d = x(idx) - mean(as_exprs(i));
            return te::sum(d * d, rv);
        },
        prefix + "_sqsum", "reduce");
    te::Tensor var = te::compute(
        ms, [&](const std::vector<Var>& i) { return sq(as_exprs(i)) * inv; }, prefix + "_var",
        "elemwise");
    return {mean, var};
}

// Index into a keep-dims reduced tensor of shape `ms`.
std::vector<Expr> reduced_index(const std::vector<Var>& i, const std::vector<int64_t>& xs,
                                const std::vector<int64_t>& ms) {
    std::vector<Expr> r = as_exprs(i);
    for (size_t d = 0; d < r.size(); ++d)
        if (ms[d] == 1 && xs[d] != 1) r[d] = Expr(int64_t(0));
    return r;
}

}  // namespace

Tensors batch_norm(const graph::Node& n, const Tensors& in, const Types& out) {
    check_arity(n, in, out, 5, 5);
    const te::Tensor& x = in[0];
    Expr eps = tir::make_const(x.dtype(), n.attr_float("epsilon", 1e-5));
    te::Tensor y = te::compute(
        x.shape(),
        [&](const std::vector<Var>& i) {
            Expr c = i[1];
            return (x(as_exprs(i)) - in[3](c)) * (in[1](c) / tir::sqrt(in[4](c) + eps)) + in[2](c);
        },
        "T_batch_norm", "broadcast");
    return {y};
}

Tensors instance_norm(const graph::Node& n, const Tensors& in, const Types& out) {
    check_arity(n, in, out, 3, 3);
    const te::Tensor& x = in[0];
    Expr eps = tir::make_const(x.dtype(), n.attr_float("epsilon", 1e-5));
    // Named tensors, not a structured binding: the lambdas capture them (clang 14 cannot).
    const std::pair<te::Tensor, te::Tensor> moments_x = moments(x, 2, {}, "T_instance_norm");
    const te::Tensor& mean = moments_x.first;
    const te::Tensor& var = moments_x.second;
    te::Tensor y = te::compute(
        x.shape(),
        [&](const std::vector<Var>& i) {
            auto r = reduced_index(i, x.shape(), mean.shape());
            return (x(as_exprs(i)) - mean(r)) / tir::sqrt(var(r) + eps) * in[1](i[1]) + in[2](i[1]);
        },
        "T_instance_norm", "broadcast");
    return {y};
}

Tensors layer_norm(const graph::Node& n, const Tensors& in, const Types& out) {
    TS_USER_CHECK((in.size() == 2 || in.size() == 3) && (out.size() == 1 || out.size() == 3))
        << where(n) << ": expects 2 or 3 inputs and 1 or 3 outputs";
    const te::Tensor& x = in[0];
    const auto& xs = x.shape();
    // A negative axis counts from the end (the graph's shape inference
    // accepts it: a node inserted in the studio crashed here with -1).
    int64_t a = n.attr_int("axis", 0);
    if (a < 0) a += int64_t(xs.size());
    TS_USER_CHECK(a >= 0 && a < int64_t(xs.size()))
        << where(n) << ": axis " << n.attr_int("axis", 0) << " is out of range for rank " << xs.size();
    const size_t axis = size_t(a);
    Expr eps = tir::make_const(x.dtype(), n.attr_float("epsilon", 1e-5));
    const std::pair<te::Tensor, te::Tensor> moments_x = moments(x, axis, {}, "T_layer_norm");
    const te::Tensor& mean = moments_x.first;
    const te::Tensor& var = moments_x.second;
    std::vector<int64_t> norm(xs.begin() + long(axis), xs.end());
    te::Tensor inv = te::compute(
        mean.shape(),
        [&](const std::vector<Var>& i) {
            return tir::make_const(x.dtype(), 1.0) / tir::sqrt(var(as_exprs(i)) + eps);
        },
        "T_layer_norm_invstd", "elemwise");
    te::Tensor y = te::compute(
        xs,
        [&](const std::vector<Var>& i) {
            auto r = reduced_index(i, xs, mean.shape());
            std::vector<Expr> inner(i.begin() + long(axis), i.end());
            Expr v = (x(as_exprs(i)) - mean(r)) * inv(r) *
                     in[1](broadcast_index(inner, norm, in[1].shape()));
            if (in.size() == 3) v = v + in[2](broadcast_index(inner, norm, in[2].shape()));
            return v;
        },
        "T_layer_norm", "broadcast");
    if (out.size() == 1) return {y};
    return {y, mean, inv};
}

}  // namespace tessera::topi::detail
