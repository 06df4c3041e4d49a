// JSON members of a package (graph.json, meta.json) read with clear errors:
// shared by the CPU and CUDA package loaders.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "engine/graph/graph.h"

namespace tessera::package {

/// `text` (the member `member` of the package `what`) parsed as JSON; a
/// UserError saying the package is corrupt otherwise.
nlohmann::json parse_member_json(const std::string& text, const std::string& what,
                                 const char* member);

/// The dtype graph.json names by graph::dtype_name; UserError otherwise.
graph::DType parse_member_dtype(const std::string& name, const std::string& what);

}  // namespace tessera::package
