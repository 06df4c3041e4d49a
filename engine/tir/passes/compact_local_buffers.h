// compact_local_buffers: "local" allocations shrunk to the region their
// accesses touch under the innermost loop that holds them all (TVM's
// CompactBufferAllocation, on lowered CPU loops).
#pragma once

#include "engine/tir/stmt.h"

namespace tessera::tir {

/// For each Allocate of a "local" buffer with a constant shape (after
/// lower_blocks): moves it down through serial and parallel loops,
/// sequences and other buffers' allocations to the innermost statement that
/// holds all its accesses, as long
/// as each loop it moves into gives every iteration its own slice of the
/// buffer (no value flows from one iteration to the next), and shrinks it to
/// the box its accesses cover there (indices shifted by the box's origin).
/// A schedule's cache_write(..., "local") + reverse_compute_at at a tile loop
/// thus gets a tile-sized accumulator buffer instead of a full-size copy.
/// Buffers whose region is not a constant-size box are left as they are.
PrimFunc compact_local_buffers(const PrimFunc& f);

}  // namespace tessera::tir
