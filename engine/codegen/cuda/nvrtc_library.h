// NVRTC (the CUDA runtime compiler) loaded with dlopen when it is present:
// neither the build nor the programs need the CUDA toolkit. Compiling CUDA C
// to PTX needs it; emitting CUDA C does not.
//
//   if (nvrtc_available()) { ... }            // probe without throwing
//   const NvrtcApi& api = nvrtc();            // UserError when absent
#pragma once

#include <cstddef>
#include <string>

namespace tessera::codegen {

/// The NVRTC entry points Tessera uses, with their C signatures (nvrtcResult
/// is an int, nvrtcProgram an opaque pointer; no nvrtc.h needed).
struct NvrtcApi {
    using Program = void*;
    int (*create_program)(Program*, const char*, const char*, int, const char* const*,
                          const char* const*) = nullptr;
    int (*compile_program)(Program, int, const char* const*) = nullptr;
    int (*get_program_log_size)(Program, size_t*) = nullptr;
    int (*get_program_log)(Program, char*) = nullptr;
    int (*get_ptx_size)(Program, size_t*) = nullptr;
    int (*get_ptx)(Program, char*) = nullptr;
    int (*destroy_program)(Program*) = nullptr;
    const char* (*get_error_string)(int) = nullptr;
    int (*version)(int*, int*) = nullptr;
    std::string path;  // the library that was loaded
};

/// The message of the UserError thrown when NVRTC cannot be loaded.
constexpr const char* kNvrtcMissing =
    "NVRTC (libnvrtc.so.*) not found: install the CUDA toolkit";

/// True when libnvrtc could be loaded (tried once per process). The search:
/// $TESSERA_NVRTC_LIBRARY if set ("none" forces "not found", for tests),
/// then the loader's path (libnvrtc.so, .so.13, .so.12, .so.11.2), then
/// $CUDA_HOME/lib64, $CUDA_PATH/lib64 and /usr/local/cuda/lib64.
bool nvrtc_available();

/// Why NVRTC is unavailable (empty when it is available).
std::string nvrtc_unavailable_reason();

/// The loaded API; throws UserError(kNvrtcMissing ...) when absent.
const NvrtcApi& nvrtc();

}  // namespace tessera::codegen
