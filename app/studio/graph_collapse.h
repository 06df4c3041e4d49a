// Groups of a model's nodes the graph view can draw as one box: the fused
// kernels a build makes of them, and name scopes (the "/layer1/layer1.0/..."
// prefixes exporters give nodes), where scopes with the same op sequence are
// marked as repeated blocks.
#pragma once

#include <QVector>

#include "engine/driver/driver.h"
#include "widgets/graph_view.h"

namespace tessera::studio {

/// The kernels of `model` (a build of `graph`) that run more than one of
/// `graph`'s nodes, by node name (nodes a pass removed or renamed are left
/// out); titled by the kernel's name.
QVector<widgets::GraphViewCollapse> fusedKernelGroups(const graph::Graph& graph,
                                                      const driver::CompiledModel& model);

/// Nodes grouped by the first `level` parts of their '/'-separated names
/// (a leading '/' ignored; the last part, the node's own, never counts);
/// groups of two or more nodes, titled by the scope, plus "(repeated ×N)"
/// where N scopes at that level run the same op sequence.
QVector<widgets::GraphViewCollapse> nameScopeGroups(const graph::Graph& graph, int level);

}  // namespace tessera::studio
