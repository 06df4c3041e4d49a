// Reductions over axes (reduce_*), argmax/argmin, cumsum, topk and
// nn.log_softmax, as te reductions with keepdims handled in the indexing.
#include <functional>

#include "engine/topi/compute/topi_detail.h"

namespace tessera::topi::detail {

using tir::Expr;
using tir::IterVar;
using tir::ReduceKind;
using tir::Var;

namespace {

// Input index of x for output index `i` (shape `out`) and reduce vars `rv` on `axes`.
std::vector<Expr> reduce_input_index(size_t rank, const std::vector<bool>& reduced, bool keep,
                                     const std::vector<Var>& i, const std::vector<IterVar>& rv) {
    std::vector<Expr> idx;
    size_t o = 0, r = 0;
    for (size_t d = 0; d < rank; ++d) {
        if (reduced[d]) {
            idx.push_back(rv[r++].var);
            if (keep) ++o;
        } else {
            idx.push_back(i[o++]);
        }
    }
    return idx;
}

struct ReduceSpec {
    std::vector<bool> reduced;
    bool keep = true;
    int64_t count = 1;  // reduced elements
};

ReduceSpec reduce_spec(const graph::Node& n, const te::Tensor& x) {
    ReduceSpec s;
    s.reduced.assign(x.shape().size(), false);
    s.keep = n.attr_int("keepdims", 1) != 0;
    for (int64_t a : n.attr_ints("axes")) {
        TS_USER_CHECK(a >= 0 && a < x.ndim()) << where(n) << ": axis " << a << " out of range";
        s.reduced[size_t(a)] = true;
        s.count *= x.shape()[size_t(a)];
    }
    return s;
}

// out[i] = combine over the reduced axes of pre(x[...]) (plus `extra(i)` read).
te::Tensor reduce_stage(const graph::Node& n, const te::Tensor& x, const ReduceSpec& s,
                        const std::vector<int64_t>& out_shape, ReduceKind kind,
                        const std::function<Expr(Expr, const std::vector<Var>&)>& pre,
                        const std::string& name) {
    return te::compute(
        out_shape,
        [&](const std::vector<Var>& i) {
            std::vector<IterVar> rv;
            for (size_t d = 0; d < s.reduced.size(); ++d)
                if (s.reduced[d]) rv.push_back(te::reduce_axis(x.shape()[d], "k" + std::to_string(d)));
            Expr v = pre(x(reduce_input_index(s.reduced.size(), s.reduced, s.keep, i, rv)), i);
            if (rv.empty()) return v;
            return tir::Reduce::make(kind, v, rv);
        },
        name, "reduce");
    (void)n;
}

te::Tensor map_stage(const std::vector<int64_t>& shape, const std::function<Expr(std::vector<Expr>)>& f,
                     const std::string& name, const std::string& tag = "elemwise") {
    return te::compute(shape, [&](const std::vector<Var>& i) { return f(as_exprs(i)); }, name, tag);
}

}  // namespace

Tensors reduce(const graph::Node& n, const Tensors& in, const Types& out) {
    check_arity(n, in, out, 1, 1);
    const te::Tensor& x = in[0];
    ReduceSpec s = reduce_spec(n, x);
    const auto& os = out[0].shape;
    auto id = [](Expr v, const std::vector<Var>&) { return v; };
    auto sq = [](Expr v, const std::vector<Var>&) { return v * v; };
    const std::string& op = n.op;
    if (op == "reduce_sum") return {reduce_stage(n, x, s, os, ReduceKind::Sum, id, "T_reduce_sum")};
    if (op == "reduce_max") return {reduce_stage(n, x, s, os, ReduceKind::Max, id, "T_reduce_max")};
    if (op == "reduce_min") return {reduce_stage(n, x, s, os, ReduceKind::Min, id, "T_reduce_min")};
    if (op == "reduce_prod") return {reduce_stage(n, x, s, os, ReduceKind::Prod, id, "T_reduce_prod")};
    if (op == "reduce_sum_square")
        return {reduce_stage(n, x, s, os, ReduceKind::Sum, sq, "T_reduce_sum_square")};
    if (op == "reduce_l1") {
        auto ab = [](Expr v, const std::vector<Var>&) {
            return v.dtype().is_float() ? tir::fabs(v) : tir::select(v < tir::make_zero(v.dtype()), -v, v);
        };
        return {reduce_stage(n, x, s, os, ReduceKind::Sum, ab, "T_reduce_l1")};
    }
    if (op == "reduce_mean" || op == "reduce_l2" || op == "reduce_log_sum") {
        te::Tensor sum = reduce_stage(n, x, s, os, ReduceKind::Sum, op == "reduce_l2" ? sq : id,
                                      "T_" + op + "_sum");
        int64_t count = s.count;
        return {map_stage(os,
                          [&](std::vector<Expr> i) {
                              Expr v = sum(i);
                              if (op == "reduce_mean") return v / tir::make_const(v.dtype(), double(count));
                              if (op == "reduce_l2") return tir::sqrt(v);
                              return tir::log(v);
                          },
                          "T_" + op)};
    }
    if (op == "reduce_log_sum_exp") {
        te::Tensor m = reduce_stage(n, x, s, os, ReduceKind::Max, id, "T_lse_max");
        te::Tensor e = reduce_stage(
            n, x, s, os, ReduceKind::Sum,
            [&](Expr v, const std::vector<Var>& i) { return tir::exp(v - m(as_exprs(i))); },
            "T_lse_sum");
        return {map_stage(os, [&](std::vector<Expr> i) { return tir::log(e(i)) + m(i); },
                          "T_reduce_log_sum_exp")};
    }
    TS_USER_FAIL() << where(n) << ": not a reduction";
}

Tensors arg_reduce(const graph::Node& n, const Tensors& in, const Types& out) {
    check_arity(n, in, out, 1, 1);
    const te::Tensor& x = in[0];
    int64_t axis = n.attr_int("axis", 0);
    ReduceSpec s;
    s.reduced.assign(x.shape().size(), false);
    s.reduced[size_t(axis)] = true;
    s.keep = n.attr_int("keepdims", 1) != 0;
    const auto& os = out[0].shape;
    bool is_max = n.op == "argmax";
    bool last = n.attr_int("select_last_index", 0) != 0;
    auto id = [](Expr v, const std::vector<Var>&) { return v; };
    te::Tensor m = reduce_stage(n, x, s, os, is_max ? ReduceKind::Max : ReduceKind::Min, id,
                                "T_" + n.op + "_value");
    int64_t extent = x.shape()[size_t(axis)];
    te::Tensor idx = te::compute(
        os,
        [&](const std::vector<Var>& i) {
            IterVar k = te::reduce_axis(extent, "k");
            std::vector<Expr> xi =
                reduce_input_index(s.reduced.size(), s.reduced, s.keep, i, {k});
            Expr hit = x(xi) == m(as_exprs(i));
            Expr kv = tir::cast(tir::DataType::int64(), k.var);
            if (last) return te::max(tir::select(hit, kv, Expr(int64_t(-1))), {k});
            return te::min(tir::select(hit, kv, Expr(extent)), {k});
        },
        "T_" + n.op, "reduce");
    return {idx};
}

Tensors cumsum(const graph::Node& n, const Tensors& in, const Types& out) {
    check_arity(n, in, out, 1, 1);
    const te::Tensor& x = in[0];
    int64_t axis = n.attr_int("axis", 0);
    bool excl = n.attr_int("exclusive", 0) != 0, rev = n.attr_int("reverse", 0) != 0;
    const bool prod = n.op == "cumprod";
    int64_t extent = x.shape()[size_t(axis)];
    te::Tensor y = te::compute(
        x.shape(),
        [&](const std::vector<Var>& i) {
            IterVar k = te::reduce_axis(extent, "k");
            std::vector<Expr> xi = as_exprs(i);
            xi[size_t(axis)] = k.var;
            Expr kv = k.var, iv = i[size_t(axis)];
            Expr in_range = rev ? (excl ? kv > iv : kv >= iv) : (excl ? kv < iv : kv <= iv);
            if (prod)
                return Expr(tir::Reduce::make(ReduceKind::Prod,
                                              tir::select(in_range, x(xi), tir::make_const(x.dtype(), 1)),
                                              {k}));
            return te::sum(tir::select(in_range, x(xi), tir::make_zero(x.dtype())), {k});
        },
        prod ? "T_cumprod" : "T_cumsum", "reduce");
    return {y};
}

Tensors topk(const graph::Node& n, const Tensors& in, const Types& out) {
    TS_USER_CHECK(in.size() == 1 && out.size() == 2) << where(n) << ": expects 1 input, 2 outputs";
    const te::Tensor& x = in[0];
    int64_t axis = n.attr_int("axis", 0);
    bool largest = n.attr_int("largest", 1) != 0;
    int64_t extent = x.shape()[size_t(axis)];
    // rank[i] = how many elements come before x[i] in the sorted order.
    te::Tensor rank = te::compute(
        x.shape(),
        [&](const std::vector<Var>& i) {
            IterVar j = te::reduce_axis(extent, "j");
            std::vector<Expr> xj = as_exprs(i);
            xj[size_t(axis)] = j.var;
            Expr a = x(xj), b = x(as_exprs(i));
            Expr before = (largest ? a > b : a < b) || (a == b && Expr(j.var) < Expr(i[size_t(axis)]));
            return te::sum(tir::select(before, Expr(int64_t(1)), Expr(int64_t(0))), {j});
        },
        "T_topk_rank", "reduce");
    auto pick = [&](bool values) {
        return te::compute(
            out[0].shape,
            [&](const std::vector<Var>& o) {
                IterVar j = te::reduce_axis(extent, "j");
                std::vector<Expr> xj = as_exprs(o);
                xj[size_t(axis)] = j.var;
                Expr hit = rank(xj) == tir::cast(tir::DataType::int64(), o[size_t(axis)]);
                Expr v = values ? x(xj) : tir::cast(tir::DataType::int64(), j.var);
                return te::sum(tir::select(hit, v, tir::make_zero(v.dtype())), {j});
            },
            values ? "T_topk_values" : "T_topk_indices", "reduce");
    };
    return {pick(true), pick(false)};
}

Tensors log_softmax(const graph::Node& n, const Tensors& in, const Types& out) {
    check_arity(n, in, out, 1, 1);
    const te::Tensor& x = in[0];
    int64_t axis = n.attr_int("axis", 0);
    ReduceSpec s;
    s.reduced.assign(x.shape().size(), false);
    s.reduced[size_t(axis)] = true;
    std::vector<int64_t> rs = x.shape();
    rs[size_t(axis)] = 1;
    auto id = [](Expr v, const std::vector<Var>&) { return v; };
    te::Tensor m = reduce_stage(n, x, s, rs, ReduceKind::Max, id, "T_log_softmax_max");
    auto r_index = [&](std::vector<Expr> i) {
        i[size_t(axis)] = Expr(int64_t(0));
        return i;
    };
    te::Tensor e = reduce_stage(
        n, x, s, rs, ReduceKind::Sum,
        [&](Expr v, const std::vector<Var>& i) { return tir::exp(v - m(as_exprs(i))); },
        "T_log_softmax_sum");
    return {map_stage(
        x.shape(),
        [&](std::vector<Expr> i) { return x(i) - m(r_index(i)) - tir::log(e(r_index(i))); },
        "T_log_softmax", "softmax")};
}

}  // namespace tessera::topi::detail
