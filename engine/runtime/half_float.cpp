// float16 / bfloat16 <-> float32 on bit patterns (round to nearest even).
#include "engine/runtime/half_float.h"

#include <cstring>

#include "engine/core/error.h"
#include "engine/core/small_types.h"

namespace tessera::runtime {

namespace {

uint32_t bits_of(float f) {
    uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return u;
}

float float_of(uint32_t u) {
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
}

// Drops the low `shift` bits of `m`, rounding to nearest with ties to even.
uint32_t shift_round_even(uint32_t m, int shift) {
    if (shift <= 0) return m;
    if (shift > 31) return 0;
    uint32_t kept = m >> shift;
    uint32_t rest = m & ((uint32_t(1) << shift) - 1);
    uint32_t half = uint32_t(1) << (shift - 1);
    if (rest > half || (rest == half && (kept & 1))) ++kept;
    return kept;
}

}  // namespace

uint16_t float_to_half_bits(float f) {
    const uint32_t u = bits_of(f);
    const uint16_t sign = uint16_t((u >> 16) & 0x8000);
    const int32_t exp = int32_t((u >> 23) & 0xff);
    const uint32_t mant = u & 0x7fffff;
    if (exp == 0xff)  // inf stays inf; NaN keeps its top payload bits and is made quiet
        return uint16_t(sign | 0x7c00 | (mant ? 0x200 | (mant >> 13) : 0));
    // Value = 1.mant * 2^(exp-127); half normals have exponents -14..15.
    const int32_t e = exp - 127;
    if (e > 15) return uint16_t(sign | 0x7c00);
    if (e >= -14) {
        // Normal half: round the 23-bit mantissa to 10 bits; a carry moves
        // into the exponent field (and up to infinity), which is correct.
        uint32_t m = shift_round_even(mant, 13);
        return uint16_t(sign + (uint32_t(e + 15) << 10) + m);
    }
    if (exp == 0) return sign;  // float32 zero or subnormal (< 2^-126): rounds to zero
    // Subnormal half: value = (1.mant) * 2^e = m24 * 2^(e-23), in units of 2^-24.
    const uint32_t m24 = mant | 0x800000;
    const int shift = -1 - e;  // e-23 = -24 + (e+1): drop (-e-1) bits, e <= -15 so >= 14
    return uint16_t(sign | shift_round_even(m24, shift));
}

float half_bits_to_float(uint16_t h) {
    const uint32_t sign = uint32_t(h & 0x8000) << 16;
    const uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
    if (exp == 0x1f) return float_of(sign | 0x7f800000u | (mant << 13));
    if (exp != 0) return float_of(sign | ((exp + 112) << 23) | (mant << 13));
    // Zero or subnormal: mant * 2^-24 is exact in float32.
    const float v = float(mant) * 5.9604644775390625e-8f;
    return sign ? -v : v;
}

uint16_t float_to_bfloat16_bits(float f) {
    const uint32_t u = bits_of(f);
    if ((u & 0x7fffffff) > 0x7f800000)  // NaN: keep sign and top payload, make quiet
        return uint16_t((u >> 16) | 0x40);
    // Rounding the low 16 bits with ties to even; a carry into the exponent
    // gives the next binade or infinity, as it should.
    const uint32_t rounded = u + 0x7fff + ((u >> 16) & 1);
    return uint16_t(rounded >> 16);
}

float bfloat16_bits_to_float(uint16_t b) { return float_of(uint32_t(b) << 16); }

}  // namespace tessera::runtime

namespace tessera::runtime {

void narrow_to_declared(DType dtype, void* data, int64_t count, const std::string& declared) {
    auto expect = [&](DType want) {
        TS_USER_CHECK(dtype == want)
            << declared << " values are computed as " << graph::dtype_name(want) << ", got "
            << graph::dtype_name(dtype);
    };
    if (declared.empty()) return;
    if (declared == "float16" || declared == "bfloat16") {
        expect(DType::Float32);
        float* f = static_cast<float*>(data);
        const bool half = declared == "float16";
        for (int64_t i = 0; i < count; ++i)
            f[i] = half ? round_to_half(f[i]) : round_to_bfloat16(f[i]);
    } else if (declared == "int16" || declared == "uint16") {
        expect(DType::Int32);
        int32_t* v = static_cast<int32_t*>(data);
        const bool is_signed = declared == "int16";
        for (int64_t i = 0; i < count; ++i)
            v[i] = is_signed ? int32_t(int16_t(uint16_t(v[i]))) : int32_t(uint16_t(v[i]));
    } else if (declared == "uint32") {
        expect(DType::Int64);
        int64_t* v = static_cast<int64_t*>(data);
        for (int64_t i = 0; i < count; ++i) v[i] = int64_t(uint32_t(v[i]));
    } else if (auto small = small_type(declared)) {
        if (small_type_is_float(*small)) {
            expect(DType::Float32);
            float* f = static_cast<float*>(data);
            for (int64_t i = 0; i < count; ++i)
                f[i] = round_to_small_float(*small, f[i], /*saturate=*/false);
        } else {
            expect(DType::Int32);
            int32_t* v = static_cast<int32_t*>(data);
            for (int64_t i = 0; i < count; ++i) v[i] = wrap_to_small_int(*small, v[i]);
        }
    } else {
        TS_USER_CHECK(declared == "uint64") << "unknown narrow element type '" << declared << "'";
        expect(DType::Int64);
    }
}

}  // namespace tessera::runtime
