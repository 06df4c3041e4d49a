// `tessera tune --target cuda`: GPU tuning of a model's kernels (driver/tune_gpu.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/graph/graph.h"

namespace tessera::cli {

/// Optimizes `g` with the CUDA pass pipeline and tunes its kernels on the
/// device, appending to the `records` database. Without a device: UserError
/// "no CUDA device is available: GPU tuning measures on the device".
int run_tune_gpu(const graph::Graph& g, const std::string& records, int trials, uint64_t seed,
                 bool json, int opt_level, const std::vector<std::string>& passes);

}  // namespace tessera::cli
