// Graph ops for sequence, optional, string and control-flow ops.
#include "engine/graph/op_table.h"

namespace tessera::graph::detail {

void add_seq_ops(std::vector<OpDef>& table) { (void)table; }

}  // namespace tessera::graph::detail
