// Elementwise math graph ops beyond the skeleton: unary functions and
// activations, broadcasting binary arithmetic, comparisons and logic, where, cast.
#include "engine/core/error.h"
#include "engine/graph/op_table.h"

namespace tessera::graph::detail {

namespace {

using Types = std::vector<TensorType>;

Types infer_unary(const Node& n, const Types& in) {
    expect_arity(n, in, 1, 1);
    return {in[0]};
}

Types infer_unary_float(const Node& n, const Types& in) {
    expect_arity(n, in, 1, 1);
    TS_USER_CHECK(in[0].dtype == DType::Float32 || in[0].dtype == DType::Float64)
        << where(n) << ": input must be floating point, got " << in[0].str();
    return {in[0]};
}

Types infer_unary_bool(const Node& n, const Types& in) {
    expect_arity(n, in, 1, 1);
    return {TensorType{DType::Bool, in[0].shape}};
}

Types infer_cast(const Node& n, const Types& in) {
    expect_arity(n, in, 1, 1);
    return {TensorType{dtype_from_name(n, n.attr_str("dtype")), in[0].shape}};
}

// bitcast: the same bits as another dtype of the same width.
Types infer_bitcast(const Node& n, const Types& in) {
    expect_arity(n, in, 1, 1);
    const DType to = dtype_from_name(n, n.attr_str("dtype"));
    TS_USER_CHECK(dtype_bytes(to) == dtype_bytes(in[0].dtype) && to != DType::Bool &&
                  in[0].dtype != DType::Bool)
        << where(n) << ": " << in[0].str() << " cannot be reinterpreted as " << dtype_name(to)
        << " (a different width)";
    return {TensorType{to, in[0].shape}};
}

Types infer_same_dtype(const Node& n, const Types& in) {
    expect_arity(n, in, 2, 2);
    TS_USER_CHECK(in[0].dtype == in[1].dtype)
        << where(n) << ": operand types differ: " << in[0].str() << " and " << in[1].str();
    return {TensorType{in[0].dtype, broadcast_shapes(n, in[0].shape, in[1].shape)}};
}

// power: the exponent may have another numeric type (ONNX Pow); the result has the base's.
Types infer_power(const Node& n, const Types& in) {
    expect_arity(n, in, 2, 2);
    return {TensorType{in[0].dtype, broadcast_shapes(n, in[0].shape, in[1].shape)}};
}

Types infer_compare(const Node& n, const Types& in) {
    Types t = infer_same_dtype(n, in);
    t[0].dtype = DType::Bool;
    return t;
}

Types infer_logic(const Node& n, const Types& in) {
    expect_arity(n, in, 2, 2);
    for (size_t i = 0; i < 2; ++i)
        TS_USER_CHECK(in[i].dtype == DType::Bool)
            << where(n) << ": input " << i << " must be bool, got " << in[i].str();
    return {TensorType{DType::Bool, broadcast_shapes(n, in[0].shape, in[1].shape)}};
}

Types infer_where(const Node& n, const Types& in) {
    expect_arity(n, in, 3, 3);
    TS_USER_CHECK(in[0].dtype == DType::Bool)
        << where(n) << ": the condition must be bool, got " << in[0].str();
    TS_USER_CHECK(in[1].dtype == in[2].dtype)
        << where(n) << ": operand types differ: " << in[1].str() << " and " << in[2].str();
    auto s = broadcast_shapes(n, in[1].shape, in[2].shape);
    return {TensorType{in[1].dtype, broadcast_shapes(n, in[0].shape, s)}};
}

}  // namespace

DType dtype_from_name(const Node& n, const std::string& name) {
    for (DType t : {DType::Float32, DType::Float64, DType::Int64, DType::Int32, DType::Int8,
                    DType::UInt8, DType::Bool})
        if (name == dtype_name(t)) return t;
    TS_USER_FAIL() << where(n) << ": unknown dtype '" << name << "'";
}

void add_math_ops(std::vector<OpDef>& table) {
    struct U {
        const char* name;
        const char* desc;
        decltype(OpDef::infer) infer;
    };
    const U unary[] = {
        {"negative", "Elementwise -x", infer_unary},
        {"abs", "Elementwise |x|", infer_unary},
        {"sign", "Elementwise sign of x (-1, 0 or 1)", infer_unary},
        {"floor", "Elementwise floor(x)", infer_unary_float},
        {"ceil", "Elementwise ceil(x)", infer_unary_float},
        {"round", "Elementwise round half to even", infer_unary_float},
        {"exp", "Elementwise e^x", infer_unary_float},
        {"log", "Elementwise natural logarithm", infer_unary_float},
        {"sqrt", "Elementwise square root", infer_unary_float},
        {"reciprocal", "Elementwise 1 / x", infer_unary_float},
        {"sin", "Elementwise sine", infer_unary_float},
        {"cos", "Elementwise cosine", infer_unary_float},
        {"sigmoid", "Elementwise 1 / (1 + e^-x)", infer_unary_float},
        {"tanh", "Elementwise hyperbolic tangent", infer_unary_float},
        {"erf", "Elementwise Gauss error function", infer_unary_float},
        {"nn.softplus", "Elementwise log(1 + e^x)", infer_unary_float},
        {"nn.softsign", "Elementwise x / (1 + |x|)", infer_unary_float},
        {"nn.hard_swish", "Elementwise x * max(0, min(1, x / 6 + 0.5))", infer_unary_float},
        {"nn.leaky_relu", "Elementwise x < 0 ? alpha * x : x", infer_unary_float},
        {"nn.thresholded_relu", "Elementwise x > alpha ? x : 0", infer_unary_float},
        {"nn.elu", "Elementwise x < 0 ? alpha * (e^x - 1) : x", infer_unary_float},
        {"nn.celu", "Elementwise max(0, x) + min(0, alpha * (e^(x / alpha) - 1))",
         infer_unary_float},
        {"nn.selu", "Elementwise gamma * (x <= 0 ? alpha * (e^x - 1) : x)", infer_unary_float},
        {"nn.hard_sigmoid", "Elementwise max(0, min(1, alpha * x + beta))", infer_unary_float},
        {"nn.gelu", "Gaussian error linear unit; approximate=\"tanh\" uses the tanh form",
         infer_unary_float},
        {"clip", "Elementwise min(max(x, a_min), a_max); absent bounds are omitted", infer_unary},
        {"logical_not", "Elementwise not of a bool tensor", infer_unary_bool},
        {"isnan", "Elementwise x != x (bool)", infer_unary_bool},
        {"isinf", "Elementwise |x| == inf (bool); detect_positive/detect_negative",
         infer_unary_bool},
        {"cast", "Elementwise conversion to attribute dtype (float to int truncates)", infer_cast},
        {"bitcast", "Elementwise reinterpretation of the bits as attribute dtype (same width)",
         infer_bitcast},
    };
    for (const U& u : unary) table.push_back({u.name, u.desc, OpPattern::ElemWise, u.infer});
    const U binary[] = {
        {"power", "Elementwise a ^ b with numpy broadcasting", infer_power},
        {"maximum", "Elementwise max(a, b) with numpy broadcasting", infer_same_dtype},
        {"minimum", "Elementwise min(a, b) with numpy broadcasting", infer_same_dtype},
        {"mod", "Elementwise remainder; fmod=1: sign of a (C fmod), else sign of b",
         infer_same_dtype},
        {"nn.prelu", "Elementwise x < 0 ? slope * x : x, slope broadcast to x", infer_same_dtype},
        {"equal", "Elementwise a == b (bool)", infer_compare},
        {"less", "Elementwise a < b (bool)", infer_compare},
        {"greater", "Elementwise a > b (bool)", infer_compare},
        {"less_equal", "Elementwise a <= b (bool)", infer_compare},
        {"greater_equal", "Elementwise a >= b (bool)", infer_compare},
        {"logical_and", "Elementwise a and b of bool tensors", infer_logic},
        {"logical_or", "Elementwise a or b of bool tensors", infer_logic},
        {"logical_xor", "Elementwise a xor b of bool tensors", infer_logic},
    };
    for (const U& u : binary) table.push_back({u.name, u.desc, OpPattern::Broadcast, u.infer});
    table.push_back({"where", "Elementwise cond ? x : y with numpy broadcasting of all three",
                     OpPattern::Broadcast, infer_where});
}

}  // namespace tessera::graph::detail
