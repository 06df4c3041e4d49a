// Constant interval bounds of integer expressions: [min, max] with infinities,
// computed by interval arithmetic from the bounds of bound variables.
#pragma once

#include <cstdint>
#include <string>

namespace tessera::arith {

/// A closed interval [min_value, max_value] of int64 values. kNegInf / kPosInf
/// stand for "unbounded" on that side; arithmetic saturates to them.
struct ConstIntBound {
    static constexpr int64_t kPosInf = INT64_MAX;
    static constexpr int64_t kNegInf = INT64_MIN;
    int64_t min_value = kNegInf;
    int64_t max_value = kPosInf;

    static ConstIntBound everything() { return {}; }
    static ConstIntBound point(int64_t v) { return {v, v}; }
    bool is_const() const { return min_value == max_value; }
    bool bounded() const { return min_value != kNegInf && max_value != kPosInf; }
    bool operator==(const ConstIntBound& o) const {
        return min_value == o.min_value && max_value == o.max_value;
    }
    /// "[0, 7]", "[-inf, 3]".
    std::string str() const;
};

/// Saturating interval arithmetic (an infinite side stays infinite).
ConstIntBound bound_add(const ConstIntBound& a, const ConstIntBound& b);
ConstIntBound bound_neg(const ConstIntBound& a);
ConstIntBound bound_mul(const ConstIntBound& a, const ConstIntBound& b);
/// Floor division / modulo by a constant c != 0.
ConstIntBound bound_floordiv(const ConstIntBound& a, int64_t c);
ConstIntBound bound_floormod(const ConstIntBound& a, int64_t c);
ConstIntBound bound_union(const ConstIntBound& a, const ConstIntBound& b);
ConstIntBound bound_intersect(const ConstIntBound& a, const ConstIntBound& b);

/// Floor division and modulo on int64 (b != 0).
int64_t floor_div(int64_t a, int64_t b);
int64_t floor_mod(int64_t a, int64_t b);

}  // namespace tessera::arith
