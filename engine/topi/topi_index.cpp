// Computes for indexing, scatter and data-dependent-shape ops.
#include "engine/topi/topi_detail.h"

namespace tessera::topi::detail {

void add_index_computes(ComputeTable& t) { (void)t; }

}  // namespace tessera::topi::detail
