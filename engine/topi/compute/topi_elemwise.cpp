// Elementwise binary ops with numpy broadcasting to the output shape
// (arithmetic, power, min/max, mod, prelu, comparisons, logic), where, and
// nn.relu = max(x, 0).
#include <map>

#include "engine/topi/compute/topi_detail.h"

namespace tessera::topi::detail {

using tir::Expr;
using tir::Var;

namespace {

using BinaryFn = Expr (*)(const graph::Node&, Expr, Expr);

Expr power(Expr x, Expr y) {
    if (x.dtype().is_float()) {
        if (y.dtype() != x.dtype()) y = tir::cast(x.dtype(), y);
        return tir::pow(x, y);
    }
    tir::DataType f = tir::DataType::float64();
    return tir::cast(x.dtype(), tir::pow(tir::cast(f, x), tir::cast(f, y)));
}

Expr mod(const graph::Node& n, Expr a, Expr b) {
    if (a.dtype().is_float()) {
        if (n.attr_int("fmod", 0) != 0) {
            // C fmod: the remainder has the sign of a.
            Expr q = a / b;
            Expr t = tir::select(q < tir::make_zero(q.dtype()), tir::ceil(q), tir::floor(q));
            return a - t * b;
        }
        // fmod = 0 on floats (the newest ONNX allows it): numpy's mod, the
        // remainder has the sign of b. C fmod's remainder (exact, also for
        // an infinite b) moved by b when the signs differ: mod(-3, inf) = inf,
        // mod(1, -inf) = -inf; an infinite a or a zero b give NaN.
        Expr zero = tir::make_zero(a.dtype());
        Expr r = a % b;
        return tir::select(r != zero && (r < zero) != (b < zero), r + b, r);
    }
    if (n.attr_int("fmod", 0) != 0) return a % b;
    return tir::floormod(a, b);
}

const std::map<std::string, BinaryFn>& binary_table() {
    static const std::map<std::string, BinaryFn> t = {
        {"add", [](const graph::Node&, Expr a, Expr b) { return a + b; }},
        {"subtract", [](const graph::Node&, Expr a, Expr b) { return a - b; }},
        {"multiply", [](const graph::Node&, Expr a, Expr b) { return a * b; }},
        {"divide", [](const graph::Node&, Expr a, Expr b) { return a / b; }},
        {"power", [](const graph::Node&, Expr a, Expr b) { return power(a, b); }},
        {"maximum", [](const graph::Node&, Expr a, Expr b) { return tir::max(a, b); }},
        {"minimum", [](const graph::Node&, Expr a, Expr b) { return tir::min(a, b); }},
        {"mod", mod},
        {"nn.prelu",
         [](const graph::Node&, Expr x, Expr s) {
             return tir::select(x < tir::make_zero(x.dtype()), x * s, x);
         }},
        {"equal", [](const graph::Node&, Expr a, Expr b) { return a == b; }},
        {"less", [](const graph::Node&, Expr a, Expr b) { return a < b; }},
        {"greater", [](const graph::Node&, Expr a, Expr b) { return a > b; }},
        {"less_equal", [](const graph::Node&, Expr a, Expr b) { return a <= b; }},
        {"greater_equal", [](const graph::Node&, Expr a, Expr b) { return a >= b; }},
        {"logical_and", [](const graph::Node&, Expr a, Expr b) { return a && b; }},
        {"logical_or", [](const graph::Node&, Expr a, Expr b) { return a || b; }},
        {"logical_xor", [](const graph::Node&, Expr a, Expr b) { return a != b; }},
    };
    return t;
}

void check_broadcast(const graph::Node& n, const Tensors& in, const graph::TensorType& out) {
    const std::vector<int64_t>& os = out.shape;
    for (const te::Tensor& t : in) {
        const auto& s = t.shape();
        bool fits = s.size() <= os.size();
        for (size_t j = 0; fits && j < s.size(); ++j)
            fits = s[j] == 1 || s[j] == os[os.size() - s.size() + j];
        TS_USER_CHECK(fits) << where(n) << ": operand '" << t.name() << "' of shape "
                            << graph::TensorType{{}, s}.str() << " does not broadcast to "
                            << out.str();
    }
}

}  // namespace

bool is_binary_op(const std::string& op) { return binary_table().count(op) != 0; }

Tensors binary(const graph::Node& n, const Tensors& in, const Types& out) {
    check_arity(n, in, out, 2, 2);
    const te::Tensor& a = in[0];
    const te::Tensor& b = in[1];
    TS_USER_CHECK(a.dtype() == b.dtype() || n.op == "power")
        << where(n) << ": operand types differ (" << a.dtype().str() << " vs " << b.dtype().str()
        << ")";
    check_broadcast(n, in, out[0]);
    auto it = binary_table().find(n.op);
    TS_USER_CHECK(it != binary_table().end()) << where(n) << ": not an elementwise binary op";
    BinaryFn fn = it->second;
    const std::vector<int64_t>& os = out[0].shape;
    bool same = a.shape() == os && b.shape() == os;
    te::Tensor c = te::compute(
        os,
        [&](const std::vector<Var>& i) {
            std::vector<Expr> idx = as_exprs(i);
            return fn(n, a(broadcast_index(idx, os, a.shape())),
                      b(broadcast_index(idx, os, b.shape())));
        },
        "T_" + n.op, same ? "elemwise" : "broadcast");
    return {c};
}

Tensors where_op(const graph::Node& n, const Tensors& in, const Types& out) {
    check_arity(n, in, out, 3, 3);
    check_broadcast(n, in, out[0]);
    const std::vector<int64_t>& os = out[0].shape;
    te::Tensor c = te::compute(
        os,
        [&](const std::vector<Var>& i) {
            std::vector<Expr> idx = as_exprs(i);
            return tir::select(in[0](broadcast_index(idx, os, in[0].shape())),
                               in[1](broadcast_index(idx, os, in[1].shape())),
                               in[2](broadcast_index(idx, os, in[2].shape())));
        },
        "T_where", "broadcast");
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
