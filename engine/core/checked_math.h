// Overflow-checked size arithmetic: every element count, byte size and shape
// product computed from something a user gave (a model, a trace, a package)
// goes through these, so that a huge dimension is an error, never a wrap.
#pragma once

#include <cstdint>
#include <vector>

namespace tessera {

/// The most elements any tensor Tessera handles may have (2^40).
constexpr int64_t kMaxTensorElements = int64_t(1) << 40;

/// a * b into *out; false (and *out untouched) when it overflows int64.
inline bool checked_mul(int64_t a, int64_t b, int64_t* out) {
    int64_t r = 0;
    if (__builtin_mul_overflow(a, b, &r)) return false;
    *out = r;
    return true;
}

/// The element count of `shape`; -1 when a dimension is negative or the
/// product exceeds `limit` (no intermediate product can wrap).
inline int64_t checked_elements(const std::vector<int64_t>& shape,
                                int64_t limit = kMaxTensorElements) {
    for (int64_t d : shape) {
        if (d < 0) return -1;
        if (d == 0) return 0;
    }
    int64_t n = 1;
    for (int64_t d : shape) {
        if (n > limit / d) return -1;
        n *= d;
    }
    return n;
}

}  // namespace tessera
