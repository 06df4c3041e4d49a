// ONNX's 8-, 4- and 2-bit element types (opsets 19 to 25): float8 E4M3FN,
// E4M3FNUZ, E5M2, E5M2FNUZ and E8M0, float4 E2M1, int4/uint4, int2/uint2.
// Tessera computes them in float32 / int32 (the boundary-type policy,
// onnx_dtype.cpp); these are their value sets, rounding and bit patterns as
// ONNX's reference (ml_dtypes) defines them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace tessera {

enum class SmallType {
    Float8E4M3FN,
    Float8E4M3FNUZ,
    Float8E5M2,
    Float8E5M2FNUZ,
    Float8E8M0,
    Float4E2M1,
    Int4,
    UInt4,
    Int2,
    UInt2,
};

/// The type of a declared name ("float8e4m3fn", "int4", ...), or nullopt.
std::optional<SmallType> small_type(const std::string& name);
/// The declared name of a type.
const char* small_type_name(SmallType t);
/// Bits per element: 8, 4 or 2.
int small_type_bits(SmallType t);
bool small_type_is_float(SmallType t);

/// Parameters of the float types other than E8M0: `man` mantissa bits,
/// `bias`, the largest finite value, and the special-value rules.
struct SmallFloatSpec {
    int man = 0;
    int bias = 0;
    double max = 0;
    bool has_inf = false;    // E5M2
    bool no_neg_zero = false;  // *FNUZ: -0 is the NaN pattern, so -0 -> +0
    bool has_nan = true;     // not E2M1 (NaN becomes 0 there)
};
SmallFloatSpec small_float_spec(SmallType t);

/// `x` rounded to the value set of float type `t` (nearest, ties to even;
/// E8M0 rounds up to a power of two). Out of range: the largest finite value
/// when `saturate` (always for E2M1), else infinity (E5M2) or NaN.
float round_to_small_float(SmallType t, float x, bool saturate = true);
/// `v` wrapped (two's complement) to integer type `t`.
int32_t wrap_to_small_int(SmallType t, int64_t v);

/// The value of bit pattern `bits` of `t` (integers as float for the integer types).
double small_bits_to_value(SmallType t, uint32_t bits);
/// The bit pattern of `x` in float type `t` (rounded first) or of the integer
/// `x` wrapped to integer type `t`.
uint32_t value_to_small_bits(SmallType t, double x, bool saturate = true);

}  // namespace tessera
