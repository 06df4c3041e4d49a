// libFuzzer target: arbitrary bytes through the whole ONNX importer (parse,
// checker, version converter, shape inference, graph building). A UserError
// is the expected outcome for bad input; anything else (crash, hang,
// InternalError, other exceptions) is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "engine/core/error.h"
#include "engine/frontend/onnx/onnx_importer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string bytes(reinterpret_cast<const char*>(data), size);
    try {
        tessera::frontend::import_onnx_bytes(bytes, "fuzz.onnx");
    } catch (const tessera::UserError& e) {
        // Rejected with a diagnostic: the wanted behaviour. Set
        // FUZZ_PRINT_ERRORS=1 to see it when replaying inputs.
        static const bool print = std::getenv("FUZZ_PRINT_ERRORS") != nullptr;
        if (print) std::fprintf(stderr, "UserError: %s\n", e.what());
    }
    return 0;
}
