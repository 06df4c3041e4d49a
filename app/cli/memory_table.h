// `tessera inspect --print memory`: where the executor's memory plan puts
// every value, and the peak it reaches.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "engine/graph/graph.h"
#include "engine/runtime/graph_executor.h"

namespace tessera::cli {

/// One line per planned value (offset, bytes, live call range), then the
/// totals: peak (arena) bytes, bytes without reuse, parameter bytes.
/// `g` names the values when it has as many as the executor.
std::string memory_table(const runtime::GraphExecutor& ex, const graph::Graph& g);

/// The same as JSON: peak_bytes, naive_bytes, param_bytes, buffers[].
nlohmann::json memory_json(const runtime::GraphExecutor& ex, const graph::Graph& g);

}  // namespace tessera::cli
