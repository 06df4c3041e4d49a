// Computes for narrow and half-precision dtypes at the graph boundary:
// narrow_cast as float32 arithmetic (round to float16/bfloat16/float8/float4)
// or integer floor-modulo (wrap to int16/uint16/uint32/int4/uint4/int2/uint2),
// so every backend can run it.
#include <cmath>

#include "engine/core/small_types.h"
#include "engine/tir/op.h"
#include "engine/topi/compute/topi_detail.h"

namespace tessera::topi::detail {

using tir::Expr;
using tir::Var;

namespace {

Expr f32(double v) { return tir::make_const(tir::DataType::float32(), v); }

// The smallest power of two >= p, for finite p >= 0 with p * 2^24 finite
// (Rump, Ogita, Oishi 2008, "Accurate floating-point summation I", Alg. 3.5):
// q = p / u with u = 2^-24; |(q + p) - q| is that power, or 0 when p is one.
// Needs IEEE float32 arithmetic without reassociation (no fast-math).
Expr next_pow2(const Expr& p) {
    Expr q = p * f32(16777216.0);
    Expr l = tir::fabs((q + p) - q);
    return tir::select(l == f32(0), p, l);
}

// (Negation is r * -1: the IR's unary minus is 0 - r, which loses -0.)

// |x| rounded to nearest-even on `bits` significant bits, never below the
// quantum 2^min_quantum_exp: adding C = ufp(a) * 2^(24 - bits) (computed as
// next_pow2(a) * 2^(23 - bits), exact for a power of two too) makes the
// float32 addition itself round at the right bit.
Expr round_magnitude(const Expr& a, int bits, int min_quantum_exp) {
    Expr c = tir::max(next_pow2(a) * f32(std::ldexp(1.0, 23 - bits)),
                      f32(std::ldexp(1.0, min_quantum_exp + 23)));
    return (a + c) - c;
}

// x rounded to float16: 11 significant bits, subnormal quantum 2^-24,
// |x| >= 65520 (half way past the largest half, 65504) becomes infinity.
Expr round_to_half(const Expr& x) {
    Expr a = tir::fabs(x);
    Expr r = round_magnitude(a, 11, -24);
    r = tir::select(a >= f32(65520.0), f32(INFINITY), r);
    r = tir::select(x < f32(0), r * f32(-1.0), r);
    return tir::select(a == f32(0), x, r);  // keeps -0
}

// x rounded to bfloat16: 8 significant bits over float32's exponent range.
// Values >= 2^100 are scaled down first so next_pow2 does not overflow;
// scaling back overflows to infinity exactly when bfloat16 rounding does.
Expr round_to_bfloat16(const Expr& x) {
    Expr a = tir::fabs(x);
    Expr big = a >= f32(std::ldexp(1.0, 100));
    Expr s = tir::select(big, a * f32(std::ldexp(1.0, -100)), a);
    Expr r = round_magnitude(s, 8, -133);
    r = tir::select(big, r * f32(std::ldexp(1.0, 100)), r);
    r = tir::select(x < f32(0), r * f32(-1.0), r);
    return tir::select(a == f32(0) || a == f32(INFINITY), x, r);  // keeps -0 and +-inf
}

// x rounded toward zero to bfloat16 (ONNX's reference Cast before opset 19
// kept the high 16 bits): floor(|x| / q) * q with q = ufp(|x|) * 2^-7, all exact.
Expr truncate_to_bfloat16(const Expr& x) {
    Expr a = tir::fabs(x);
    Expr big = a >= f32(std::ldexp(1.0, 100));
    Expr s = tir::select(big, a * f32(std::ldexp(1.0, -100)), a);
    Expr q = tir::max(next_pow2(s) * f32(std::ldexp(1.0, -8)), f32(std::ldexp(1.0, -133)));
    Expr r = tir::floor(s / q) * q;
    r = tir::select(big, r * f32(std::ldexp(1.0, 100)), r);
    r = tir::select(x < f32(0), r * f32(-1.0), r);
    return tir::select(a == f32(0) || a == f32(INFINITY), x, r);
}

// x rounded to float8 / float4 type `t` (nearest even; core/small_types.h
// has the same in C++): the magnitude is clamped to twice the largest value
// first (keeps next_pow2 finite; anything that large overflows), out of range
// gives the largest value when `saturate` (always for E2M1), else infinity
// (E5M2) or NaN; *FNUZ types have no -0; E2M1 has no NaN (0).
Expr round_to_small_float(const Expr& x, SmallType t, bool saturate) {
    const SmallFloatSpec s = small_float_spec(t);
    const Expr nan = f32(NAN), inf = f32(INFINITY), zero = f32(0);
    Expr a = tir::fabs(x);
    Expr r = round_magnitude(tir::min(a, f32(2 * s.max)), s.man + 1, 1 - s.bias - s.man);
    const Expr over = saturate || !s.has_nan ? f32(s.max) : s.has_inf ? inf : nan;
    r = tir::select(r > f32(s.max), over, r);
    r = tir::select(x < zero, r * f32(-1.0), r);
    if (s.no_neg_zero)
        r = tir::select(r == zero, zero, r);
    else
        r = tir::select(a == zero, x, r);  // keeps -0
    return tir::select(x != x, s.has_nan ? nan : zero, r);
}

// x rounded up to a power of two of float8 E8M0 (2^-127 .. 2^127).
Expr round_up_to_e8m0(const Expr& x, bool saturate) {
    Expr a = tir::fabs(x);
    Expr big = a >= f32(std::ldexp(1.0, 64));
    Expr s = tir::select(big, a * f32(std::ldexp(1.0, -64)), a);
    Expr p = next_pow2(s);
    p = tir::select(big, p * f32(std::ldexp(1.0, 64)), p);
    Expr r = tir::select(a <= f32(std::ldexp(1.0, -127)), f32(std::ldexp(1.0, -127)),
                         tir::select(a >= f32(std::ldexp(1.0, 127)), f32(std::ldexp(1.0, 127)), p));
    if (!saturate) r = tir::select(a == f32(INFINITY), f32(NAN), r);
    return tir::select(x != x, f32(NAN), r);
}

// Two's complement wrap of an integer to `bits` bits (signed or not).
Expr wrap_int(const Expr& x, int bits, bool is_signed) {
    const int64_t span = int64_t(1) << bits;
    Expr m = tir::make_const(x.dtype(), double(span));
    if (!is_signed) return tir::floormod(x, m);
    Expr h = tir::make_const(x.dtype(), double(span / 2));
    return tir::floormod(x + h, m) - h;
}

Tensors narrow_cast(const graph::Node& n, const Tensors& in, const Types& out) {
    check_arity(n, in, out, 1, 1);
    const te::Tensor& x = in[0];
    const std::string declared = n.attr_str("dtype");
    std::function<Expr(Expr)> fn;
    if (declared == "float16")
        fn = round_to_half;
    else if (declared == "bfloat16")
        fn = n.attr_str("rounding", "nearest_even") == "toward_zero" ? truncate_to_bfloat16
                                                                     : round_to_bfloat16;
    else if (declared == "int16")
        fn = [](Expr v) { return wrap_int(v, 16, true); };
    else if (declared == "uint16")
        fn = [](Expr v) { return wrap_int(v, 16, false); };
    else if (declared == "uint32")
        fn = [](Expr v) { return wrap_int(v, 32, false); };
    else if (auto small = small_type(declared)) {
        const SmallType t = *small;
        const bool saturate = n.attr_int("saturate", 1) != 0;
        if (t == SmallType::Float8E8M0)
            fn = [saturate](Expr v) { return round_up_to_e8m0(v, saturate); };
        else if (small_type_is_float(t))
            fn = [t, saturate](Expr v) { return round_to_small_float(v, t, saturate); };
        else
            fn = [t](Expr v) {
                return wrap_int(v, small_type_bits(t),
                                t == SmallType::Int4 || t == SmallType::Int2);
            };
    } else
        TS_USER_FAIL() << where(n) << ": unknown narrow dtype '" << declared << "'";
    te::Tensor y = te::compute(
        x.shape(), [&](const std::vector<Var>& i) { return fn(x(as_exprs(i))); }, "T_narrow_cast",
        "elemwise");
    return {y};
}

}  // namespace

void add_dtype_computes(ComputeTable& t) { t["narrow_cast"] = narrow_cast; }

}  // namespace tessera::topi::detail
