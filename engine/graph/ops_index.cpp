// Graph ops for indexing, scatter and data-dependent-shape ops.
#include "engine/graph/op_table.h"

namespace tessera::graph::detail {

void add_index_ops(std::vector<OpDef>& table) { (void)table; }

}  // namespace tessera::graph::detail
