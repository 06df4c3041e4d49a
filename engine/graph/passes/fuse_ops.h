// Operator fusion with TVM's rules (FuseOps): a post-dominator tree over the
// graph, then elementwise/broadcast ops fused into the out-elemwise-fusable
// anchor before them (conv2d + bias + relu), injective chains fused, and
// elementwise producers fused into a following reduction.
#pragma once

#include <map>
#include <vector>

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

/// Reshapes that run as no kernel of their own (after fuse_ops): groups of
/// one `reshape` whose input is read by nothing else and is neither a graph
/// input, output nor constant (an integer conv's output after the
/// requantizing epilogue sink_reshapes moves it past). The kernel that produces the input writes
/// the reshape's output instead (the same bytes, row-major), and the reshape
/// node counts as that kernel's. Input value -> reshape node.
std::map<int, int> reshapes_as_views(const graph::Graph& g,
                                     const std::vector<std::vector<int>>& groups);

/// The attribute key fuse_ops writes.
inline constexpr const char* kFuseGroupAttr = "fuse_group";

}  // namespace tessera::passes
