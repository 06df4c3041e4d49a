// Seeded random-trace generator over the schedule primitives, and the small
// workloads (matmul, conv2d, softmax, ...) it is exercised on.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/schedule/schedule.h"

namespace tessera::schedule::test {

struct Workload {
    std::string name;
    tir::PrimFunc func;
};

/// matmul, batched matmul, conv2d NCHW (pad + stride), depthwise conv2d,
/// max pooling (padded), softmax, layer norm and an elementwise chain, all
/// with small shapes, written with te::compute.
std::vector<Workload> workloads();

/// Applies `attempts` randomly drawn primitives with random arguments taken
/// from the current function; invalid ones (ScheduleError) are skipped after
/// checking that they left the schedule unchanged (a failed check throws
/// std::logic_error). Deterministic in `seed`.
Schedule random_schedule(const tir::PrimFunc& f, uint64_t seed, int attempts);

/// Runs f under the interpreter on seeded random non-zero data and returns
/// every parameter buffer's final contents (float32 buffers).
std::vector<std::vector<float>> run_interpreted(const tir::PrimFunc& f, uint64_t seed);

/// The same with the LLVM JIT.
std::vector<std::vector<float>> run_jit(const tir::PrimFunc& f, uint64_t seed,
                                        int llvm_opt_level = 2);

/// Largest relative difference (|a-b| / max(1, |b|)) over all buffers.
double max_rel_diff(const std::vector<std::vector<float>>& a, const std::vector<std::vector<float>>& b);

}  // namespace tessera::schedule::test
