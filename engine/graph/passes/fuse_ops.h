// Operator fusion with TVM's rules (FuseOps): a post-dominator tree over the
// graph, then elementwise/broadcast ops fused into the out-elemwise-fusable
// anchor before them (conv2d + bias + relu), injective chains fused, and
// elementwise producers fused into a following reduction.
#pragma once

#include "engine/graph/passes/pass.h"

namespace tessera::passes {

/// Sets the integer attribute "fuse_group" on every node: nodes with the same
/// id form one fused group, compiled into one kernel (ids count from 0 in
/// order of each group's first node).
graph::Graph fuse_ops(const graph::Graph& g, const PassContext& ctx);

/// The fused groups of `g`: node indices (ascending) per group, groups sorted
/// by their last node, so running the groups in this order respects data
/// flow. Nodes without a "fuse_group" attribute form groups of their own;
/// without fuse_ops every node is its own group.
std::vector<std::vector<int>> fused_groups(const graph::Graph& g);

/// The attribute key fuse_ops writes.
inline constexpr const char* kFuseGroupAttr = "fuse_group";

}  // namespace tessera::passes
