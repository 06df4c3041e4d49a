// Saturating interval arithmetic for ConstIntBound.
#include "engine/arith/const_int_bound.h"

#include <algorithm>

namespace tessera::arith {

namespace {

using B = ConstIntBound;

bool is_inf(int64_t v) { return v == B::kPosInf || v == B::kNegInf; }

int64_t clamp128(__int128 v) {
    if (v >= __int128(B::kPosInf)) return B::kPosInf;
    if (v <= __int128(B::kNegInf)) return B::kNegInf;
    return int64_t(v);
}

// a + b where an infinite operand wins; +inf + -inf is taken as `tie`.
int64_t add_sat(int64_t a, int64_t b, int64_t tie) {
    bool ia = is_inf(a), ib = is_inf(b);
    if (ia && ib && a != b) return tie;
    if (ia) return a;
    if (ib) return b;
    return clamp128(__int128(a) + __int128(b));
}

int64_t mul_sat(int64_t a, int64_t b) {
    if (a == 0 || b == 0) return 0;
    if (is_inf(a) || is_inf(b)) return ((a < 0) != (b < 0)) ? B::kNegInf : B::kPosInf;
    return clamp128(__int128(a) * __int128(b));
}

int64_t neg_sat(int64_t a) {
    if (a == B::kNegInf) return B::kPosInf;
    if (a == B::kPosInf) return B::kNegInf;
    return -a;
}

int64_t div_sat(int64_t a, int64_t c) {
    if (is_inf(a)) return (a < 0) != (c < 0) ? B::kNegInf : B::kPosInf;
    return floor_div(a, c);
}

}  // namespace

std::string ConstIntBound::str() const {
    auto s = [](int64_t v) {
        if (v == kNegInf) return std::string("-inf");
        if (v == kPosInf) return std::string("+inf");
        return std::to_string(v);
    };
    return "[" + s(min_value) + ", " + s(max_value) + "]";
}

int64_t floor_div(int64_t a, int64_t b) {
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
    return q;
}

int64_t floor_mod(int64_t a, int64_t b) { return a - floor_div(a, b) * b; }

ConstIntBound bound_add(const B& a, const B& b) {
    return {add_sat(a.min_value, b.min_value, B::kNegInf),
            add_sat(a.max_value, b.max_value, B::kPosInf)};
}

ConstIntBound bound_neg(const B& a) { return {neg_sat(a.max_value), neg_sat(a.min_value)}; }

ConstIntBound bound_mul(const B& a, const B& b) {
    int64_t c[4] = {mul_sat(a.min_value, b.min_value), mul_sat(a.min_value, b.max_value),
                    mul_sat(a.max_value, b.min_value), mul_sat(a.max_value, b.max_value)};
    return {*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
}

ConstIntBound bound_floordiv(const B& a, int64_t c) {
    int64_t x = div_sat(a.min_value, c), y = div_sat(a.max_value, c);
    return {std::min(x, y), std::max(x, y)};
}

ConstIntBound bound_floormod(const B& a, int64_t c) {
    if (c > 0) {
        if (a.min_value >= 0 && a.max_value < c) return a;
        if (a.bounded() && floor_div(a.min_value, c) == floor_div(a.max_value, c))
            return {floor_mod(a.min_value, c), floor_mod(a.max_value, c)};
        return {0, c - 1};
    }
    return {c + 1, 0};
}

ConstIntBound bound_union(const B& a, const B& b) {
    return {std::min(a.min_value, b.min_value), std::max(a.max_value, b.max_value)};
}

ConstIntBound bound_intersect(const B& a, const B& b) {
    return {std::max(a.min_value, b.min_value), std::min(a.max_value, b.max_value)};
}

}  // namespace tessera::arith
