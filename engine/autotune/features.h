// Cost-model features of a scheduled kernel, extracted from its loop IR
// (blocks lowered): arithmetic counts, loop extents and annotations, buffer
// access strides and reuse, allocation sizes. Counts enter as log2(1 + x).
#pragma once

#include <string>
#include <vector>

#include "engine/tir/stmt.h"

namespace tessera::autotune {

/// Raw (not log-scaled) statistics, exposed for tests.
struct KernelStats {
    double float_ops = 0;     // float add/sub/mul/div/min/max (times lanes), all stores
    double float_mul = 0;
    double float_add = 0;
    double int_ops = 0;       // integer arithmetic in indices and values
    double math_calls = 0;    // exp, tanh, ...
    double iterations = 0;    // iterations of the main store (the costliest one)
    int depth = 0;            // loops around the main store
    int64_t innermost_extent = 0;
    int64_t vector_lanes = 1;      // extent of the innermost vectorized loop (1 if none)
    int64_t unrolled = 1;          // product of the unrolled extents around the main store
    int64_t parallel = 1;          // product of parallel / thread-bound extents around it
    int accesses = 0;              // buffer accesses of the main store (store + loads)
    int stride0 = 0, stride1 = 0, strided = 0;  // by stride along the innermost loop
    double bytes_l1_iters = 0;     // iterations inside the deepest loop whose footprint fits 32 KiB
    double bytes_l2_iters = 0;     // ... fits 1 MiB
    double footprint_bytes = 0;    // bytes the main store touches in total
    double alloc_bytes = 0;        // local/shared allocations
    int allocs = 0;
    int stores = 0;
};

KernelStats kernel_stats(const tir::PrimFunc& scheduled);

/// The fixed-length feature vector (feature_names().size() entries).
std::vector<float> extract_features(const tir::PrimFunc& scheduled);
const std::vector<std::string>& feature_names();

}  // namespace tessera::autotune
