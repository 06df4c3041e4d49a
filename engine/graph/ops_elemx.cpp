// Graph ops for extra elementwise/unary/window/quantization ops.
#include "engine/graph/op_table.h"

namespace tessera::graph::detail {

void add_elemx_ops(std::vector<OpDef>& table) { (void)table; }

}  // namespace tessera::graph::detail
