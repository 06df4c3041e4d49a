// The CUDA parts of the `tessera` command line: `run --target cuda`,
// `compile --target cuda` and running CUDA packages. Models are built by
// driver::build (target "cuda").
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "app/cli/cli_common.h"
#include "engine/driver/driver.h"
#include "engine/package/package_loader.h"
#include "engine/runtime/ndarray.h"
#include "engine/tir/stmt.h"

namespace tessera::cli {

/// The model built as `run --target cuda` builds it: the GPU graph passes,
/// fused groups with their default GPU schedules (or the best "cuda" record
/// of `records` per kernel, with a note on stderr and, when `records_json` is
/// given, the counts there), NVRTC. No device needed.
std::shared_ptr<driver::CompiledModel> build_cuda_model(const graph::Graph& g, int opt_level,
                                                        const std::vector<std::string>& passes,
                                                        const std::string& records,
                                                        nlohmann::json* records_json);

/// `run --target cuda`: compiles every kernel with NVRTC (o.records: the
/// best "cuda" record per kernel applied) and prints a summary; runs, checks and times on the GPU when one is present, else
/// throws UserError "no CUDA device is available (...)" (exit 2).
int run_cuda_target(const RunOptions& o, const std::string& model_file, const graph::Graph& g,
                    const std::vector<runtime::NDArray>& inputs, const std::string& input_source);

/// `compile --target cuda`: the GPU graph passes, fused groups with their
/// default GPU schedules (or the best "cuda" record of the `records`
/// database per kernel, when given), NVRTC, and a CUDA package (PTX) at `output`.
int compile_cuda_package(const std::string& model_file, const graph::Graph& g, int opt_level,
                         const std::vector<std::string>& passes, const std::string& output,
                         bool json, const std::string& records = "");

/// `run PACKAGE.tar` for a loaded CUDA package: inputs (files, a folder or
/// random), one run, --compare-dir, event timing.
int run_cuda_package(const RunOptions& o, const package::LoadedPackage& pkg);

}  // namespace tessera::cli
