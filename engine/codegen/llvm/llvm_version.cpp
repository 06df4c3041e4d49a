// The LLVM version the code generator was built against (for About dialogs).
#include <llvm/Config/llvm-config.h>

#include "engine/codegen/llvm/llvm_codegen.h"

namespace tessera::codegen {

std::string llvm_version() { return LLVM_VERSION_STRING; }

}  // namespace tessera::codegen
