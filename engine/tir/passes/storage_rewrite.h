// storage_rewrite: hoisting of allocations and reuse of the memory of dead temporaries.
#pragma once

#include "engine/tir/stmt.h"

namespace tessera::tir {

/// Hoists Allocate statements with constant shapes out of sequences and serial
/// loops up to the function body or the nearest parallel, vectorized or
/// thread-bound loop. There, the top-level statements of the scope give each
/// buffer a live interval [first use, last use]; a buffer whose interval starts
/// after another's ended (same scope, same dtype, 1-D or same shape) reuses its
/// memory: the two share one Allocate of the larger size. Code that reads
/// an allocation before writing it is not supported (its content is undefined
/// anyway).
PrimFunc storage_rewrite(const PrimFunc& f);

}  // namespace tessera::tir
