// The reference semantics of loop IR: runs any PrimFunc on host memory. Every
// optimization and every code generator is tested against it.
#pragma once

#include <vector>

#include "engine/tir/stmt.h"

namespace tessera::tir {

/// Runs `f` with args[i] the host data of f->params[i] (row-major, dense).
/// Handles Blocks (iter var bindings, init, predicate), multi-dimensional and
/// flattened buffers, vectors (Ramp/Broadcast) and every For kind (run
/// serially). Throws InternalError on malformed IR or an out-of-bounds access.
void interpret(const PrimFunc& f, const std::vector<void*>& args);

}  // namespace tessera::tir
