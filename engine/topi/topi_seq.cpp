// Computes for sequence, optional, string and control-flow ops.
#include "engine/topi/topi_detail.h"

namespace tessera::topi::detail {

void add_seq_computes(ComputeTable& t) { (void)t; }

}  // namespace tessera::topi::detail
