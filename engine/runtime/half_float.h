// IEEE binary16 (float16) and bfloat16 <-> float32 bit conversions, round to
// nearest even, for data crossing the graph boundary (Tessera computes float32).
#pragma once

#include <cstdint>
#include <string>

#include "engine/graph/graph.h"

namespace tessera::runtime {

/// The float16 bit pattern nearest to `f` (ties to even); overflow gives
/// infinity, NaN stays NaN (quiet, sign kept), tiny values become subnormals or zero.
uint16_t float_to_half_bits(float f);
/// The float32 value of a float16 bit pattern (exact; subnormals, inf, NaN included).
float half_bits_to_float(uint16_t h);
/// The bfloat16 bit pattern nearest to `f` (ties to even); NaN stays NaN.
uint16_t float_to_bfloat16_bits(float f);
/// The float32 value of a bfloat16 bit pattern (exact).
float bfloat16_bits_to_float(uint16_t b);

/// `f` rounded to float16 precision and range (half_bits_to_float(float_to_half_bits(f))).
inline float round_to_half(float f) { return half_bits_to_float(float_to_half_bits(f)); }
/// `f` rounded to bfloat16 precision.
inline float round_to_bfloat16(float f) { return bfloat16_bits_to_float(float_to_bfloat16_bits(f)); }

}  // namespace tessera::runtime

namespace tessera::runtime {

using graph::DType;

/// Limits `count` values of compute dtype `dtype` at `data` to the value set of
/// the declared narrow type `declared`: "float16"/"bfloat16" and the float8/
/// float4 types (core/small_types.h) round float32 values, "int16"/"uint16"
/// and int4/uint4/int2/uint2 wrap int32 values, "uint32" wraps int64 values;
/// "uint64" (int64 bits) and "" leave them. UserError when `dtype` does not
/// fit `declared` or `declared` is unknown.
void narrow_to_declared(DType dtype, void* data, int64_t count, const std::string& declared);

}  // namespace tessera::runtime
