// Small helpers the CPU schedule rules (and the CPU sketch) share.
#pragma once

#include <cstdint>

namespace tessera::topi {

/// Kernels with less work than this stay on one thread (fork/join costs a
/// few microseconds).
inline constexpr int64_t kMinParallelWork = int64_t(1) << 15;

/// Largest divisor of n in [lo, hi], or hi when there is none (a tail).
inline int64_t pick_factor(int64_t n, int64_t lo, int64_t hi) {
    if (n <= hi) return n;
    for (int64_t f = hi; f >= lo; --f)
        if (n % f == 0) return f;
    return hi;
}

}  // namespace tessera::topi
