// ONNX quantization converters, expanded at import into existing graph ops:
// QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, MatMulInteger,
// ConvInteger, QLinearMatMul, QLinearConv. 8-bit matrix products of rank >= 2
// run as integer products of packed bytes (nn.matmul_u8i8); convolutions and
// the rest run on the float32 matmul/conv kernels, exact while partial sums
// stay below 2^24: short
// reductions directly, long ones (K > 258) with the left operand split into
// 16 * high + low parts (exact up to K = 4386). Rounding is half to even and
// results saturate, as ONNX says.
#include "engine/frontend/onnx/onnx_quantization.h"

#include <algorithm>
#include <functional>
#include <iomanip>
#include <sstream>

#include "engine/core/error.h"
#include "engine/frontend/onnx/onnx_dtype.h"
#include "engine/frontend/onnx/onnx_index.h"
#include "engine/frontend/onnx/onnx_math_signal.h"

namespace tessera::frontend::onnx_import {

namespace {

using Attrs = std::map<std::string, graph::AttrValue>;
using graph::DType;

int cast(NodeCtx& ctx, int v, DType to) {
    if (ctx.type_of(v).dtype == to) return v;
    return ctx.emit_internal("cast", {v}, {{"dtype", std::string(graph::dtype_name(to))}});
}

// A blocked scale or zero point (Quantize/DequantizeLinear-21 block_size:
// x's shape with the axis cut into blocks) repeated over each block to x's
// shape.
int repeated_over_blocks(NodeCtx& ctx, int v, int64_t axis, int64_t block,
                         const std::string& what) {
    const graph::TensorType t = ctx.type_of(v);
    const std::vector<int64_t> xs = ctx.input_type(0).shape;
    TS_USER_CHECK(t.shape.size() == xs.size() && axis >= 0 && axis < int64_t(xs.size()) &&
                  t.shape[size_t(axis)] == (xs[size_t(axis)] + block - 1) / block)
        << ctx.where() << ": " << what << " " << t.str() << " does not cut axis " << axis
        << " of the input into blocks of " << block;
    std::vector<int64_t> one(t.shape);
    one.insert(one.begin() + axis + 1, 1);
    std::vector<int64_t> wide(one);
    wide[size_t(axis) + 1] = block;
    std::vector<int64_t> joined(t.shape);
    joined[size_t(axis)] *= block;
    int r = ctx.emit_internal("reshape", {v}, {{"newshape", one}});
    r = ctx.emit_internal("broadcast_to", {r}, {{"shape", wide}});
    r = ctx.emit_internal("reshape", {r}, {{"newshape", joined}});
    if (joined[size_t(axis)] == xs[size_t(axis)]) return r;
    return ctx.emit_internal("strided_slice", {r},
                             {{"begin", std::vector<int64_t>(xs.size(), 0)},
                              {"end", xs},
                              {"strides", std::vector<int64_t>(xs.size(), 1)}});
}

// A scale or zero point (scalar, one element, or 1-D along `axis` of a
// rank-`rank` tensor) shaped to broadcast against that tensor.
int along_axis(NodeCtx& ctx, int v, int64_t rank, int64_t axis, const std::string& what) {
    if (const int64_t block = ctx.attr_int("block_size", 0); block > 0)
        return repeated_over_blocks(ctx, v, axis, block, what);
    const graph::TensorType t = ctx.type_of(v);
    if (t.num_elements() == 1)
        return t.shape.empty()
                   ? v
                   : ctx.emit_internal("reshape", {v}, {{"newshape", std::vector<int64_t>{}}});
    TS_USER_CHECK(t.shape.size() == 1)
        << ctx.where() << ": " << what << " must be a scalar or 1-D, got " << t.str();
    TS_USER_CHECK(axis >= 0 && axis < rank)
        << ctx.where() << ": " << what << " is per-axis but the axis " << axis
        << " is out of range";
    std::vector<int64_t> shape(size_t(rank - axis), 1);
    shape[0] = t.shape[0];
    return ctx.emit_internal("reshape", {v}, {{"newshape", shape}});
}

// int32(x - zero_point).
int centered_int(NodeCtx& ctx, int x, int zp_input, int64_t axis, const std::string& what) {
    int64_t rank = int64_t(ctx.type_of(x).shape.size());
    int xi = cast(ctx, x, DType::Int32);
    if (!ctx.has_input(zp_input)) return xi;
    int zp = along_axis(ctx, cast(ctx, ctx.input(zp_input), DType::Int32), rank, axis, what);
    return ctx.emit_internal("subtract", {xi, zp});
}

// float32(x - zero_point), the subtraction in int32 (exact).
int centered(NodeCtx& ctx, int x, int zp_input, int64_t axis, const std::string& what) {
    return cast(ctx, centered_int(ctx, x, zp_input, axis, what), DType::Float32);
}

// Emits op as ONNX output `out` (or an internal value when out < 0).
int emit_to(NodeCtx& ctx, int out, const std::string& op, std::vector<int> inputs,
            Attrs attrs = {}) {
    if (out < 0) return ctx.emit_internal(op, std::move(inputs), std::move(attrs));
    int v = ctx.emit_outputs({out}, op, std::move(inputs), std::move(attrs))[0];
    return v >= 0 ? v : ctx.imp.value(ctx.node.output(out), ctx.where());
}

// Longest reduction whose float32 sums of 8-bit products (|term| <= 255 * 255) are exact.
constexpr int64_t kExactTerms = (int64_t(1) << 24) / (255 * 255);

// The exact int32 result of a bilinear float32 kernel `product(a, b)` over K
// terms, a and b centered int32 values, as ONNX output `out` (internal when
// out < 0). For long reductions a = 16 * hi + lo (|hi|, |lo| <= 15) and the
// result is 16 * product(hi, b) + product(lo, b).
int exact_product(NodeCtx& ctx, int a, int b, int64_t K,
                  const std::function<int(int, int)>& product, int out) {
    auto as_int = [&](int v, int o) {
        return emit_to(ctx, o, "cast", {ctx.emit_internal("round", {v})},
                       {{"dtype", std::string("int32")}});
    };
    int bf = cast(ctx, b, DType::Float32);
    if (K <= kExactTerms) return as_int(product(cast(ctx, a, DType::Float32), bf), out);
    int sixteen = internal_constant(ctx, typed_tensor(DType::Int32, {}, {16.0}));
    int hi = ctx.emit_internal("divide", {a, sixteen});  // truncating: |lo| <= 15
    int lo = ctx.emit_internal("subtract", {a, ctx.emit_internal("multiply", {hi, sixteen})});
    int ph = as_int(product(cast(ctx, hi, DType::Float32), bf), -1);
    int pl = as_int(product(cast(ctx, lo, DType::Float32), bf), -1);
    return emit_to(ctx, out, "add", {ctx.emit_internal("multiply", {ph, sixteen}), pl});
}

// The integer range of a quantized type: int8/uint8 and the types computed in
// int32 (int16/uint16, int4/uint4, int2/uint2).
struct QuantRange {
    DType dtype;
    double lo, hi;
};

QuantRange quant_range(NodeCtx& ctx, int elem_type) {
    switch (elem_type) {
        case onnx::TensorProto_DataType_INT8:
            return {DType::Int8, -128, 127};
        case onnx::TensorProto_DataType_UINT8:
            return {DType::UInt8, 0, 255};
        case onnx::TensorProto_DataType_INT16:
            return {DType::Int32, -32768, 32767};
        case onnx::TensorProto_DataType_UINT16:
            return {DType::Int32, 0, 65535};
        case kInt4:
            return {DType::Int32, -8, 7};
        case kUInt4:
            return {DType::Int32, 0, 15};
        case kInt2:
            return {DType::Int32, -2, 1};
        case kUInt2:
            return {DType::Int32, 0, 3};
        default:
            break;
    }
    TS_USER_FAIL() << ctx.where()
                   << ": zero point must be int8, uint8, int16, uint16, int4, uint4, "
                   << "int2, uint2 or a float8/float4 type, got element type " << elem_type;
}

// saturate(round(y) + zero_point) in `range`; the result is ONNX output `out`.
int requantize(NodeCtx& ctx, int y, int zp, QuantRange range, int out) {
    int r = ctx.emit_internal("round", {y});
    if (zp >= 0) r = ctx.emit_internal("add", {r, cast(ctx, zp, DType::Float32)});
    r = ctx.emit_internal("clip", {r}, {{"a_min", range.lo}, {"a_max", range.hi}});
    return emit_to(ctx, out, "cast", {r}, {{"dtype", std::string(graph::dtype_name(range.dtype))}});
}

// The 8-bit range of QLinear*/DynamicQuantizeLinear: the zero point's type.
QuantRange quant_type(NodeCtx& ctx, int zp_input) {
    if (!ctx.has_input(zp_input)) return {DType::UInt8, 0, 255};
    DType t = ctx.input_type(zp_input).dtype;
    TS_USER_CHECK(t == DType::UInt8 || t == DType::Int8)
        << ctx.where() << ": zero point must be uint8 or int8, got " << graph::dtype_name(t);
    return t == DType::Int8 ? QuantRange{DType::Int8, -128, 127} : QuantRange{DType::UInt8, 0, 255};
}

// The quantized element type: output_dtype when given, else the zero point's
// declared type (uint8 without one).
int quant_elem_type(NodeCtx& ctx, int zp_input) {
    if (const int64_t explicit_type = ctx.attr_int("output_dtype", 0); explicit_type != 0)
        return int(explicit_type);
    if (!ctx.has_input(zp_input)) return onnx::TensorProto_DataType_UINT8;
    const int et = declared_elem_type(ctx.imp, ctx.node.input(zp_input));
    if (et) return et;
    const DType t = ctx.input_type(zp_input).dtype;
    return t == DType::Int8 ? onnx::TensorProto_DataType_INT8 : onnx::TensorProto_DataType_UINT8;
}

// "uint8, scale 0.0157, zero point 128" (or per channel along `axis`: the
// ranges) for a tensor of ONNX element type `et` quantized with constant
// inputs scale_input / zp_input; empty when either is not a constant.
std::string quantization_text(NodeCtx& ctx, int scale_input, int zp_input, int et, int64_t axis) {
    const ConstTensor* sc = ctx.constant_input(scale_input);
    if (!sc) return "";
    const std::vector<double> scale = constant_values(*sc);
    std::vector<double> zp;
    if (ctx.has_input(zp_input)) {
        const ConstTensor* z = ctx.constant_input(zp_input);
        if (!z) return "";
        zp = constant_values(*z);
    }
    if (scale.empty()) return "";
    const char* type = et == onnx::TensorProto_DataType_INT8    ? "int8"
                       : et == onnx::TensorProto_DataType_UINT8 ? "uint8"
                                                                 : "integer";
    auto range = [](const std::vector<double>& v) {
        std::ostringstream os;
        os << std::setprecision(4);
        const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
        if (*lo == *hi) os << *lo;
        else os << *lo << ".." << *hi;
        return os.str();
    };
    std::ostringstream os;
    os << type;
    if (scale.size() > 1) os << " per channel (axis " << axis << ", " << scale.size() << ")";
    os << ", scale " << range(scale) << ", zero point " << (zp.empty() ? "0" : range(zp));
    return os.str();
}

void convert_quantize(NodeCtx& ctx) {
    int x = cast(ctx, ctx.input(0), DType::Float32);
    int64_t rank = int64_t(ctx.type_of(x).shape.size());
    int64_t axis = ctx.attr_int("axis", 1);
    if (axis < 0) axis += rank;
    int scale = along_axis(ctx, ctx.input(1), rank, axis, "y_scale");
    int zp = ctx.has_input(2) ? along_axis(ctx, ctx.input(2), rank, axis, "y_zero_point") : -1;
    const int et = quant_elem_type(ctx, 2);
    if (is_small_float_elem_type(et)) {
        // float8/float4: x / scale + zero point, rounded to the type when the
        // output is narrowed (onnx_dtype.cpp, with the saturate attribute).
        if (zp < 0) {
            emit_to(ctx, 0, "divide", {x, scale});
        } else {
            emit_to(ctx, 0, "add", {ctx.emit_internal("divide", {x, scale}), zp});
        }
        return;
    }
    const int y = requantize(ctx, ctx.emit_internal("divide", {x, scale}), zp, quant_range(ctx, et), 0);
    if (y >= 0 && ctx.attr_int("block_size", 0) == 0)
        ctx.imp.g.values[size_t(y)].quantization = quantization_text(ctx, 1, 2, et, axis);
}

void convert_dequantize(NodeCtx& ctx) {
    int64_t rank = int64_t(ctx.input_type(0).shape.size());
    int64_t axis = ctx.attr_int("axis", 1);
    if (axis < 0) axis += rank;
    if (ctx.attr_int("block_size", 0) == 0) {
        const int et = declared_elem_type(ctx.imp, ctx.node.input(0));
        std::string& q = ctx.imp.g.values[size_t(ctx.input(0))].quantization;
        if (q.empty()) q = quantization_text(ctx, 1, 2, et, axis);
    }
    // float8/float4 values (computed as float32) are centered in float.
    int x = ctx.input_type(0).dtype == DType::Float32
                ? (ctx.has_input(2)
                       ? ctx.emit_internal(
                             "subtract",
                             {ctx.input(0), along_axis(ctx, cast(ctx, ctx.input(2), DType::Float32),
                                                       rank, axis, "x_zero_point")})
                       : ctx.input(0))
                : centered(ctx, ctx.input(0), 2, axis, "x_zero_point");
    int scale = along_axis(ctx, ctx.input(1), rank, axis, "x_scale");
    ctx.emit("multiply", {x, scale});
}

// y_scale = (max(0, max x) - min(0, min x)) / 255, y_zero_point = saturate(round(-min / scale)),
// y = saturate(round(x / y_scale) + y_zero_point), all uint8.
// With `per_row`, x is 2-D and each row has its own scale and zero point
// ([rows, 1] each).
DynamicQuantized dynamic_quantize_to(NodeCtx& ctx, int x, int q_out, int scale_out,
                                     int zero_point_out, bool per_row = false) {
    TS_USER_CHECK(ctx.type_of(x).dtype == DType::Float32)
        << ctx.where() << ": input must be float32, got " << ctx.type_of(x).str();
    // min and max of all of x: rows of its last axis first (vectorized row
    // reductions, parallel over the rows), then over the rows; a reduction
    // over every axis at once ran as one scalar loop (3 GB/s).
    const std::vector<int64_t> shape = ctx.type_of(x).shape;
    int rows = x;
    if (shape.size() >= 2) {
        int64_t r = 1;
        for (size_t i = 0; i + 1 < shape.size(); ++i) r *= shape[i];
        rows = ctx.emit_internal("reshape", {x},
                                 {{"newshape", std::vector<int64_t>{r, shape.back()}}});
    }
    TS_CHECK(!per_row || shape.size() == 2) << "dynamic_quantize: rows of a 2-D tensor";
    auto all_of = [&](const char* op) {
        int v = rows;
        for (int64_t axis = int64_t(ctx.type_of(rows).shape.size()) - 1; axis >= 0; --axis) {
            v = ctx.emit_internal(
                op, {v},
                {{"axes", std::vector<int64_t>{axis}}, {"keepdims", int64_t(per_row ? 1 : 0)}});
            if (per_row) break;
        }
        return v;
    };
    int zero = internal_constant(ctx, typed_tensor(DType::Float32, {}, {0.0}));
    int lo = ctx.emit_internal("minimum", {all_of("reduce_min"), zero});
    int hi = ctx.emit_internal("maximum", {all_of("reduce_max"), zero});
    int range = internal_constant(ctx, typed_tensor(DType::Float32, {}, {255.0}));
    DynamicQuantized r;
    r.scale = emit_to(ctx, scale_out, "divide", {ctx.emit_internal("subtract", {hi, lo}), range});
    int zp_f = ctx.emit_internal("divide", {ctx.emit_internal("negative", {lo}), r.scale});
    const QuantRange u8{DType::UInt8, 0, 255};
    r.zero_point = requantize(ctx, zp_f, -1, u8, zero_point_out);
    r.q = requantize(ctx, ctx.emit_internal("divide", {x, r.scale}), r.zero_point, u8, q_out);
    return r;
}

void convert_dynamic_quantize(NodeCtx& ctx) { dynamic_quantize_to(ctx, ctx.input(0), 0, 1, 2); }

// True when input i is omitted or a constant of zeros.
bool zero_or_absent(NodeCtx& ctx, int i) {
    if (!ctx.has_input(i)) return true;
    const ConstTensor* c = ctx.constant_input(i);
    if (!c) return false;
    for (double v : constant_values(*c))
        if (v != 0) return false;
    return true;
}

bool is_byte(DType t) { return t == DType::UInt8 || t == DType::Int8; }

// An 8-bit operand as the byte type the packed product reads: int8 A + 128
// is uint8 and uint8 B - 128 is int8 (the zero point moves by as much).
int as_byte_type(NodeCtx& ctx, int v, DType want) {
    if (ctx.type_of(v).dtype == want) return v;
    int shift = internal_constant(
        ctx, typed_tensor(DType::Int32, {}, {want == DType::UInt8 ? 128.0 : -128.0}));
    return cast(ctx, ctx.emit_internal("add", {cast(ctx, v, DType::Int32), shift}), want);
}

// The int32 zero point value `zp` (-1: none) of an operand read as `want`
// (shaped along `axis` of a rank-`rank` tensor), or -1 when there is none.
int byte_zero_point(NodeCtx& ctx, int zp, DType have, DType want, int64_t rank, int64_t axis,
                    const std::string& what) {
    const double shift = have == want ? 0.0 : want == DType::UInt8 ? 128.0 : -128.0;
    if (zp >= 0) zp = along_axis(ctx, cast(ctx, zp, DType::Int32), rank, axis, what);
    if (shift == 0.0) return zp;
    int s = internal_constant(ctx, typed_tensor(DType::Int32, {}, {shift}));
    return zp < 0 ? s : ctx.emit_internal("add", {zp, s});
}

// int32 sums of v over `axis`, kept as a dim of 1.
int int32_sum_over(NodeCtx& ctx, int v, int64_t axis) {
    return ctx.emit_internal("reduce_sum", {cast(ctx, v, DType::Int32)},
                             {{"axes", std::vector<int64_t>{axis}}, {"keepdims", int64_t(1)}});
}

// int32 (A - a_zp) @ (B - b_zp) of 8-bit operands of rank >= 2 as integer
// products of packed bytes (nn.matmul_u8i8, vpdpbusd where the CPU has it):
// A·B - a_zp·colsum(B) - b_zp·rowsum(A) + K·a_zp·b_zp, each term only when
// its zero point is given (B's column sums made once per IntegerWeight;
// constant weights: packed and summed at compile time). a_zp is a value
// (-1: none), the result ONNX output `out` (internal when out < 0).
int packed_integer_product(NodeCtx& ctx, int a_in, int a_zp, IntegerWeight& w, int out) {
    const graph::TensorType at = ctx.type_of(a_in);
    const int64_t a_rank = int64_t(at.shape.size());
    int a = as_byte_type(ctx, a_in, DType::UInt8);
    int za = byte_zero_point(ctx, a_zp, at.dtype, DType::UInt8, a_rank, a_rank - 2, "a_zero_point");
    int pa = ctx.emit_internal("pack_int8x4", {a}, {{"axis", int64_t(-1)}});
    const int zb = w.zero_point;
    if (za < 0 && zb < 0) return emit_to(ctx, out, "nn.matmul_u8i8", {pa, w.packed});
    int r = ctx.emit_internal("nn.matmul_u8i8", {pa, w.packed});
    std::vector<int> terms;  // subtracted
    if (za >= 0) {
        if (w.column_sums < 0) w.column_sums = int32_sum_over(ctx, w.bytes, w.rank - 2);
        terms.push_back(ctx.emit_internal("multiply", {za, w.column_sums}));
    }
    if (zb >= 0)
        terms.push_back(ctx.emit_internal("multiply", {zb, int32_sum_over(ctx, a, a_rank - 1)}));
    if (za >= 0 && zb >= 0) {
        int k = internal_constant(ctx, typed_tensor(DType::Int32, {}, {double(at.shape.back())}));
        int kzz = ctx.emit_internal("multiply", {k, ctx.emit_internal("multiply", {za, zb})});
        terms.back() = ctx.emit_internal("subtract", {terms.back(), kzz});
    }
    for (size_t i = 0; i + 1 < terms.size(); ++i) r = ctx.emit_internal("subtract", {r, terms[i]});
    return emit_to(ctx, out, "subtract", {r, terms.back()});
}

int packed_integer_matmul(NodeCtx& ctx, int a_in, int a_zp, int b_in, int b_zp, int out) {
    IntegerWeight w =
        integer_weight(ctx, ctx.input(b_in), zero_or_absent(ctx, b_zp) ? -1 : ctx.input(b_zp));
    return packed_integer_product(ctx, ctx.input(a_in),
                                  zero_or_absent(ctx, a_zp) ? -1 : ctx.input(a_zp), w, out);
}

// int32 (A - a_zp) @ (B - b_zp): a_zp per row of A, b_zp per column of B.
// UserError unless the operands at inputs `x` and `w` are 8-bit integers and
// their zero points (when given) of their types, as ONNX's integer ops say.
void check_byte_operands(NodeCtx& ctx, int x, int x_zp, int w, int w_zp) {
    for (auto [v, zp] : {std::pair{x, x_zp}, std::pair{w, w_zp}}) {
        const DType t = ctx.input_type(v).dtype;
        TS_USER_CHECK(is_byte(t)) << ctx.where() << ": input " << v
                                  << " must be int8 or uint8, got " << ctx.input_type(v).str();
        TS_USER_CHECK(!ctx.has_input(zp) || ctx.input_type(zp).dtype == t)
            << ctx.where() << ": the zero point (input " << zp << ") " << ctx.input_type(zp).str()
            << " must be of its operand's type " << graph::dtype_name(t);
    }
}

int integer_matmul(NodeCtx& ctx, int a_in, int a_zp, int b_in, int b_zp, int out) {
    check_byte_operands(ctx, a_in, a_zp, b_in, b_zp);
    const graph::TensorType at = ctx.input_type(a_in);
    const graph::TensorType bt = ctx.input_type(b_in);
    int64_t a_rank = int64_t(at.shape.size());
    int64_t b_rank = int64_t(bt.shape.size());
    TS_USER_CHECK(a_rank >= 1 && b_rank >= 1) << ctx.where() << ": matmul of a scalar";
    if (a_rank >= 2 && b_rank >= 2 && is_byte(at.dtype) && is_byte(bt.dtype))
        return packed_integer_matmul(ctx, a_in, a_zp, b_in, b_zp, out);
    // Vectors: float32 products, exact (exact_product).
    int a = centered_int(ctx, ctx.input(a_in), a_zp, a_rank - 2, "a_zero_point");
    int b = centered_int(ctx, ctx.input(b_in), b_zp, b_rank - 1, "b_zero_point");
    return exact_product(
        ctx, a, b, at.shape.back(),
        [&](int l, int r) {
            return ctx.emit_internal("nn.matmul", {l, r});
        },
        out);
}

// The constant zero point of input i as an integer (0 when omitted); false
// when it is not a constant or its values (per channel) differ.
bool constant_zero_point(NodeCtx& ctx, int i, int64_t& value) {
    value = 0;
    if (!ctx.has_input(i)) return true;
    const ConstTensor* c = ctx.constant_input(i);
    if (!c) return false;
    const std::vector<double> v = constant_values(*c);
    if (v.empty()) return false;
    for (double x : v)
        if (x != v[0]) return false;
    value = int64_t(v[0]);
    return true;
}

// int32 2-D convolution of 8-bit (x - x_zp) and (w - w_zp) as an integer
// GEMM: the weights (OC, K) times the data's windows (nn.im2col_int8x4,
// padded with the zero point), with the zero points' terms taken out:
// W·X - x_zp·rowsum(W) - w_zp·colsum(X) + K·x_zp·w_zp (uint8 weights read
// as int8 W - 128, their zero point moving by as much). x_zp is a scalar,
// a constant or computed at run time (DynamicQuantizeLinear's); w_zp a
// scalar or one per output channel. -1 when the convolution does not have
// that form (the float path takes it).
int gemm_integer_conv(NodeCtx& ctx, int x_in, int x_zp, int w_in, int w_zp, const Attrs& attrs,
                      int out) {
    const graph::TensorType xt = ctx.input_type(x_in), wt = ctx.input_type(w_in);
    if (!is_byte(xt.dtype) || !is_byte(wt.dtype) || xt.shape.size() != 4 || wt.shape.size() != 4 ||
        std::get<int64_t>(attrs.at("groups")) != 1)
        return -1;
    const int64_t N = xt.shape[0], OC = wt.shape[0];
    const int64_t K = wt.shape[1] * wt.shape[2] * wt.shape[3];
    // The data's zero point as uint8 data reads it: a constant, or a value.
    int64_t zx = 0;
    int zx_value = -1;  // int32 scalar
    const bool zx_at_run_time = !constant_zero_point(ctx, x_zp, zx);
    if (zx_at_run_time) {
        if (ctx.input_type(x_zp).num_elements() != 1) return -1;
        zx_value = along_axis(ctx, cast(ctx, ctx.input(x_zp), DType::Int32), 0, 0, "x_zero_point");
        if (xt.dtype == DType::Int8)
            zx_value = ctx.emit_internal(
                "add", {zx_value, internal_constant(ctx, typed_tensor(DType::Int32, {}, {128.0}))});
    } else if (xt.dtype == DType::Int8) {
        zx += 128;
    }
    // The weights' zero point as int8 weights read it: a constant, or one
    // per output channel (int32 (OC, 1)).
    int64_t zw = 0;
    int zw_value = -1;
    if (!constant_zero_point(ctx, w_zp, zw)) {
        if (ctx.input_type(w_zp).num_elements() != OC || ctx.input_type(w_zp).shape.size() != 1)
            return -1;
        zw_value = ctx.emit_internal("reshape", {cast(ctx, ctx.input(w_zp), DType::Int32)},
                                     {{"newshape", std::vector<int64_t>{OC, 1}}});
        if (wt.dtype == DType::UInt8)
            zw_value = ctx.emit_internal(
                "add",
                {zw_value, internal_constant(ctx, typed_tensor(DType::Int32, {}, {-128.0}))});
    } else if (wt.dtype == DType::UInt8) {
        zw -= 128;
    }
    if (zw_value < 0 && zw != 0)
        zw_value = internal_constant(ctx, typed_tensor(DType::Int32, {}, {double(zw)}));
    if (zx_value < 0 && zx != 0)
        zx_value = internal_constant(ctx, typed_tensor(DType::Int32, {}, {double(zx)}));
    int x = as_byte_type(ctx, ctx.input(x_in), DType::UInt8);
    int w = ctx.emit_internal("reshape", {as_byte_type(ctx, ctx.input(w_in), DType::Int8)},
                              {{"newshape", std::vector<int64_t>{OC, K}}});
    const std::vector<int64_t>& pads = std::get<std::vector<int64_t>>(attrs.at("padding"));
    const std::vector<int64_t>& st = std::get<std::vector<int64_t>>(attrs.at("strides"));
    const std::vector<int64_t>& dl = std::get<std::vector<int64_t>>(attrs.at("dilation"));
    const int64_t OW = (xt.shape[3] + pads[1] + pads[3] - dl[1] * (wt.shape[3] - 1) - 1) / st[1] + 1;
    Attrs window = {{"kernel", std::vector<int64_t>{wt.shape[2], wt.shape[3]}},
                    {"strides", attrs.at("strides")},
                    {"padding", attrs.at("padding")},
                    {"dilation", attrs.at("dilation")},
                    {"pad_value", zx},
                    {"out_width", OW},
                    {"squeeze_batch", int64_t(N == 1 ? 1 : 0)}};
    // (Kw, OH*OW) for one image (a plain GEMM), else (N, Kw, OH*OW); a
    // zero point computed at run time pads as a second input.
    std::vector<int> im2col_inputs = {x};
    if (zx_at_run_time) im2col_inputs.push_back(cast(ctx, zx_value, DType::UInt8));
    int cols = ctx.emit_internal("nn.im2col_int8x4", im2col_inputs, window);
    const int64_t P = ctx.type_of(cols).shape.back();
    int pw = ctx.emit_internal("pack_int8x4", {w}, {{"axis", int64_t(-1)}});
    int r = ctx.emit_internal("nn.matmul_i8u8", {pw, cols});
    if (zx_value >= 0) {
        int sums = ctx.emit_internal("reduce_sum", {cast(ctx, w, DType::Int32)},
                                     {{"axes", std::vector<int64_t>{1}}, {"keepdims", int64_t(1)}});
        r = ctx.emit_internal("subtract", {r, ctx.emit_internal("multiply", {zx_value, sums})});
    }
    if (zw_value >= 0) {
        // colsum(X): each window's bytes summed, as a product with a row of ones.
        int ones = internal_constant(
            ctx, typed_tensor(DType::Int8, {1, K}, std::vector<double>(size_t(K), 1.0)));
        int colsum = ctx.emit_internal(
            "nn.matmul_i8u8",
            {ctx.emit_internal("pack_int8x4", {ones}, {{"axis", int64_t(-1)}}), cols});
        r = ctx.emit_internal("subtract", {r, ctx.emit_internal("multiply", {zw_value, colsum})});
        if (zx_value >= 0) {
            int k = internal_constant(ctx, typed_tensor(DType::Int32, {}, {double(K)}));
            r = ctx.emit_internal(
                "add",
                {r, ctx.emit_internal("multiply",
                                      {k, ctx.emit_internal("multiply", {zx_value, zw_value})})});
        }
    }
    // (N, OC, OH*OW) -> (N, OC, OH, OW).
    return emit_to(ctx, out, "reshape", {r},
                   {{"newshape", std::vector<int64_t>{N, OC, P / OW, OW}}});
}

// int32 grouped (depthwise) convolution of 8-bit (x - x_zp) and constant
// (w - w_zp), as a float conv of the data's bytes: float(x) * (w - w_zp)
// summed over each window (padded with x_zp), plus a per-channel constant
// -x_zp * sum(w - w_zp). Exact: every partial sum is an integer of at most
// 24 bits (kExactTerms). The data stays 8-bit in memory and in the conv's
// padded rows (no int32 or float copy of it). -1 when the convolution does
// not have that form: x_zp at run time, weights computed, long windows.
int grouped_byte_conv(NodeCtx& ctx, int x_in, int x_zp, int w_in, int w_zp, const Attrs& attrs,
                      int out) {
    const graph::TensorType wt = ctx.input_type(w_in);
    const int64_t OC = wt.shape[0], taps = wt.shape[1] * wt.shape[2] * wt.shape[3];
    int64_t zx = 0;
    const ConstTensor* w = ctx.constant_input(w_in);
    if (std::get<int64_t>(attrs.at("groups")) == 1 || !w || taps > kExactTerms ||
        !constant_zero_point(ctx, x_zp, zx))
        return -1;
    std::vector<double> zw(size_t(OC), 0.0);
    if (ctx.has_input(w_zp)) {
        const ConstTensor* z = ctx.constant_input(w_zp);
        if (!z) return -1;
        const std::vector<double> v = constant_values(*z);
        if (v.size() != 1 && int64_t(v.size()) != OC) return -1;
        for (int64_t k = 0; k < OC; ++k) zw[size_t(k)] = v[v.size() == 1 ? 0 : size_t(k)];
    }
    std::vector<double> wc = constant_values(*w), bias(size_t(OC), 0.0);
    for (int64_t k = 0; k < OC; ++k)
        for (int64_t t = 0; t < taps; ++t) {
            double& v = wc[size_t(k * taps + t)];
            v -= zw[size_t(k)];
            bias[size_t(k)] -= double(zx) * v;
        }
    Attrs conv = attrs;
    if (zx != 0) conv["pad_value"] = zx;
    int y = ctx.emit_internal(
        "nn.conv2d",
        {ctx.input(x_in), internal_constant(ctx, typed_tensor(DType::Float32, wt.shape, wc)),
         internal_constant(ctx, typed_tensor(DType::Float32, {OC}, bias))},
        conv);
    return emit_to(ctx, out, "cast", {ctx.emit_internal("round", {y})},
                   {{"dtype", std::string("int32")}});
}

// int32 2-D convolution of (x - x_zp) and (w - w_zp), attributes as Conv's.
int integer_conv(NodeCtx& ctx, int x_in, int x_zp, int w_in, int w_zp, int out) {
    check_byte_operands(ctx, x_in, x_zp, w_in, w_zp);
    const graph::TensorType xt = ctx.input_type(x_in), wt = ctx.input_type(w_in);
    TS_USER_CHECK(xt.shape.size() == 4 && wt.shape.size() == 4)
        << ctx.where() << ": only 2-D convolution (4-D input and weight) is supported, got input "
        << xt.str() << " and weight " << wt.str();
    std::vector<int64_t> kernel = {wt.shape[2], wt.shape[3]};
    TS_USER_CHECK(ctx.attr_ints("kernel_shape", kernel) == kernel)
        << ctx.where() << ": kernel_shape does not match the weight " << wt.str();
    std::vector<int64_t> strides = ctx.attr_ints("strides", {1, 1});
    std::vector<int64_t> dilations = ctx.attr_ints("dilations", {1, 1});
    TS_USER_CHECK(strides.size() == 2 && dilations.size() == 2)
        << ctx.where() << ": strides and dilations need 2 values each";
    std::vector<int64_t> pads =
        resolve_pads_2d(ctx, {xt.shape[2], xt.shape[3]}, kernel, strides, dilations);
    Attrs attrs = {{"strides", strides},
                   {"padding", pads},
                   {"dilation", dilations},
                   {"groups", ctx.attr_int("group", 1)}};
    if (int y = gemm_integer_conv(ctx, x_in, x_zp, w_in, w_zp, attrs, out); y >= 0) return y;
    if (int y = grouped_byte_conv(ctx, x_in, x_zp, w_in, w_zp, attrs, out); y >= 0) return y;
    int x = centered_int(ctx, ctx.input(x_in), x_zp, 1, "x_zero_point");
    int w = centered_int(ctx, ctx.input(w_in), w_zp, 0, "w_zero_point");
    return exact_product(
        ctx, x, w, wt.shape[1] * kernel[0] * kernel[1],
        [&](int l, int r) {
            return ctx.emit_internal("nn.conv2d", {l, r}, attrs);
        },
        out);
}

// a_scale * b_scale / y_scale, each shaped for the output (rank, scale axis of b).
int output_multiplier(NodeCtx& ctx, int a_scale, int b_scale, int y_scale, int64_t rank,
                      int64_t b_axis) {
    int as = along_axis(ctx, ctx.input(a_scale), rank, rank - 2, "a_scale");
    int bs = along_axis(ctx, ctx.input(b_scale), rank, b_axis, "b_scale");
    int ys = along_axis(ctx, ctx.input(y_scale), rank, 0, "y_scale");
    return ctx.emit_internal("divide", {ctx.emit_internal("multiply", {as, bs}), ys});
}

void convert_qlinear_matmul(NodeCtx& ctx) {
    int acc = cast(ctx, integer_matmul(ctx, 0, 2, 3, 5, -1), DType::Float32);
    int64_t rank = int64_t(ctx.type_of(acc).shape.size());
    int m = output_multiplier(ctx, 1, 4, 6, rank, rank - 1);
    int zp = along_axis(ctx, ctx.input(7), rank, rank - 1, "y_zero_point");
    requantize(ctx, ctx.emit_internal("multiply", {acc, m}), zp, quant_type(ctx, 7), 0);
}

void convert_qlinear_conv(NodeCtx& ctx) {
    int acc = cast(ctx, integer_conv(ctx, 0, 2, 3, 5, -1), DType::Float32);
    if (ctx.has_input(8)) {
        int bias = cast(ctx, ctx.input(8), DType::Float32);
        int64_t c = ctx.type_of(bias).shape.empty() ? 1 : ctx.type_of(bias).shape[0];
        bias = ctx.emit_internal("reshape", {bias}, {{"newshape", std::vector<int64_t>{c, 1, 1}}});
        acc = ctx.emit_internal("add", {acc, bias});
    }
    // Scales: x_scale scalar, w_scale scalar or per output channel, y_scale scalar.
    int xs = along_axis(ctx, ctx.input(1), 4, 1, "x_scale");
    int ws = along_axis(ctx, ctx.input(4), 4, 1, "w_scale");
    int ys = along_axis(ctx, ctx.input(6), 4, 1, "y_scale");
    int m = ctx.emit_internal("divide", {ctx.emit_internal("multiply", {xs, ws}), ys});
    int zp = along_axis(ctx, ctx.input(7), 4, 1, "y_zero_point");
    requantize(ctx, ctx.emit_internal("multiply", {acc, m}), zp, quant_type(ctx, 7), 0);
}

}  // namespace

DynamicQuantized dynamic_quantize(NodeCtx& ctx, int x) {
    return dynamic_quantize_to(ctx, x, -1, -1, -1);
}

DynamicQuantized dynamic_quantize_rows(NodeCtx& ctx, int x) {
    return dynamic_quantize_to(ctx, x, -1, -1, -1, true);
}

IntegerWeight integer_weight(NodeCtx& ctx, int b, int b_zp) {
    const graph::TensorType bt = ctx.type_of(b);
    IntegerWeight w;
    w.rank = int64_t(bt.shape.size());
    w.bytes = as_byte_type(ctx, b, DType::Int8);
    w.zero_point =
        byte_zero_point(ctx, b_zp, bt.dtype, DType::Int8, w.rank, w.rank - 1, "b_zero_point");
    w.packed = ctx.emit_internal("pack_int8x4", {w.bytes}, {{"axis", int64_t(-2)}});
    return w;
}

int integer_product(NodeCtx& ctx, int a, int a_zp, IntegerWeight& b) {
    return packed_integer_product(ctx, a, a_zp, b, -1);
}

void add_quant_converters(ConverterTable& t) {
    t["QuantizeLinear"] = convert_quantize;
    t["DequantizeLinear"] = convert_dequantize;
    t["DynamicQuantizeLinear"] = convert_dynamic_quantize;
    t["MatMulInteger"] = [](NodeCtx& ctx) { integer_matmul(ctx, 0, 2, 1, 3, 0); };
    t["ConvInteger"] = [](NodeCtx& ctx) { integer_conv(ctx, 0, 2, 1, 3, 0); };
    t["QLinearMatMul"] = convert_qlinear_matmul;
    t["QLinearConv"] = convert_qlinear_conv;
}

}  // namespace tessera::frontend::onnx_import
