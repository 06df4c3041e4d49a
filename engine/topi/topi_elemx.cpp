// Computes for extra elementwise/unary/window/quantization ops.
#include "engine/topi/topi_detail.h"

namespace tessera::topi::detail {

void add_elemx_computes(ComputeTable& t) { (void)t; }

}  // namespace tessera::topi::detail
