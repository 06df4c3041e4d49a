// Small statistics of timings, shared by the executor's timer and the benchmarks.
#pragma once

#include <algorithm>
#include <vector>

namespace tessera {

/// The median of `v` (the mean of the two middle values for an even count); 0 when empty.
inline double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace tessera
