// Fused kernels and name scopes as groups for GraphView::setCollapsed.
#include "app/studio/graph_collapse.h"

#include <QMap>
#include <QStringList>

namespace tessera::studio {

QVector<widgets::GraphViewCollapse> fusedKernelGroups(const graph::Graph& graph,
                                                      const driver::CompiledModel& model) {
    QVector<widgets::GraphViewCollapse> groups;
    for (size_t k = 0; k < model.kernels.size() && k < model.kernel_nodes.size(); ++k) {
        widgets::GraphViewCollapse group;
        group.title = QString::fromStdString(model.kernels[k]->name);
        for (int n : model.kernel_nodes[k]) {
            const int node = graph.find_node(model.graph.nodes[size_t(n)].name);
            if (node >= 0) group.nodes.append(node);
        }
        if (group.nodes.size() > 1) groups.append(group);
    }
    return groups;
}

QVector<widgets::GraphViewCollapse> nameScopeGroups(const graph::Graph& graph, int level) {
    QMap<QString, QVector<int>> byScope;
    QStringList order;
    for (size_t n = 0; n < graph.nodes.size(); ++n) {
        QStringList parts = QString::fromStdString(graph.nodes[n].name).split('/', Qt::SkipEmptyParts);
        if (parts.size() <= level) continue;  // no scope that deep (the last part is the node's)
        const QString scope = parts.mid(0, level).join('/');
        if (!byScope.contains(scope)) order << scope;
        byScope[scope].append(int(n));
    }
    // Scopes whose nodes run the same ops in the same order are repeats of one block.
    QMap<QString, int> signatureCount;
    QMap<QString, QString> signatureOf;
    for (const QString& scope : order) {
        QStringList ops;
        for (int n : byScope[scope]) ops << QString::fromStdString(graph.nodes[size_t(n)].op);
        signatureOf[scope] = ops.join(',');
        ++signatureCount[signatureOf[scope]];
    }
    QVector<widgets::GraphViewCollapse> groups;
    for (const QString& scope : order) {
        if (byScope[scope].size() < 2) continue;
        const int repeats = signatureCount[signatureOf[scope]];
        groups.append({repeats > 1 ? QString("%1 (repeated \u00d7%2)").arg(scope).arg(repeats) : scope,
                       byScope[scope]});
    }
    return groups;
}

}  // namespace tessera::studio
