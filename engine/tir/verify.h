// Structural checks of loop IR: every variable defined before use, buffers in
// scope, index counts match buffer ranks, types agree.
#pragma once

#include "engine/tir/stmt.h"

namespace tessera::tir {

/// Throws InternalError describing the first problem found.
void verify(const PrimFunc& f);

}  // namespace tessera::tir
