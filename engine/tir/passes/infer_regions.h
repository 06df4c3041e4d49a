// infer_regions: block read/write regions recomputed from the accesses in their bodies.
#pragma once

#include "engine/tir/stmt.h"

namespace tessera::tir {

/// Recomputes the reads and writes of every Block from the BufferLoads and
/// BufferStores in its body and init (child blocks included through their
/// bindings), relaxing loops inside the block over their ranges with interval
/// analysis. Regions are in terms of the block's iteration variables; a
/// dimension that cannot be bounded covers the whole buffer. Buffers the block
/// allocates itself are left out. Regions appear in order of first access.
PrimFunc infer_regions(const PrimFunc& f);

}  // namespace tessera::tir
