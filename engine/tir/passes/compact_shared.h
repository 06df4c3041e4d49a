// compact_shared: shared buffers shrunk to the tile a thread block stages at a time.
#pragma once

#include "engine/tir/stmt.h"

namespace tessera::tir {

/// For loop IR without blocks (after lower_blocks). A "shared" buffer
/// (Allocate with a constant shape) whose accesses all lie under one loop L
/// inside the Allocate (their deepest common loop), where every child of L's
/// body that stores to the buffer comes before every child that loads it
/// (filled, then read, in each iteration of L), shrinks to the region that
/// one iteration of L accesses for all threads of a block: loops below L and
/// loops bound to threadIdx are relaxed, the other loops down to L (blockIdx,
/// vthread, serial) stay symbolic, and indices are shifted by the region's
/// start. A dimension whose region is not a constant-size window smaller
/// than the buffer stays whole; other buffers are left as they are. This is
/// how a cache_read to "shared" computed at a reduction loop (a cooperative
/// fetch) gets a per-block tile instead of the whole tensor.
Stmt compact_shared_buffers(const Stmt& s);

/// compact_shared_buffers on a function's body.
PrimFunc compact_shared_buffers(const PrimFunc& f);

/// Bytes of "shared" Allocates with constant shapes in s (all kernels together).
int64_t shared_allocation_bytes(const Stmt& s);

}  // namespace tessera::tir
