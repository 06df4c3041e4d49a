// nn.matmul (numpy semantics: 1-D operands, batched with broadcast leading
// dims) and nn.gemm (ONNX Gemm: alpha * op(A) op(B) + beta * C).
#include <functional>

#include "engine/topi/compute/topi_detail.h"

namespace tessera::topi::detail {

using tir::Expr;
using tir::Var;

te::Tensor matrix_product(const graph::Node& n, const te::Tensor& a, const te::Tensor& b,
                          const std::vector<int64_t>& os,
                          const std::function<Expr(Expr, Expr)>& product) {
    const auto& as = a.shape();
    const auto& bs = b.shape();
    TS_USER_CHECK(as.size() >= 1 && bs.size() >= 1)
        << where(n) << ": matmul operands must have rank >= 1";
    bool a2 = as.size() >= 2, b2 = bs.size() >= 2;
    int64_t K = as.back();
    int64_t Kb = b2 ? bs[bs.size() - 2] : bs[0];
    TS_USER_CHECK(K == Kb) << where(n) << ": inner dimensions differ (" << K << " vs " << Kb << ")";
    size_t nbatch_out = os.size() - (a2 ? 1 : 0) - (b2 ? 1 : 0);
    TS_USER_CHECK(os.size() >= size_t((a2 ? 1 : 0) + (b2 ? 1 : 0)))
        << where(n) << ": output type has too small a rank";
    std::vector<int64_t> batch_out(os.begin(), os.begin() + nbatch_out);
    std::vector<int64_t> batch_a(as.begin(), as.end() - (a2 ? 2 : 1));
    std::vector<int64_t> batch_b(bs.begin(), bs.end() - (b2 ? 2 : 1));
    TS_USER_CHECK(batch_a.size() <= nbatch_out && batch_b.size() <= nbatch_out)
        << where(n) << ": the output type does not fit the operands";

    tir::IterVar k = te::reduce_axis(K, "k");
    return te::compute(
        os,
        [&](const std::vector<Var>& i) {
            std::vector<Expr> idx = as_exprs(i);
            std::vector<Expr> bidx(idx.begin(), idx.begin() + nbatch_out);
            std::vector<Expr> ia = broadcast_index(bidx, batch_out, batch_a);
            std::vector<Expr> ib = broadcast_index(bidx, batch_out, batch_b);
            size_t p = nbatch_out;
            if (a2) ia.push_back(idx[p++]);
            ia.push_back(k.var);
            ib.push_back(k.var);
            if (b2) ib.push_back(idx[p++]);
            return te::sum(product(a(ia), b(ib)), {k});
        },
        "T_matmul", "matmul");
}

Tensors matmul(const graph::Node& n, const Tensors& in, const Types& out) {
    check_arity(n, in, out, 2, 2);
    return {matrix_product(n, in[0], in[1], out[0].shape, [](Expr x, Expr y) { return x * y; })};
}

Tensors gemm(const graph::Node& n, const Tensors& in, const Types& out) {
    check_arity(n, in, out, 2, 3);
    const te::Tensor& a = in[0];
    const te::Tensor& b = in[1];
    TS_USER_CHECK(a.ndim() == 2 && b.ndim() == 2)
        << where(n) << ": Gemm operands must be 2-D (got ranks " << a.ndim() << ", " << b.ndim()
        << ")";
    double alpha = n.attr_float("alpha", 1.0);
    double beta = n.attr_float("beta", 1.0);
    bool ta = n.attr_int("transA", 0) != 0;
    bool tb = n.attr_int("transB", 0) != 0;
    int64_t M = ta ? a.shape()[1] : a.shape()[0];
    int64_t K = ta ? a.shape()[0] : a.shape()[1];
    int64_t Kb = tb ? b.shape()[1] : b.shape()[0];
    int64_t N = tb ? b.shape()[0] : b.shape()[1];
    TS_USER_CHECK(K == Kb) << where(n) << ": inner dimensions differ (" << K << " vs " << Kb << ")";
    std::vector<int64_t> os = {M, N};
    TS_USER_CHECK(out[0].shape == os)
        << where(n) << ": output type " << out[0].str() << " is not (" << M << ", " << N << ")";

    tir::IterVar k = te::reduce_axis(K, "k");
    te::Tensor mm = te::compute(
        os,
        [&](const std::vector<Var>& i) {
            Expr av = ta ? a(k.var, i[0]) : a(i[0], k.var);
            Expr bv = tb ? b(i[1], k.var) : b(k.var, i[1]);
            return te::sum(av * bv, {k});
        },
        "T_matmul", "matmul");

    bool has_c = in.size() == 3 && beta != 0.0;
    if (!has_c && alpha == 1.0) return {mm};
    if (has_c) {
        const auto& cs = in[2].shape();
        bool fits = cs.size() <= 2;
        for (size_t j = 0; fits && j < cs.size(); ++j)
            fits = cs[j] == 1 || cs[j] == os[2 - cs.size() + j];
        TS_USER_CHECK(fits) << where(n) << ": C of shape " << graph::TensorType{{}, cs}.str()
                            << " does not broadcast to (" << M << ", " << N << ")";
    }
    tir::DataType dt = mm.dtype();
    te::Tensor y = te::compute(
        os,
        [&](const std::vector<Var>& i) {
            Expr v = mm(i[0], i[1]);
            if (alpha != 1.0) v = tir::make_const(dt, alpha) * v;
            if (has_c) {
                Expr c = in[2](broadcast_index(as_exprs(i), os, in[2].shape()));
                if (beta != 1.0) c = tir::make_const(dt, beta) * c;
                v = v + c;
            }
            return v;
        },
        "T_gemm", "broadcast");
    return {y};
}

}  // namespace tessera::topi::detail
