// Targets: what differs between building for the CPU (LLVM) and the GPU
// (CUDA C through NVRTC). driver::build takes the target by name and asks it
// for its graph passes and its loop-IR lowering pipeline; the kernels' default
// schedules and the code generator follow from the name (driver.cpp).
#pragma once

#include <string>
#include <vector>

namespace tessera::driver {

struct Target {
    std::string name;         // "llvm", "cuda"
    std::string description;  // one line for people (`tessera inspect --print targets`, the studio)
    /// The graph passes a pipeline spec (BuildOptions::passes) resolves to
    /// for this target at an opt level.
    std::vector<std::string> (*graph_passes)(const std::vector<std::string>& spec, int opt_level);
    /// The registered tir passes (tir::find_tir_pass) run on every kernel
    /// before code generation, in order.
    std::vector<std::string> (*lowering_pipeline)();
};

/// Every target this build supports, "llvm" first.
const std::vector<Target>& targets();

/// The target called `name`; UserError naming the known targets.
const Target& find_target(const std::string& name);

/// The graph passes for the GPU: passes::resolve_pipeline(spec, opt_level)
/// without convert_layout (its NCHWc blocking serves CPU vector units; the
/// GPU rules run NCHW convolutions as implicit GEMM).
std::vector<std::string> cuda_pass_pipeline(const std::vector<std::string>& spec, int opt_level);

}  // namespace tessera::driver
