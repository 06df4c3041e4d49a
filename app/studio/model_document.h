// ModelDocument: the open model as an immutable graph snapshot plus what the
// studio derives from it (view data, per-node loop IR and properties).
#pragma once

#include <QMap>
#include <QPair>
#include <QString>
#include <QVector>
#include <memory>

#include "engine/graph/graph.h"
#include "widgets/graph_view.h"

namespace tessera::studio {

/// One row of the Properties dock; `children` are nested rows (attrs, inputs).
struct PropertyRow {
    QString key;
    QString value;
    QVector<PropertyRow> children;
};

class ModelDocument {
public:
    /// Takes a loaded graph. The graph is never mutated afterwards, so the
    /// document can be built on a worker thread and handed to the UI thread.
    ModelDocument(QString path, graph::Graph graph);

    /// Loads a model with driver::load_model (throws UserError on bad input).
    static std::shared_ptr<ModelDocument> load(const QString& path);

    const QString& path() const { return m_path; }
    QString displayName() const;
    const graph::Graph& graph() const { return *m_graph; }
    /// A shared, immutable snapshot for background jobs.
    std::shared_ptr<const graph::Graph> snapshot() const { return m_graph; }
    int nodeCount() const { return int(m_graph->nodes.size()); }

    /// Nodes and producer→consumer edges for the GraphView.
    widgets::GraphViewData graphViewData() const;
    /// The node to select first: the first convolution, else node 0, else -1.
    int preferredNode() const;
    /// Floating-point operations per inference (sum over nodes).
    double totalFlops() const;

    /// Printed loop IR of one node with its default schedule (cached).
    /// Throws what driver::lower_op throws.
    QString loopIr(int node) const;
    /// op, name, attrs, input and output types of one node.
    QVector<PropertyRow> properties(int node) const;

private:
    QString m_path;
    std::shared_ptr<const graph::Graph> m_graph;
    mutable QMap<int, QString> m_loopIrCache;  // used on the UI thread only
};

/// "[1, 2]" / "3" / "1.5" / "\"text\"" for a graph attribute.
QString attrToString(const graph::AttrValue& value);

}  // namespace tessera::studio
