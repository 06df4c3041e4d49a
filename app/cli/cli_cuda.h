// The CUDA parts of the `tessera` command line: `inspect --print cuda` and
// `run --target cuda`.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "app/cli/cli_common.h"
#include "engine/package/package_loader.h"
#include "engine/runtime/ndarray.h"
#include "engine/tir/stmt.h"

namespace tessera::codegen {
struct CudaModel;
}

namespace tessera::cli {

/// The CUDA C of the functions with their default GPU schedules (functions
/// already bound to threads are kept). Throws UserError when this build has
/// no CUDA back end.
std::string cuda_source(const std::vector<tir::PrimFunc>& funcs);

/// The functions with their default GPU schedules (already bound ones kept).
std::vector<tir::PrimFunc> cuda_schedule(const std::vector<tir::PrimFunc>& funcs);

/// The graph pass list for the GPU (codegen::cuda_pass_pipeline) as an exact
/// list for driver::BuildOptions::passes ({"none"} when empty).
std::vector<std::string> cuda_passes(const std::vector<std::string>& spec, int opt_level);

/// The model built as `run --target cuda` builds it: the GPU graph passes,
/// fused groups with their default GPU schedules (or the best "cuda" record
/// of `records` per kernel, with a note on stderr and, when `records_json` is
/// given, the counts there), NVRTC. No device needed.
std::shared_ptr<codegen::CudaModel> build_cuda_model(const graph::Graph& g, int opt_level,
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
