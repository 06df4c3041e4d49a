// Elementwise ops: add, subtract, multiply, divide with numpy broadcasting to
// the output shape, and nn.relu = max(x, 0).
#include "engine/topi/topi_detail.h"

namespace tessera::topi::detail {

using tir::Expr;
using tir::Var;

Tensors binary(const graph::Node& n, const Tensors& in, const Types& out) {
    check_arity(n, in, out, 2, 2);
    const te::Tensor& a = in[0];
    const te::Tensor& b = in[1];
    TS_USER_CHECK(a.dtype() == b.dtype()) << where(n) << ": operand types differ ("
                                          << a.dtype().str() << " vs " << b.dtype().str() << ")";
    const std::vector<int64_t>& os = out[0].shape;
    for (const te::Tensor& t : in) {
        const auto& s = t.shape();
        bool fits = s.size() <= os.size();
        for (size_t j = 0; fits && j < s.size(); ++j)
            fits = s[j] == 1 || s[j] == os[os.size() - s.size() + j];
        TS_USER_CHECK(fits) << where(n) << ": operand '" << t.name() << "' of shape "
                            << graph::TensorType{{}, s}.str() << " does not broadcast to "
                            << out[0].str();
    }
    Expr (*fn)(Expr, Expr) = nullptr;
    if (n.op == "add")
        fn = [](Expr x, Expr y) { return x + y; };
    else if (n.op == "subtract")
        fn = [](Expr x, Expr y) { return x - y; };
    else if (n.op == "multiply")
        fn = [](Expr x, Expr y) { return x * y; };
    else if (n.op == "divide")
        fn = [](Expr x, Expr y) { return x / y; };
    TS_USER_CHECK(fn) << where(n) << ": not an elementwise binary op";

    bool same = a.shape() == os && b.shape() == os;
    te::Tensor c = te::compute(
        os,
        [&](const std::vector<Var>& i) {
            std::vector<Expr> idx = as_exprs(i);
            return fn(a(broadcast_index(idx, os, a.shape())),
                      b(broadcast_index(idx, os, b.shape())));
        },
        "T_" + n.op, same ? "elemwise" : "broadcast");
    return {c};
}

Tensors relu(const graph::Node& n, const Tensors& in, const Types& out) {
    check_arity(n, in, out, 1, 1);
    const te::Tensor& x = in[0];
    TS_USER_CHECK(out[0].shape == x.shape())
        << where(n) << ": output type " << out[0].str() << " differs from the input's shape";
    te::Tensor y = te::compute(
        x.shape(),
        [&](const std::vector<Var>& i) {
            return tir::max(x(as_exprs(i)), tir::make_zero(x.dtype()));
        },
        "T_relu", "elemwise");
    return {y};
}

}  // namespace tessera::topi::detail
