// Versions of Tessera and the libraries it was built with, for About and --version.
#pragma once

#include <QString>

namespace tessera::studio {

/// HTML for the About dialog: Tessera, Qt, LLVM, CUDA, ONNX and the JIT target.
QString aboutText();

}  // namespace tessera::studio
