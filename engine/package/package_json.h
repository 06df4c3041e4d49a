// JSON members of a package (graph.json, meta.json) read with clear errors:
// shared by the CPU and CUDA package loaders.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/graph/graph.h"
#include "engine/package/tar.h"

namespace tessera::package {

/// `text` (the member `member` of the package `what`) parsed as JSON; a
/// UserError saying the package is corrupt otherwise.
nlohmann::json parse_member_json(const std::string& text, const std::string& what,
                                 const char* member);

/// The dtype graph.json names by graph::dtype_name; UserError otherwise.
graph::DType parse_member_dtype(const std::string& name, const std::string& what);

/// Checks meta.json's format_version (refusing newer formats with a clear
/// error) and the sha256 it records for each of `names`, which must be in
/// `members`; UserErrors name the package `what`.
void check_version_and_checksums(const nlohmann::json& meta,
                                 const std::map<std::string, const TarMember*>& members,
                                 const std::vector<const char*>& names, const std::string& what);

}  // namespace tessera::package
