// Lowering of a fused group of graph nodes into one PrimFunc: the te computes
// of all nodes chained, node-boundary elementwise/injective stages inlined
// into their consumers (so the group runs in the anchor op's loops).
#pragma once

#include <vector>

#include "engine/graph/graph.h"
#include "engine/tir/stmt.h"

namespace tessera::topi {

struct LoweredGroup {
    tir::PrimFunc func;
    /// Graph value indices bound to the function's params, in order: the
    /// group's inputs (values read but not produced inside, constants
    /// included), then its outputs (values read outside the group or graph
    /// outputs).
    std::vector<int> args;
    std::vector<int> inputs, outputs;  // the two halves of args
};

/// The kernel name of a group: the node's kernel_name for a single node,
/// otherwise "fused_" + the first nodes' names.
std::string group_kernel_name(const graph::Graph& g, const std::vector<int>& nodes);

/// Lowers the nodes `nodes` (ascending node indices) of `g` into one PrimFunc
/// named group_kernel_name(). A single node lowers exactly like lower_node.
/// Stages that are outputs of a node in the group, are not reductions and
/// are read only inside the group are inlined into their readers; stages
/// inside one node's compute (a conv's padding) keep their own loop nests.
/// Throws UserError naming the node when an op has no compute.
LoweredGroup lower_group(const graph::Graph& g, const std::vector<int>& nodes);

}  // namespace tessera::topi
