// The targets driver::build knows.
#include "engine/driver/target.h"

#include "engine/core/error.h"
#include "engine/graph/passes/pass_manager.h"
#include "engine/tir/passes/pass_manager.h"

namespace tessera::driver {

std::vector<std::string> cuda_pass_pipeline(const std::vector<std::string>& spec, int opt_level) {
    std::vector<std::string> out;
    for (const std::string& p : passes::resolve_pipeline(spec, opt_level))
        // NCHWc blocking is for CPU vectors; the GPU rules have no attention kernel.
        if (p != "convert_layout" && p != "fuse_attention") out.push_back(p);
    return out;
}

const std::vector<Target>& targets() {
    static const std::vector<Target> all = {
        {"llvm", "the host CPU: LLVM JIT or shared library, default CPU schedules",
         passes::resolve_pipeline, tir::default_lowering_pipeline},
        {"cuda", "NVIDIA GPUs: CUDA C compiled to PTX with NVRTC, default GPU schedules",
         cuda_pass_pipeline, tir::cuda_lowering_pipeline},
    };
    return all;
}

const Target& find_target(const std::string& name) {
    std::string known;
    for (const Target& t : targets()) {
        if (t.name == name) return t;
        known += (known.empty() ? "" : ", ") + t.name;
    }
    TS_USER_FAIL() << "unknown target '" << name << "'; known targets: " << known;
}

}  // namespace tessera::driver
