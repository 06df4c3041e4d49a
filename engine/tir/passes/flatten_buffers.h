// flatten_buffers: multi-dimensional buffer accesses -> one linear index.
#pragma once

#include "engine/tir/stmt.h"

namespace tessera::tir {

/// Rewrites every multi-dimensional BufferLoad/BufferStore to a single
/// row-major int64 index into a 1-D Buffer (same name, dtype and scope,
/// shape {product of dims}). Parameters, allocations and accesses use the
/// same new buffer. A vector access whose indices are scalars or Ramps keeps
/// a Ramp index (so a Ramp in the last dimension stays a contiguous access).
/// Expects blocks to be lowered already (see lower_blocks).
PrimFunc flatten_buffers(const PrimFunc& f);

}  // namespace tessera::tir
