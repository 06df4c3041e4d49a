// Computes for narrow and half-precision dtypes at the graph boundary.
#include "engine/topi/topi_detail.h"

namespace tessera::topi::detail {

void add_dtype_computes(ComputeTable& t) { (void)t; }

}  // namespace tessera::topi::detail
