// Finds and loads libnvrtc at run time (see nvrtc_library.h).
#include "engine/codegen/cuda/nvrtc_library.h"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <system_error>
#include <vector>

#include "engine/core/error.h"

namespace tessera::codegen {

namespace {

struct Loaded {
    NvrtcApi api;
    bool ok = false;
    std::string reason;
};

// Sonames of the NVRTC releases whose C API Tessera uses (unchanged since 11.2).
const char* const kSonames[] = {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12",
                                "libnvrtc.so.11.2"};

std::vector<std::string> candidates() {
    std::vector<std::string> out;
    if (const char* forced = std::getenv("TESSERA_NVRTC_LIBRARY"); forced && *forced) {
        if (std::string(forced) != "none") out.push_back(forced);
        return out;
    }
    for (const char* s : kSonames) out.push_back(s);
    std::vector<std::string> dirs;
    for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
        if (const char* d = std::getenv(var); d && *d) dirs.push_back(std::string(d) + "/lib64");
    dirs.push_back("/usr/local/cuda/lib64");
    for (const std::string& d : dirs)
        for (const char* s : kSonames) out.push_back(d + "/" + s);
    return out;
}

template <typename F>
bool bind(void* lib, F& fn, const char* name) {
    fn = reinterpret_cast<F>(dlsym(lib, name));
    return fn != nullptr;
}

// libnvrtc loads its builtins (libnvrtc-builtins.so.X.Y) by soname when it
// compiles. Loaded from a folder outside the loader's path (a toolkit in
// /usr/local/cuda without an ld.so.conf entry), that lookup fails; loading
// the builtins from the same folder first lets the soname match.
void preload_builtins_beside(const std::string& nvrtc_path) {
    const std::filesystem::path dir = std::filesystem::path(nvrtc_path).parent_path();
    std::error_code ec;
    if (dir.empty() || !std::filesystem::is_directory(dir, ec)) return;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
        const std::string name = e.path().filename().string();
        if (name.rfind("libnvrtc-builtins.so", 0) == 0 && name.find(".alt.") == std::string::npos)
            dlopen(e.path().c_str(), RTLD_NOW | RTLD_GLOBAL);
    }
}

Loaded load() {
    Loaded l;
    std::vector<std::string> tried = candidates();
    void* lib = nullptr;
    for (const std::string& c : tried) {
        if (c.find('/') != std::string::npos) {
            std::error_code ec;
            if (!std::filesystem::exists(c, ec)) continue;
            preload_builtins_beside(c);
        }
        lib = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (lib) {
            l.api.path = c;
            break;
        }
    }
    if (!lib) {
        l.reason = std::string(kNvrtcMissing) +
                   (tried.empty() ? " (TESSERA_NVRTC_LIBRARY=none)" : " (tried " + tried.front() +
                                                                          " and " +
                                                                          std::to_string(tried.size() - 1) +
                                                                          " other paths)");
        return l;
    }
    NvrtcApi& a = l.api;
    bool ok = bind(lib, a.create_program, "nvrtcCreateProgram") &&
              bind(lib, a.compile_program, "nvrtcCompileProgram") &&
              bind(lib, a.get_program_log_size, "nvrtcGetProgramLogSize") &&
              bind(lib, a.get_program_log, "nvrtcGetProgramLog") &&
              bind(lib, a.get_ptx_size, "nvrtcGetPTXSize") && bind(lib, a.get_ptx, "nvrtcGetPTX") &&
              bind(lib, a.destroy_program, "nvrtcDestroyProgram") &&
              bind(lib, a.get_error_string, "nvrtcGetErrorString") &&
              bind(lib, a.version, "nvrtcVersion");
    if (!ok) {
        l.reason = std::string(kNvrtcMissing) + " (" + a.path + " lacks an NVRTC entry point)";
        return l;
    }
    l.ok = true;
    return l;
}

const Loaded& loaded() {
    static const Loaded l = load();
    return l;
}

}  // namespace

bool nvrtc_available() { return loaded().ok; }

std::string nvrtc_unavailable_reason() { return loaded().ok ? std::string() : loaded().reason; }

const NvrtcApi& nvrtc() {
    TS_USER_CHECK(loaded().ok) << loaded().reason;
    return loaded().api;
}

}  // namespace tessera::codegen
