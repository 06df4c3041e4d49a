// `tessera run PACKAGE.tar`: run a compiled package through the runtime-only
// loader (engine/package), with the same report as a model run.
#pragma once

#include "app/cli/cli_common.h"

namespace tessera::cli {

/// The package extension: `tessera run` treats a file as a package (native
/// code, run only on purpose) by this name or by --package, never by its bytes.
constexpr const char* kPackageExtension = ".tar";

/// True when the user asked to run a package: --package, or a file named *.tar.
/// Throws UserError when a file given as a model (say model.onnx) is in fact
/// a package: opening a model never runs code from it.
bool is_package_path(const std::string& path, bool package_flag);

/// Runs a package with the options of `tessera run`; returns the exit code.
int run_package(const RunOptions& o);

}  // namespace tessera::cli
