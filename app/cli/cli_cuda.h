// The CUDA parts of the `tessera` command line: `inspect --print cuda` and
// `run --target cuda`.
#pragma once

#include <string>
#include <vector>

#include "app/cli/cli_common.h"
#include "engine/runtime/ndarray.h"
#include "engine/tir/stmt.h"

namespace tessera::cli {

/// The CUDA C of the functions with their default GPU schedules (functions
/// already bound to threads are kept). Throws UserError when this build has
/// no CUDA back end.
std::string cuda_source(const std::vector<tir::PrimFunc>& funcs);

/// `run --target cuda`: compiles every kernel with NVRTC and prints a
/// summary; runs, checks and times on the GPU when one is present, else
/// throws UserError "no CUDA device is available (...)" (exit 2).
int run_cuda_target(const RunOptions& o, const std::string& model_file, const graph::Graph& g,
                    const std::vector<runtime::NDArray>& inputs, const std::string& input_source);

}  // namespace tessera::cli
