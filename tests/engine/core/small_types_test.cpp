// The 8-, 4- and 2-bit ONNX element types (core/small_types.h): decoding of
// known bit patterns, and rounding against a brute-force reference built
// from the decoded value set alone (nearest value, ties to the even code).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "engine/core/small_types.h"

namespace tessera {
namespace {

constexpr SmallType kFloats[] = {SmallType::Float8E4M3FN, SmallType::Float8E4M3FNUZ,
                                 SmallType::Float8E5M2, SmallType::Float8E5M2FNUZ,
                                 SmallType::Float4E2M1};

TEST(SmallTypes, KnownBitPatternsDecode) {
    EXPECT_EQ(small_bits_to_value(SmallType::Float8E4M3FN, 0x7e), 448.0);
    EXPECT_TRUE(std::isnan(small_bits_to_value(SmallType::Float8E4M3FN, 0x7f)));
    EXPECT_EQ(small_bits_to_value(SmallType::Float8E4M3FN, 0x01), std::ldexp(1.0, -9));
    EXPECT_EQ(small_bits_to_value(SmallType::Float8E4M3FN, 0xb8), -1.0);
    EXPECT_EQ(small_bits_to_value(SmallType::Float8E4M3FNUZ, 0x7f), 240.0);
    EXPECT_TRUE(std::isnan(small_bits_to_value(SmallType::Float8E4M3FNUZ, 0x80)));
    EXPECT_EQ(small_bits_to_value(SmallType::Float8E5M2, 0x7b), 57344.0);
    EXPECT_TRUE(std::isinf(small_bits_to_value(SmallType::Float8E5M2, 0x7c)));
    EXPECT_EQ(small_bits_to_value(SmallType::Float8E5M2FNUZ, 0x01), std::ldexp(1.0, -17));
    EXPECT_EQ(small_bits_to_value(SmallType::Float8E8M0, 127), 1.0);
    EXPECT_EQ(small_bits_to_value(SmallType::Float4E2M1, 0x7), 6.0);
    EXPECT_EQ(small_bits_to_value(SmallType::Float4E2M1, 0x1), 0.5);
    EXPECT_EQ(small_bits_to_value(SmallType::Int4, 0x8), -8.0);
    EXPECT_EQ(small_bits_to_value(SmallType::UInt2, 0x3), 3.0);
    EXPECT_EQ(small_bits_to_value(SmallType::Int2, 0x2), -2.0);
}

// The nearest finite value of `t` to x (|x| <= max), ties to the even code.
float brute_force_round(SmallType t, float x) {
    double best = NAN;
    uint32_t best_code = 0;
    for (uint32_t code = 0; code < (1u << small_type_bits(t)); ++code) {
        const double v = small_bits_to_value(t, code);
        if (!std::isfinite(v)) continue;
        const double d = std::fabs(v - double(x)), bd = std::fabs(best - double(x));
        if (std::isnan(best) || d < bd || (d == bd && (code & 1) == 0 && (best_code & 1) != 0)) {
            best = v;
            best_code = code;
        }
    }
    return float(best);
}

TEST(SmallTypes, RoundingIsToTheNearestValueTiesToEven) {
    std::mt19937 rng(7);
    for (SmallType t : kFloats) {
        const SmallFloatSpec s = small_float_spec(t);
        std::vector<float> xs;
        std::uniform_real_distribution<double> uniform(-s.max, s.max);
        for (int i = 0; i < 3000; ++i) xs.push_back(float(uniform(rng)));
        // Every value and every midpoint between neighbours (the ties).
        std::vector<double> values;
        for (uint32_t code = 0; code < (1u << small_type_bits(t)); ++code)
            if (std::isfinite(small_bits_to_value(t, code)))
                values.push_back(small_bits_to_value(t, code));
        std::sort(values.begin(), values.end());
        for (size_t i = 0; i + 1 < values.size(); ++i) {
            xs.push_back(float(values[i]));
            xs.push_back(float((values[i] + values[i + 1]) / 2));
        }
        for (float x : xs) {
            const float got = round_to_small_float(t, x), want = brute_force_round(t, x);
            ASSERT_EQ(got, want) << small_type_name(t) << " of " << x;
            if (got == 0 && s.no_neg_zero) {
                EXPECT_FALSE(std::signbit(got)) << small_type_name(t) << " has no -0";
            }
        }
    }
}

TEST(SmallTypes, OutOfRangeSaturatesOrOverflowsByType) {
    for (SmallType t : kFloats) {
        const SmallFloatSpec s = small_float_spec(t);
        EXPECT_EQ(round_to_small_float(t, 1e6f), float(s.max)) << small_type_name(t);
        EXPECT_EQ(round_to_small_float(t, -INFINITY), -float(s.max)) << small_type_name(t);
        const float over = round_to_small_float(t, 1e6f, /*saturate=*/false);
        if (t == SmallType::Float4E2M1)
            EXPECT_EQ(over, 6.0f);  // no inf, no NaN: always saturates
        else if (s.has_inf)
            EXPECT_TRUE(std::isinf(over)) << small_type_name(t);
        else
            EXPECT_TRUE(std::isnan(over)) << small_type_name(t);
    }
    EXPECT_EQ(round_to_small_float(SmallType::Float4E2M1, NAN), 0.0f);
    EXPECT_TRUE(std::isnan(round_to_small_float(SmallType::Float8E4M3FN, NAN)));
}

TEST(SmallTypes, E8M0RoundsUpToPowersOfTwo) {
    EXPECT_EQ(round_to_small_float(SmallType::Float8E8M0, 1.1f), 2.0f);
    EXPECT_EQ(round_to_small_float(SmallType::Float8E8M0, 0.124f), 0.125f);
    EXPECT_EQ(round_to_small_float(SmallType::Float8E8M0, 4.0f), 4.0f);
    EXPECT_EQ(round_to_small_float(SmallType::Float8E8M0, 0.0f), float(std::ldexp(1.0, -127)));
    EXPECT_EQ(round_to_small_float(SmallType::Float8E8M0, 1e38f), float(std::ldexp(1.0, 127)));
}

TEST(SmallTypes, EveryCodeEncodesBackToItself) {
    for (SmallType t : {SmallType::Float8E4M3FN, SmallType::Float8E4M3FNUZ, SmallType::Float8E5M2,
                        SmallType::Float8E5M2FNUZ, SmallType::Float8E8M0, SmallType::Float4E2M1,
                        SmallType::Int4, SmallType::UInt4, SmallType::Int2, SmallType::UInt2}) {
        for (uint32_t code = 0; code < (1u << small_type_bits(t)); ++code) {
            const double v = small_bits_to_value(t, code);
            if (std::isnan(v)) continue;
            EXPECT_EQ(value_to_small_bits(t, v, /*saturate=*/false), code)
                << small_type_name(t) << " code " << code << " (" << v << ")";
        }
    }
    EXPECT_EQ(wrap_to_small_int(SmallType::Int4, 9), -7);
    EXPECT_EQ(wrap_to_small_int(SmallType::UInt4, -9), 7);
    EXPECT_EQ(wrap_to_small_int(SmallType::Int2, 3), -1);
}

}  // namespace
}  // namespace tessera
