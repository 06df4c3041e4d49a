// ONNX's 8-, 4- and 2-bit element types (see the header).
#include "engine/core/small_types.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <map>

namespace tessera {

namespace {

struct Named {
    SmallType type;
    const char* name;
    int bits;
};

constexpr Named kTypes[] = {
    {SmallType::Float8E4M3FN, "float8e4m3fn", 8},
    {SmallType::Float8E4M3FNUZ, "float8e4m3fnuz", 8},
    {SmallType::Float8E5M2, "float8e5m2", 8},
    {SmallType::Float8E5M2FNUZ, "float8e5m2fnuz", 8},
    {SmallType::Float8E8M0, "float8e8m0", 8},
    {SmallType::Float4E2M1, "float4e2m1", 4},
    {SmallType::Int4, "int4", 4},
    {SmallType::UInt4, "uint4", 4},
    {SmallType::Int2, "int2", 2},
    {SmallType::UInt2, "uint2", 2},
};

const Named& named(SmallType t) {
    for (const Named& n : kTypes)
        if (n.type == t) return n;
    return kTypes[0];
}

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// The value of a sign / exponent / mantissa float pattern of `t` (not E8M0).
double decode_float(SmallType t, uint32_t bits) {
    const SmallFloatSpec s = small_float_spec(t);
    const int width = small_type_bits(t);
    const uint32_t sign = (bits >> (width - 1)) & 1;
    const int exp_bits = width - 1 - s.man;
    const uint32_t exp = (bits >> s.man) & ((1u << exp_bits) - 1);
    const uint32_t man = bits & ((1u << s.man) - 1);
    if (s.no_neg_zero && sign && exp == 0 && man == 0) return kNaN;
    if (t == SmallType::Float8E4M3FN && exp == 15 && man == 7) return kNaN;
    if (t == SmallType::Float8E5M2 && exp == 31)
        return man ? kNaN : (sign ? -1.0 : 1.0) * std::numeric_limits<double>::infinity();
    const double v = exp == 0
                         ? std::ldexp(double(man), 1 - s.bias - s.man)
                         : std::ldexp(1.0 + double(man) / double(1u << s.man), int(exp) - s.bias);
    return sign ? -v : v;
}

// Every value of float type `t` by its bit pattern (for encoding).
const std::map<uint32_t, uint32_t>& codes_by_float_bits(SmallType t) {
    static std::map<SmallType, std::map<uint32_t, uint32_t>> tables;
    static const bool built = [] {
        for (const Named& n : kTypes) {
            if (!small_type_is_float(n.type)) continue;
            auto& m = tables[n.type];
            for (uint32_t code = 0; code < (1u << n.bits); ++code) {
                const float v = float(small_bits_to_value(n.type, code));
                if (std::isnan(v)) continue;
                uint32_t fb;
                std::memcpy(&fb, &v, sizeof fb);
                m.emplace(fb, code);  // the first code of a value (+0 before -0 aliases)
            }
        }
        return true;
    }();
    (void)built;
    return tables.at(t);
}

uint32_t nan_code(SmallType t) {
    switch (t) {
        case SmallType::Float8E4M3FN:
            return 0x7f;
        case SmallType::Float8E4M3FNUZ:
        case SmallType::Float8E5M2FNUZ:
            return 0x80;
        case SmallType::Float8E5M2:
            return 0x7f;
        case SmallType::Float8E8M0:
            return 0xff;
        default:
            return 0;  // E2M1 has no NaN: 0
    }
}

}  // namespace

std::optional<SmallType> small_type(const std::string& name) {
    for (const Named& n : kTypes)
        if (name == n.name) return n.type;
    return std::nullopt;
}

const char* small_type_name(SmallType t) { return named(t).name; }
int small_type_bits(SmallType t) { return named(t).bits; }

bool small_type_is_float(SmallType t) {
    return t != SmallType::Int4 && t != SmallType::UInt4 && t != SmallType::Int2 &&
           t != SmallType::UInt2;
}

SmallFloatSpec small_float_spec(SmallType t) {
    SmallFloatSpec s;
    switch (t) {
        case SmallType::Float8E4M3FN:
            s.man = 3;
            s.bias = 7;
            s.max = 448;
            break;
        case SmallType::Float8E4M3FNUZ:
            s.man = 3;
            s.bias = 8;
            s.max = 240;
            s.no_neg_zero = true;
            break;
        case SmallType::Float8E5M2:
            s.man = 2;
            s.bias = 15;
            s.max = 57344;
            s.has_inf = true;
            break;
        case SmallType::Float8E5M2FNUZ:
            s.man = 2;
            s.bias = 16;
            s.max = 57344;
            s.no_neg_zero = true;
            break;
        case SmallType::Float4E2M1:
            s.man = 1;
            s.bias = 1;
            s.max = 6;
            s.has_nan = false;
            break;
        case SmallType::Float8E8M0:
            s.man = 0;
            s.bias = 127;
            s.max = std::ldexp(1.0, 127);
            break;
        default:
            break;
    }
    return s;
}

float round_to_small_float(SmallType t, float x, bool saturate) {
    const SmallFloatSpec s = small_float_spec(t);
    if (std::isnan(x)) return s.has_nan ? kNaN : 0.0f;
    double a = std::fabs(double(x));
    if (t == SmallType::Float8E8M0) {  // powers of two 2^-127 .. 2^127, rounded up
        if (a <= std::ldexp(1.0, -127)) return float(std::ldexp(1.0, -127));
        if (std::isinf(a) && !saturate) return kNaN;
        if (a >= s.max) return float(s.max);
        int e = 0;
        const double m = std::frexp(a, &e);  // a = m 2^e, m in [0.5, 1)
        return float(m == 0.5 ? a : std::ldexp(1.0, e));
    }
    if (saturate || !s.has_nan) a = std::min(a, s.max);  // infinity too
    // Nearest multiple of the quantum of a's binade (ties to even: nearbyint).
    const int e = a == 0 ? 0 : std::max(std::ilogb(a), 1 - s.bias);
    const double q = std::ldexp(1.0, e - s.man);
    double r = std::isinf(a) ? a : std::nearbyint(a / q) * q;
    if (r > s.max) r = s.has_inf ? std::numeric_limits<double>::infinity() : double(kNaN);
    if (std::signbit(x) && !(s.no_neg_zero && r == 0)) r = -r;
    return float(r);
}

int32_t wrap_to_small_int(SmallType t, int64_t v) {
    const int bits = small_type_bits(t);
    const int64_t span = int64_t(1) << bits;
    int64_t w = ((v % span) + span) % span;
    if ((t == SmallType::Int4 || t == SmallType::Int2) && w >= span / 2) w -= span;
    return int32_t(w);
}

double small_bits_to_value(SmallType t, uint32_t bits) {
    const int width = small_type_bits(t);
    bits &= (1u << width) - 1;
    switch (t) {
        case SmallType::Float8E8M0:
            return bits == 0xff ? double(kNaN) : std::ldexp(1.0, int(bits) - 127);
        case SmallType::Int4:
        case SmallType::Int2:
            return bits >= (1u << (width - 1)) ? double(int(bits) - (1 << width)) : double(bits);
        case SmallType::UInt4:
        case SmallType::UInt2:
            return double(bits);
        default:
            return decode_float(t, bits);
    }
}

uint32_t value_to_small_bits(SmallType t, double x, bool saturate) {
    const int width = small_type_bits(t);
    if (!small_type_is_float(t)) {
        const double v = std::isfinite(x) ? std::trunc(x) : 0.0;
        return uint32_t(wrap_to_small_int(t, int64_t(v))) & ((1u << width) - 1);
    }
    const float r = round_to_small_float(t, float(x), saturate);
    if (std::isnan(r)) return nan_code(t);
    uint32_t fb;
    std::memcpy(&fb, &r, sizeof fb);
    const auto& codes = codes_by_float_bits(t);
    auto it = codes.find(fb);
    return it != codes.end() ? it->second : nan_code(t);
}

}  // namespace tessera
