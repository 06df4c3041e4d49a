// reshape: out[i...] = in[decompose(linear(i...))] over row-major linear
// indices; the output shape is the output value's type.
#include "engine/topi/compute/topi_detail.h"

namespace tessera::topi::detail {

using tir::Expr;
using tir::Var;

Tensors reshape(const graph::Node& n, const Tensors& in, const Types& out) {
    check_arity(n, in, out, 1, 1);
    const te::Tensor& x = in[0];
    const std::vector<int64_t>& xs = x.shape();
    const std::vector<int64_t>& os = out[0].shape;
    int64_t in_count = 1, out_count = 1;
    for (int64_t d : xs) in_count *= d;
    for (int64_t d : os) out_count *= d;
    TS_USER_CHECK(in_count == out_count)
        << where(n) << ": cannot reshape " << graph::TensorType{{}, xs}.str() << " (" << in_count
        << " elements) to " << out[0].str() << " (" << out_count << " elements)";

    te::Tensor y = te::compute(
        os,
        [&](const std::vector<Var>& i) {
            Expr linear = Expr(int64_t(0));
            for (size_t d = 0; d < os.size(); ++d) {
                if (os[d] == 1) continue;
                linear = tir::is_const_int(linear, 0) ? Expr(i[d]) : linear * os[d] + i[d];
            }
            std::vector<Expr> idx(xs.size());
            size_t outer = 0;  // the outermost non-unit dim needs no floormod
            while (outer + 1 < xs.size() && xs[outer] == 1) ++outer;
            int64_t stride = 1;
            for (size_t d = xs.size(); d-- > 0;) {
                if (xs[d] == 1) {
                    idx[d] = Expr(int64_t(0));
                    continue;
                }
                Expr q = stride == 1 ? linear : tir::floordiv(linear, stride);
                idx[d] = d == outer ? q : tir::floormod(q, xs[d]);
                stride *= xs[d];
            }
            return x(idx);
        },
        "T_reshape", "injective");
    return {y};
}

}  // namespace tessera::topi::detail
