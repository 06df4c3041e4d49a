// Elementwise unary computes: math functions, activations, clip, cast and
// the bool predicates (logical_not, isnan, isinf).
#include <cmath>
#include <map>

#include "engine/topi/compute/topi_detail.h"

namespace tessera::topi::detail {

using tir::Expr;
using tir::Var;

namespace {

using UnaryFn = Expr (*)(const graph::Node&, Expr);

Expr c(const Expr& like, double v) { return tir::make_const(like.dtype(), v); }

Expr abs_of(Expr x) {
    if (x.dtype().is_float()) return tir::fabs(x);
    return tir::select(x < c(x, 0), -x, x);
}

Expr cast_to(tir::DataType t, Expr x) {
    if (t.is_bool()) return x != c(x, 0);
    if (x.dtype().is_bool() && !t.is_bool())
        return tir::select(x, tir::make_const(t, 1), tir::make_const(t, 0));
    return tir::cast(t, x);
}

const std::map<std::string, UnaryFn>& unary_table() {
    static const std::map<std::string, UnaryFn> t = {
        {"negative", [](const graph::Node&, Expr x) { return -x; }},
        {"abs", [](const graph::Node&, Expr x) { return abs_of(x); }},
        {"sign",
         [](const graph::Node&, Expr x) {
             return tir::select(x > c(x, 0), c(x, 1), tir::select(x < c(x, 0), c(x, -1), c(x, 0)));
         }},
        {"floor", [](const graph::Node&, Expr x) { return tir::floor(x); }},
        {"ceil", [](const graph::Node&, Expr x) { return tir::ceil(x); }},
        {"round", [](const graph::Node&, Expr x) { return tir::round(x); }},
        {"exp", [](const graph::Node&, Expr x) { return tir::exp(x); }},
        {"log", [](const graph::Node&, Expr x) { return tir::log(x); }},
        {"sqrt", [](const graph::Node&, Expr x) { return tir::sqrt(x); }},
        {"reciprocal", [](const graph::Node&, Expr x) { return c(x, 1) / x; }},
        {"sin", [](const graph::Node&, Expr x) { return tir::Call::make(x.dtype(), "sin", {x}); }},
        {"cos", [](const graph::Node&, Expr x) { return tir::Call::make(x.dtype(), "cos", {x}); }},
        {"sigmoid", [](const graph::Node&, Expr x) { return tir::sigmoid(x); }},
        {"tanh", [](const graph::Node&, Expr x) { return tir::tanh(x); }},
        {"erf", [](const graph::Node&, Expr x) { return tir::erf(x); }},
        {"nn.softplus",
         [](const graph::Node&, Expr x) {
             // max(x, 0) + log(1 + e^-|x|) does not overflow for large x.
             return tir::max(x, c(x, 0)) + tir::log(c(x, 1) + tir::exp(-tir::fabs(x)));
         }},
        {"nn.softsign", [](const graph::Node&, Expr x) { return x / (c(x, 1) + tir::fabs(x)); }},
        {"nn.hard_swish",
         [](const graph::Node&, Expr x) {
             return x * tir::max(c(x, 0), tir::min(c(x, 1), x * c(x, 1.0 / 6) + c(x, 0.5)));
         }},
        {"nn.leaky_relu",
         [](const graph::Node& n, Expr x) {
             return tir::select(x < c(x, 0), x * c(x, n.attr_float("alpha", 0.01)), x);
         }},
        {"nn.thresholded_relu",
         [](const graph::Node& n, Expr x) {
             return tir::select(x > c(x, n.attr_float("alpha", 1.0)), x, c(x, 0));
         }},
        {"nn.elu",
         [](const graph::Node& n, Expr x) {
             Expr a = c(x, n.attr_float("alpha", 1.0));
             return tir::select(x < c(x, 0), a * (tir::exp(x) - c(x, 1)), x);
         }},
        {"nn.celu",
         [](const graph::Node& n, Expr x) {
             double alpha = n.attr_float("alpha", 1.0);
             return tir::max(c(x, 0), x) +
                    tir::min(c(x, 0), c(x, alpha) * (tir::exp(x / c(x, alpha)) - c(x, 1)));
         }},
        {"nn.selu",
         [](const graph::Node& n, Expr x) {
             Expr a = c(x, n.attr_float("alpha", 1.67326319217681884765625));
             Expr g = c(x, n.attr_float("gamma", 1.05070102214813232421875));
             return g * tir::select(x <= c(x, 0), a * (tir::exp(x) - c(x, 1)), x);
         }},
        {"nn.hard_sigmoid",
         [](const graph::Node& n, Expr x) {
             Expr y = x * c(x, n.attr_float("alpha", 0.2)) + c(x, n.attr_float("beta", 0.5));
             return tir::max(c(x, 0), tir::min(c(x, 1), y));
         }},
        {"nn.gelu",
         [](const graph::Node& n, Expr x) {
             if (n.attr_str("approximate", "none") == "tanh") {
                 Expr inner = c(x, std::sqrt(2.0 / M_PI)) * (x + c(x, 0.044715) * x * x * x);
                 return c(x, 0.5) * x * (c(x, 1) + tir::tanh(inner));
             }
             return c(x, 0.5) * x * (c(x, 1) + tir::erf(x * c(x, M_SQRT1_2)));
         }},
        {"clip",
         [](const graph::Node& n, Expr x) {
             if (n.attrs.count("a_min")) x = tir::max(x, c(x, n.attr_float("a_min", 0)));
             if (n.attrs.count("a_max")) x = tir::min(x, c(x, n.attr_float("a_max", 0)));
             return x;
         }},
        {"logical_not", [](const graph::Node&, Expr x) { return !x; }},
        {"isnan", [](const graph::Node&, Expr x) { return x != x; }},
        {"isinf",
         [](const graph::Node& n, Expr x) {
             Expr pos = x == c(x, INFINITY), neg = x == c(x, -INFINITY);
             bool p = n.attr_int("detect_positive", 1) != 0,
                  q = n.attr_int("detect_negative", 1) != 0;
             if (p && q) return pos || neg;
             if (p) return pos;
             if (q) return neg;
             return x != x && x == x;  // always false
         }},
    };
    return t;
}

}  // namespace

bool is_unary_op(const std::string& op) {
    return unary_table().count(op) != 0 || op == "cast" || op == "bitcast";
}

Tensors unary(const graph::Node& n, const Tensors& in, const Types& out) {
    check_arity(n, in, out, 1, 1);
    const te::Tensor& x = in[0];
    TS_USER_CHECK(out[0].shape == x.shape())
        << where(n) << ": output type " << out[0].str() << " differs from the input's shape";
    tir::DataType ot = to_tir(out[0].dtype);
    std::function<Expr(Expr)> fn;
    if (n.op == "cast") {
        fn = [ot](Expr v) { return v.dtype() == ot ? v : cast_to(ot, v); };
    } else if (n.op == "bitcast") {
        fn = [ot](Expr v) { return v.dtype() == ot ? v : tir::reinterpret(ot, v); };
    } else {
        auto it = unary_table().find(n.op);
        TS_USER_CHECK(it != unary_table().end()) << where(n) << ": not a unary op";
        UnaryFn f = it->second;
        fn = [f, &n](Expr v) { return f(n, v); };
    }
    te::Tensor y = te::compute(
        x.shape(), [&](const std::vector<Var>& i) { return fn(x(as_exprs(i))); }, "T_" + n.op,
        "elemwise");
    return {y};
}

}  // namespace tessera::topi::detail
