// Building expressions: arithmetic operators with constant type promotion,
// and the math intrinsics used by compute definitions.
#pragma once

#include "engine/tir/expr.h"

namespace tessera::tir {

/// The loop annotation that asks for prefetches: value "BUFFER:DISTANCE"
/// (several separated by ','), set with Schedule::annotate.
inline constexpr const char* kPrefetchAnnotation = "software_prefetch";

/// The intrinsic of one prefetch: Evaluate(Call("tir.prefetch", {load})).
/// The load names the address and is never performed: the interpreter skips
/// the statement, the LLVM backend emits llvm.prefetch (a hint that cannot
/// fault, so the address may lie past the buffer), CUDA emits nothing.
inline constexpr const char* kPrefetchIntrinsic = "tir.prefetch";

/// A constant of type t (int, float or bool), broadcast if t has lanes.
Expr make_const(DataType t, double value);
Expr make_zero(DataType t);

// Arithmetic. When the operand types differ and one side is a constant, the
// constant is converted to the other side's type; otherwise they must match.
Expr operator+(Expr a, Expr b);
Expr operator-(Expr a, Expr b);
Expr operator*(Expr a, Expr b);
Expr operator/(Expr a, Expr b);  // Div (truncating on integers)
Expr operator%(Expr a, Expr b);  // Mod (truncating on integers)
Expr operator-(Expr a);
Expr operator<(Expr a, Expr b);
Expr operator<=(Expr a, Expr b);
Expr operator>(Expr a, Expr b);
Expr operator>=(Expr a, Expr b);
Expr operator==(Expr a, Expr b);
Expr operator!=(Expr a, Expr b);
Expr operator&&(Expr a, Expr b);
Expr operator||(Expr a, Expr b);
Expr operator!(Expr a);

Expr floordiv(Expr a, Expr b);
Expr floormod(Expr a, Expr b);
Expr min(Expr a, Expr b);
Expr max(Expr a, Expr b);
Expr select(Expr cond, Expr t, Expr f);
Expr if_then_else(Expr cond, Expr t, Expr f);  // same as select
Expr cast(DataType t, Expr v);

Expr exp(Expr x);
Expr log(Expr x);
Expr sqrt(Expr x);
Expr rsqrt(Expr x);
Expr tanh(Expr x);
Expr erf(Expr x);
Expr sigmoid(Expr x);
Expr fabs(Expr x);
Expr floor(Expr x);
Expr ceil(Expr x);
Expr round(Expr x);
Expr pow(Expr x, Expr y);
/// Bitwise and, or, xor, not of integers (intrinsic calls "bitwise_and"...).
Expr bitwise_and(Expr a, Expr b);
Expr bitwise_or(Expr a, Expr b);
Expr bitwise_xor(Expr a, Expr b);
Expr bitwise_not(Expr a);
/// The bits of `x` read as type `t` (lanes kept) of the same width
/// (intrinsic call "reinterpret").
Expr reinterpret(DataType t, Expr x);
/// The sum of the four products of the bytes of int32 words `a` (unsigned)
/// and `b` (signed): sum_t u8(a >> 8t) * s8(b >> 8t), int32 (intrinsic call
/// "dot4_u8s8"; with an accumulator added to it, the CPU's vpdpbusd where
/// it has AVX-512 VNNI or AVX-VNNI).
Expr dot4_u8s8(Expr a, Expr b);
inline constexpr const char* kDot4U8S8 = "dot4_u8s8";

/// Largest / smallest value of the type: the identities of min / max
/// reductions (+-infinity for floats, the extreme values for integers).
Expr max_value(DataType t);
Expr min_value(DataType t);

/// The constant value if e is an IntImm (optionally under a Broadcast).
const int64_t* as_const_int(const Expr& e);
/// The pointer points into `e`: a temporary would leave it dangling.
const int64_t* as_const_int(Expr&& e) = delete;
bool is_const_int(const Expr& e, int64_t value);

}  // namespace tessera::tir
