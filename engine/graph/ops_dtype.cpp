// Graph ops for narrow and half-precision dtypes at the graph boundary.
#include "engine/graph/op_table.h"

namespace tessera::graph::detail {

void add_dtype_ops(std::vector<OpDef>& table) { (void)table; }

}  // namespace tessera::graph::detail
