// Graph ops for NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss, training-mode ops.
#include "engine/graph/op_table.h"

namespace tessera::graph::detail {

void add_loss_ops(std::vector<OpDef>& table) { (void)table; }

}  // namespace tessera::graph::detail
