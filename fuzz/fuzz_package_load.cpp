// libFuzzer target: arbitrary bytes through tessera::fuzz::load_package (fuzz_entries.h).
// A UserError is the expected outcome for bad input; anything else is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz/fuzz_entries.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    tessera::fuzz::rejected(tessera::fuzz::load_package, std::string(reinterpret_cast<const char*>(data), size));
    return 0;
}
