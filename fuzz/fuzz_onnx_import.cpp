// libFuzzer target: arbitrary bytes through the whole ONNX importer (parse,
// checker, version converter, shape inference, graph building). A UserError
// is the expected outcome for bad input; anything else (crash, hang,
// InternalError, other exceptions) is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "engine/core/error.h"
#include "engine/frontend/onnx/onnx_importer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string bytes(reinterpret_cast<const char*>(data), size);
    try {
        tessera::frontend::import_onnx_bytes(bytes, "fuzz.onnx");
    } catch (const tessera::UserError&) {
        // Rejected with a diagnostic: the wanted behaviour.
    }
    return 0;
}
