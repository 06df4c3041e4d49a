// Cost-model features of a scheduled kernel, extracted from its loop IR
// (blocks lowered, "local" and "shared" buffers compacted as code generation
// does): arithmetic counts, loop extents and annotations of the main
// statement's nest, buffer access strides and reuse, allocation sizes per
// scope, software prefetches. Counts enter as log2(1 + x).
#pragma once

#include <string>
#include <vector>

#include "engine/tir/stmt.h"

namespace tessera::autotune {

/// Version of the feature vector's layout and meaning. Bump it whenever a
/// feature is added, removed, reordered or changes meaning. Nothing persisted
/// depends on it today: tuning records store decisions (the cost model is
/// retrained from them with fresh features each session) and no model file is
/// written; whoever starts saving models or feature rows must store it too.
/// 2: per-scope allocation bytes after compaction, the main statement chosen
///    as the reduction update (then the most float work), nested loops bound
///    to an already bound thread axis count once, prefetches.
inline constexpr int kFeatureVersion = 2;

/// Raw (not log-scaled) statistics, exposed for tests.
///
/// The "main statement" is the BufferStore that describes the kernel: a
/// reduction update (its buffer is read at the same indices in its value)
/// over a plain store, then the one with the most float work (float ops and
/// math calls times iterations), then the one with the most iterations; the
/// first of equals. Copies into shared or local caches, initializations and
/// write-backs are therefore never chosen over the computation they serve.
/// A thread-bound loop nested in a loop bound to the same thread axis (a
/// cooperative fetch inside the compute's thread loop) is the same threads,
/// so it counts with extent 1. Software prefetches (tir.prefetch calls) are
/// not loads: they are only counted in `prefetches`.
struct KernelStats {
    double float_ops = 0;  // float add/sub/mul/div/min/max (times lanes), all stores
    double float_mul = 0;
    double float_add = 0;
    double int_ops = 0;     // integer arithmetic in indices and values
    double math_calls = 0;  // exp, tanh, ...
    double iterations = 0;  // iterations of the main statement
    int depth = 0;          // loops around the main statement
    int64_t innermost_extent = 0;
    int64_t vector_lanes = 1;  // extent of the innermost vectorized loop (1 if none)
    int64_t unrolled = 1;      // product of the unrolled extents around the main statement
    int64_t parallel = 1;      // product of parallel / thread-bound extents around it
    int accesses = 0;          // buffer accesses of the main statement (store + loads)
    int stride0 = 0, stride1 = 0, strided = 0;  // by stride along the innermost loop
    double bytes_l1_iters = 0;     // iterations inside the deepest loop whose footprint fits 32 KiB
    double bytes_l2_iters = 0;     // ... fits 1 MiB
    double footprint_bytes = 0;    // bytes the main statement touches in total
    double alloc_bytes = 0;        // all Allocates (each counted once, after compaction)
    double alloc_local_bytes = 0;  // ... of scope "local" (per thread / per tile)
    double alloc_shared_bytes = 0;  // ... of scope "shared" (per thread block)
    double alloc_global_bytes = 0;  // ... of any other scope (fused intermediates)
    int allocs = 0;
    int stores = 0;
    int local_accesses = 0;   // accesses of the main statement to "local" buffers
    int shared_accesses = 0;  // ... to "shared" buffers
    int prefetches = 0;  // tir.prefetch statements + buffers named by software_prefetch annotations
    bool reduction = false;   // the main statement is a reduction update
    std::string main_buffer;  // the buffer the main statement stores to
};

KernelStats kernel_stats(const tir::PrimFunc& scheduled);

/// The fixed-length feature vector (feature_names().size() entries, in that
/// order; the layout of kFeatureVersion).
std::vector<float> extract_features(const tir::PrimFunc& scheduled);
const std::vector<std::string>& feature_names();

}  // namespace tessera::autotune
