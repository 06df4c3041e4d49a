// `tessera run PACKAGE.tar`: run a compiled package through the runtime-only
// loader (engine/package), with the same report as a model run.
#pragma once

#include "app/cli/cli_common.h"

namespace tessera::cli {

/// True when `path` is a package file (a ustar archive) rather than a model.
bool is_package_path(const std::string& path);

/// Runs a package with the options of `tessera run`; returns the exit code.
int run_package(const RunOptions& o);

}  // namespace tessera::cli
