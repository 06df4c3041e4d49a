// nn.attention: softmax(Q K^T * scale + mask) V in six stages whose
// intermediates are per query row, so a schedule can compute them all inside
// a block of rows (schedule_cpu_attention.h).
#include "engine/tir/op.h"
#include "engine/topi/compute/topi_detail.h"

namespace tessera::topi::detail {

using tir::Expr;
using tir::Var;

Tensors attention(const graph::Node& n, const Tensors& in, const Types& out) {
    check_arity(n, in, out, 3, 4);
    const te::Tensor& q = in[0];   // (.., Sq, D)
    const te::Tensor& kt = in[1];  // (.., D, Sk)
    const te::Tensor& v = in[2];   // (.., Sk, Dv)
    const std::vector<int64_t>& qs = q.shape();
    const size_t r = qs.size();
    TS_USER_CHECK(r >= 2 && kt.ndim() == r && v.ndim() == r)
        << where(n) << ": Q, K^T and V must have one rank of at least 2";
    const int64_t d = qs[r - 1], sk = kt.shape()[r - 1], dv = v.shape()[r - 1];
    std::vector<int64_t> scores_shape = qs;
    scores_shape[r - 1] = sk;
    std::vector<int64_t> row_shape(qs.begin(), qs.end() - 1);  // (.., Sq)
    std::vector<int64_t> out_shape = qs;
    out_shape[r - 1] = dv;
    TS_USER_CHECK(out[0].shape == out_shape)
        << where(n) << ": output type " << out[0].str() << " differs from Q's rows x V's columns";
    const Expr scale = tir::make_const(q.dtype(), n.attr_float("scale", 1.0));
    const bool scaled = n.attr_float("scale", 1.0) != 1.0;
    // where(mask, scores, mask_fill) instead of scores + mask.
    const bool fills = n.attrs.count("mask_fill") != 0;
    const Expr fill = tir::make_const(q.dtype(), n.attr_float("mask_fill", 0.0));

    // idx without its last entry, then `last` appended.
    auto with_last = [](std::vector<Expr> idx, Expr last) {
        idx.back() = std::move(last);
        return idx;
    };
    auto row_of = [](const std::vector<Var>& i) {
        return std::vector<Expr>(i.begin(), i.end() - 1);
    };
    // (.., i, j) -> the batch dims, then (x, y).
    auto batch_and = [&](const std::vector<Var>& i, Expr x, Expr y) {
        std::vector<Expr> idx(i.begin(), i.begin() + std::ptrdiff_t(r - 2));
        idx.push_back(std::move(x));
        idx.push_back(std::move(y));
        return idx;
    };

    tir::IterVar kd = te::reduce_axis(d, "k");
    te::Tensor qk = te::compute(
        scores_shape,
        [&](const std::vector<Var>& i) {
            return te::sum(q(batch_and(i, i[r - 2], kd.var)) * kt(batch_and(i, kd.var, i[r - 1])),
                           {kd});
        },
        "T_attn_qk", "matmul");
    // The logits: scaled and masked scores, read where they are needed.
    auto logit = [&](const std::vector<Expr>& idx) {
        Expr x = qk(idx);
        if (scaled) x = x * scale;
        if (in.size() == 4) {
            const Expr m = in[3](broadcast_index(idx, scores_shape, in[3].shape()));
            x = fills ? tir::select(m, x, fill) : x + m;
        }
        return x;
    };
    tir::IterVar kmax = te::reduce_axis(sk, "j");
    te::Tensor rowmax = te::compute(
        row_shape,
        [&](const std::vector<Var>& i) {
            std::vector<Expr> idx = as_exprs(i);
            idx.push_back(kmax.var);
            return te::max(logit(idx), {kmax});
        },
        "T_attn_max", "reduce");
    te::Tensor e = te::compute(
        scores_shape,
        [&](const std::vector<Var>& i) { return tir::exp(logit(as_exprs(i)) - rowmax(row_of(i))); },
        "T_attn_exp", "broadcast");
    tir::IterVar ksum = te::reduce_axis(sk, "j");
    te::Tensor rowsum = te::compute(
        row_shape,
        [&](const std::vector<Var>& i) {
            std::vector<Expr> idx = as_exprs(i);
            idx.push_back(ksum.var);
            return te::sum(e(idx), {ksum});
        },
        "T_attn_sum", "reduce");
    tir::IterVar kv = te::reduce_axis(sk, "j");
    te::Tensor pv = te::compute(
        out_shape,
        [&](const std::vector<Var>& i) {
            return te::sum(e(with_last(as_exprs(i), kv.var)) * v(batch_and(i, kv.var, i[r - 1])),
                           {kv});
        },
        "T_attn_pv", "matmul");
    te::Tensor y = te::compute(
        out_shape, [&](const std::vector<Var>& i) { return pv(as_exprs(i)) / rowsum(row_of(i)); },
        "T_attention", "attention");
    return {y};
}

}  // namespace tessera::topi::detail
