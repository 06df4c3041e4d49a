// vectorize_loops: Vectorized loops become vector IR with Ramp/Broadcast.
#pragma once

#include "engine/tir/stmt.h"

namespace tessera::tir {

/// Rewrites each For of kind Vectorized with a constant extent (2..64 lanes)
/// whose body is a sequence of BufferStores into one vector statement: the
/// loop variable becomes Ramp(min, 1, lanes); loads and stores whose index is
/// linear in it with stride 1 (after flatten_buffers: the last index) take a
/// Ramp index; invariant subexpressions are Broadcast. Anything else (inner
/// loops, conditions, non-unit or non-linear indices, a store to an index
/// that does not depend on the loop, a buffer read at another index than it is
/// written) keeps the loop as a Serial loop: correctness first.
PrimFunc vectorize_loops(const PrimFunc& f);

}  // namespace tessera::tir
