// float16 / bfloat16 <-> float32 bit conversions: every half value, ties to
// even, subnormals, overflow, inf and NaN, against the compiler's _Float16
// and an independent double-precision rounding.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "engine/core/error.h"
#include "engine/runtime/half_float.h"

namespace tessera::runtime {
namespace {

uint32_t bits(float f) {
    uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return u;
}

float from_bits(uint32_t u) {
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
}

// x rounded to nearest even on `sig` significant bits with smallest quantum
// 2^min_exp and overflow to infinity at `overflow` (exact in double).
double reference_round(double x, int sig, int min_exp, double overflow) {
    if (x == 0 || std::isinf(x) || std::isnan(x)) return x;
    int e;
    std::frexp(x, &e);  // |x| in [2^(e-1), 2^e)
    double q = std::ldexp(1.0, std::max(e - sig, min_exp));
    double r = std::nearbyint(x / q) * q;  // the FPU rounds ties to even
    if (std::fabs(r) >= overflow) return std::copysign(INFINITY, x);
    return r;
}

TEST(HalfFloat, EveryHalfRoundTripsExactly) {
    for (uint32_t h = 0; h < 65536; ++h) {
        float f = half_bits_to_float(uint16_t(h));
        bool nan = (h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0;
        if (nan) {
            EXPECT_TRUE(std::isnan(f)) << std::hex << h;
            EXPECT_TRUE(std::isnan(half_bits_to_float(float_to_half_bits(f)))) << std::hex << h;
            continue;
        }
        ASSERT_EQ(float_to_half_bits(f), h) << std::hex << h;
    }
}

TEST(HalfFloat, DecodesSpecialValues) {
    EXPECT_EQ(half_bits_to_float(0x3c00), 1.0f);
    EXPECT_EQ(half_bits_to_float(0xc000), -2.0f);
    EXPECT_EQ(half_bits_to_float(0x7bff), 65504.0f);
    EXPECT_EQ(half_bits_to_float(0x0001), std::ldexp(1.0f, -24));  // smallest subnormal
    EXPECT_EQ(half_bits_to_float(0x03ff), std::ldexp(1023.0f, -24));
    EXPECT_EQ(half_bits_to_float(0x0400), std::ldexp(1.0f, -14));  // smallest normal
    EXPECT_EQ(half_bits_to_float(0x7c00), INFINITY);
    EXPECT_EQ(half_bits_to_float(0xfc00), -INFINITY);
    EXPECT_TRUE(std::signbit(half_bits_to_float(0x8000)));
}

TEST(HalfFloat, TiesRoundToEven) {
    // Half way between 1 and 1 + 2^-10 goes down to the even 1; between
    // 1 + 2^-10 and 1 + 2^-9 it goes up to the even 1 + 2^-9.
    EXPECT_EQ(float_to_half_bits(1.0f + std::ldexp(1.0f, -11)), 0x3c00);
    EXPECT_EQ(float_to_half_bits(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
    EXPECT_EQ(float_to_half_bits(nextafterf(1.0f + std::ldexp(1.0f, -11), 2.0f)), 0x3c01);
    // Subnormal ties: 2^-25 is half the smallest subnormal (to 0); 3 * 2^-25 goes to 2 * 2^-24.
    EXPECT_EQ(float_to_half_bits(std::ldexp(1.0f, -25)), 0x0000);
    EXPECT_EQ(float_to_half_bits(std::ldexp(3.0f, -25)), 0x0002);
    EXPECT_EQ(float_to_half_bits(-std::ldexp(3.0f, -25)), 0x8002);
    EXPECT_EQ(float_to_half_bits(nextafterf(std::ldexp(1.0f, -25), 1.0f)), 0x0001);
    // The largest subnormal rounds up into the smallest normal.
    EXPECT_EQ(float_to_half_bits(std::ldexp(1023.5f, -24)), 0x0400);
    EXPECT_EQ(float_to_half_bits(std::ldexp(1.0f, -40)), 0x0000);  // underflow
    EXPECT_EQ(float_to_half_bits(from_bits(1)), 0x0000);             // float32 subnormal
}

TEST(HalfFloat, OverflowInfinityAndNan) {
    EXPECT_EQ(float_to_half_bits(65504.0f), 0x7bff);
    EXPECT_EQ(float_to_half_bits(65519.0f), 0x7bff);
    EXPECT_EQ(float_to_half_bits(65520.0f), 0x7c00);  // the tie goes to the "even" infinity
    EXPECT_EQ(float_to_half_bits(1e10f), 0x7c00);
    EXPECT_EQ(float_to_half_bits(-1e10f), 0xfc00);
    EXPECT_EQ(float_to_half_bits(INFINITY), 0x7c00);
    EXPECT_EQ(float_to_half_bits(-INFINITY), 0xfc00);
    EXPECT_EQ(float_to_half_bits(-0.0f), 0x8000);
    uint16_t n = float_to_half_bits(NAN);
    EXPECT_EQ(n & 0x7c00, 0x7c00);
    EXPECT_NE(n & 0x3ff, 0);
    // A NaN whose payload sits only in the low float32 bits stays NaN (not infinity).
    EXPECT_NE(float_to_half_bits(from_bits(0x7f800001)) & 0x3ff, 0);
}

TEST(HalfFloat, RandomFloatsMatchDoubleRounding) {
    std::mt19937 rng(7);
    for (int i = 0; i < 400000; ++i) {
        // Exponents over the whole half range and past it, random mantissas.
        float f = from_bits((rng() & 0x807fffffu) | (uint32_t(100 + rng() % 60) << 23));
        double want = reference_round(f, 11, -24, 65520.0);
        ASSERT_EQ(round_to_half(f), float(want)) << std::hexfloat << f;
    }
}

#ifdef __FLT16_MAX__
TEST(HalfFloat, MatchesCompilerFloat16) {
    std::mt19937 rng(11);
    for (int i = 0; i < 400000; ++i) {
        float f = from_bits(rng());
        if (std::isnan(f)) continue;
        _Float16 h = static_cast<_Float16>(f);
        uint16_t want;
        std::memcpy(&want, &h, sizeof want);
        ASSERT_EQ(float_to_half_bits(f), want) << std::hexfloat << f;
    }
}
#endif

TEST(BFloat16, TiesRoundToEvenAndSpecials) {
    EXPECT_EQ(float_to_bfloat16_bits(1.0f), 0x3f80);
    EXPECT_EQ(float_to_bfloat16_bits(1.0f + std::ldexp(1.0f, -8)), 0x3f80);      // tie, down
    EXPECT_EQ(float_to_bfloat16_bits(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);  // tie, up
    EXPECT_EQ(float_to_bfloat16_bits(from_bits(0x3f808001)), 0x3f81);
    EXPECT_EQ(float_to_bfloat16_bits(from_bits(0x7f7fffff)), 0x7f80);  // FLT_MAX -> inf
    EXPECT_EQ(float_to_bfloat16_bits(-INFINITY), 0xff80);
    EXPECT_EQ(float_to_bfloat16_bits(from_bits(0x00008000)), 0x0000);  // subnormal tie, even
    EXPECT_EQ(float_to_bfloat16_bits(from_bits(0x00018000)), 0x0002);
    EXPECT_EQ(float_to_bfloat16_bits(-0.0f), 0x8000);
    uint16_t n = float_to_bfloat16_bits(from_bits(0x7f800001));
    EXPECT_TRUE(std::isnan(bfloat16_bits_to_float(n)));
    EXPECT_EQ(bfloat16_bits_to_float(0x4049), 3.140625f);
}

TEST(BFloat16, RandomFloatsMatchDoubleRounding) {
    std::mt19937 rng(5);
    for (int i = 0; i < 400000; ++i) {
        float f = from_bits(rng());
        if (std::isnan(f) || std::isinf(f)) continue;
        double want = reference_round(f, 8, -133, std::ldexp(1.0, 128));
        ASSERT_EQ(round_to_bfloat16(f), float(want)) << std::hexfloat << f;
    }
}

TEST(NarrowToDeclared, WrapsIntegersAndRoundsFloats) {
    int32_t i16[] = {32767, 32768, -32769, 70000, -5};
    narrow_to_declared(DType::Int32, i16, 5, "int16");
    EXPECT_EQ(std::vector<int32_t>(i16, i16 + 5), (std::vector<int32_t>{32767, -32768, 32767, 4464, -5}));
    int32_t u16[] = {65535, 65536, -1};
    narrow_to_declared(DType::Int32, u16, 3, "uint16");
    EXPECT_EQ(std::vector<int32_t>(u16, u16 + 3), (std::vector<int32_t>{65535, 0, 65535}));
    int64_t u32[] = {int64_t(1) << 32, -1, 4294967295};
    narrow_to_declared(DType::Int64, u32, 3, "uint32");
    EXPECT_EQ(std::vector<int64_t>(u32, u32 + 3), (std::vector<int64_t>{0, 4294967295, 4294967295}));
    float f[] = {1.0f + std::ldexp(1.0f, -11), 1e6f};
    narrow_to_declared(DType::Float32, f, 2, "float16");
    EXPECT_EQ(f[0], 1.0f);
    EXPECT_EQ(f[1], INFINITY);
    EXPECT_THROW(narrow_to_declared(DType::Float32, f, 2, "uint32"), UserError);
    EXPECT_THROW(narrow_to_declared(DType::Float32, f, 2, "float8"), UserError);
}

}  // namespace
}  // namespace tessera::runtime
