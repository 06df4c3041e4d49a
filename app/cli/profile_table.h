// The per-kernel profile table of `tessera run --profile` (models and
// packages): kernel, ONNX nodes, calls, time, %, GFLOP/s, GB/s.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "engine/runtime/graph_executor.h"

namespace tessera::cli {

struct ProfileRow {
    std::string kernel;
    std::vector<std::string> nodes;  // graph (ONNX) node names the kernel covers
    int calls = 0;                   // per run
    double seconds = 0;              // per run
    double flops = 0;                // per run
    double bytes = 0;                // argument bytes read and written per run
    double work_flops = 0;           // what the kernel executes (0: flops)
    bool integer = false;            // int8 dot products: G operations/s, not GFLOP/s
};

/// Rows of an executor profile, naming nodes with `node_names`; with
/// `node_ops` (the nodes' ops), kernels of integer GEMMs are marked integer.
std::vector<ProfileRow> profile_rows(const std::vector<runtime::KernelProfile>& prof,
                                     const std::vector<std::string>& node_names,
                                     const std::vector<std::string>& node_ops = {});

/// Prints the table sorted by time (slowest first) and a total line; returns
/// the same data as a JSON array (time_ms, percent, gflops, gbps per row).
nlohmann::json print_profile(std::vector<ProfileRow> rows, std::ostream& os);

}  // namespace tessera::cli
