// nn.softmax, numerically stable: max stage, exp stage, exp-sum stage,
// normalize stage. With coerce=1 it reduces over dims [axis, ndim) (ONNX
// Softmax before opset 13).
#include "engine/topi/compute/topi_detail.h"

namespace tessera::topi::detail {

using tir::Expr;
using tir::Var;

Tensors softmax(const graph::Node& n, const Tensors& in, const Types& out) {
    check_arity(n, in, out, 1, 1);
    const te::Tensor& x = in[0];
    const std::vector<int64_t>& xs = x.shape();
    int64_t rank = int64_t(xs.size());
    TS_USER_CHECK(rank >= 1) << where(n) << ": softmax of a scalar";
    TS_USER_CHECK(x.dtype().is_float()) << where(n) << ": softmax needs a float input";
    TS_USER_CHECK(out[0].shape == xs)
        << where(n) << ": output type " << out[0].str() << " differs from the input's shape";
    int64_t axis = n.attr_int("axis", rank - 1);
    if (axis < 0) axis += rank;
    TS_USER_CHECK(axis >= 0 && axis < rank) << where(n) << ": axis " << n.attr_int("axis", rank - 1)
                                            << " out of range for rank " << rank;
    bool coerce = n.attr_int("coerce", 0) != 0;
    int64_t last = coerce ? rank : axis + 1;  // reduced dims: [axis, last)

    // Reduced tensors keep the reduced dims with extent 1.
    std::vector<int64_t> rshape = xs;
    for (int64_t d = axis; d < last; ++d) rshape[d] = 1;
    auto reduced_index = [&](const std::vector<Expr>& idx) {
        std::vector<Expr> r = idx;
        for (int64_t d = axis; d < last; ++d) r[d] = Expr(int64_t(0));
        return r;
    };
    auto make_axes = [&](const std::string& prefix) {
        std::vector<tir::IterVar> ax;
        for (int64_t d = axis; d < last; ++d)
            ax.push_back(
                te::reduce_axis(xs[d], std::string(prefix).append(std::to_string(d - axis))));
        return ax;
    };
    auto over_axes = [&](const std::vector<Var>& i, const std::vector<tir::IterVar>& ax) {
        std::vector<Expr> idx = as_exprs(i);
        for (int64_t d = axis; d < last; ++d) idx[d] = ax[d - axis].var;
        return idx;
    };

    std::vector<tir::IterVar> kmax = make_axes("k");
    te::Tensor maxelem = te::compute(
        rshape, [&](const std::vector<Var>& i) { return te::max(x(over_axes(i, kmax)), kmax); },
        "T_softmax_maxelem", "reduce");
    te::Tensor e = te::compute(
        xs,
        [&](const std::vector<Var>& i) {
            std::vector<Expr> idx = as_exprs(i);
            return tir::exp(x(idx) - maxelem(reduced_index(idx)));
        },
        "T_softmax_exp", "broadcast");
    std::vector<tir::IterVar> ksum = make_axes("k");
    te::Tensor expsum = te::compute(
        rshape, [&](const std::vector<Var>& i) { return te::sum(e(over_axes(i, ksum)), ksum); },
        "T_softmax_expsum", "reduce");
    te::Tensor y = te::compute(
        xs,
        [&](const std::vector<Var>& i) {
            std::vector<Expr> idx = as_exprs(i);
            return e(idx) / expsum(reduced_index(idx));
        },
        "T_softmax_norm", "softmax");
    return {y};
}

}  // namespace tessera::topi::detail
