// ModelDocument: graph snapshot and the data the studio's views derive from it.
#include "app/studio/model_document.h"

#include <QFileInfo>

#include "engine/driver/driver.h"
#include "engine/tir/printer.h"

namespace tessera::studio {

ModelDocument::ModelDocument(QString path, graph::Graph graph)
    : m_path(std::move(path)), m_graph(std::make_shared<const graph::Graph>(std::move(graph))) {}

std::shared_ptr<ModelDocument> ModelDocument::load(const QString& path) {
    return std::make_shared<ModelDocument>(path, driver::load_model(path.toStdString()));
}

QString ModelDocument::displayName() const { return QFileInfo(m_path).fileName(); }

widgets::GraphViewData ModelDocument::graphViewData() const {
    widgets::GraphViewData data;
    const graph::Graph& g = *m_graph;
    for (const graph::Node& n : g.nodes) {
        widgets::GraphViewNode node;
        node.op = QString::fromStdString(n.op);
        node.name = QString::fromStdString(n.name);
        QStringList tip{node.op + "  " + node.name};
        for (int v : n.outputs)
            if (v >= 0 && size_t(v) < g.values.size())
                tip << QString::fromStdString("-> " + g.values[v].name + ": " +
                                              g.values[v].type.str());
        node.toolTip = tip.join('\n');
        data.nodes.append(node);
    }
    for (size_t i = 0; i < g.nodes.size(); ++i)
        for (int v : g.nodes[i].inputs) {
            if (v < 0 || size_t(v) >= g.values.size()) continue;
            const int producer = g.values[v].producer;
            if (producer >= 0 && size_t(producer) < g.nodes.size())
                data.edges.append({producer, int(i)});
        }
    return data;
}

int ModelDocument::preferredNode() const {
    for (size_t i = 0; i < m_graph->nodes.size(); ++i)
        if (m_graph->nodes[i].op.find("conv") != std::string::npos) return int(i);
    return m_graph->nodes.empty() ? -1 : 0;
}

double ModelDocument::totalFlops() const {
    double flops = 0;
    for (const graph::Node& n : m_graph->nodes) flops += graph::node_flops(*m_graph, n);
    return flops;
}

QString ModelDocument::loopIr(int node) const {
    auto it = m_loopIrCache.constFind(node);
    if (it != m_loopIrCache.constEnd()) return *it;
    const QString text = QString::fromStdString(tir::print(driver::lower_op(*m_graph, node)));
    m_loopIrCache.insert(node, text);
    return text;
}

QString attrToString(const graph::AttrValue& value) {
    auto join = [](const auto& list) {
        QStringList parts;
        for (const auto& x : list) parts << QString::number(x);
        return "[" + parts.join(", ") + "]";
    };
    if (auto* i = std::get_if<int64_t>(&value)) return QString::number(*i);
    if (auto* d = std::get_if<double>(&value)) return QString::number(*d);
    if (auto* s = std::get_if<std::string>(&value)) return "\"" + QString::fromStdString(*s) + "\"";
    if (auto* is = std::get_if<std::vector<int64_t>>(&value)) return join(*is);
    if (auto* ds = std::get_if<std::vector<double>>(&value)) return join(*ds);
    return {};
}

QVector<PropertyRow> ModelDocument::properties(int node) const {
    const graph::Graph& g = *m_graph;
    if (node < 0 || size_t(node) >= g.nodes.size()) return {};
    const graph::Node& n = g.nodes[node];
    auto valueRow = [&](int v) {
        if (v < 0 || size_t(v) >= g.values.size()) return PropertyRow{"?", "missing value", {}};
        const graph::Value& value = g.values[v];
        QString type = QString::fromStdString(value.type.str());
        if (value.is_constant()) type += "  (constant)";
        return PropertyRow{"%" + QString::fromStdString(value.name), type, {}};
    };
    QVector<PropertyRow> rows;
    rows.append({"op", QString::fromStdString(n.op), {}});
    rows.append({"name", QString::fromStdString(n.name), {}});
    PropertyRow attrs{"attributes", QString::number(n.attrs.size()), {}};
    for (const auto& [key, value] : n.attrs)
        attrs.children.append({QString::fromStdString(key), attrToString(value), {}});
    rows.append(attrs);
    PropertyRow inputs{"inputs", QString::number(n.inputs.size()), {}};
    for (int v : n.inputs) inputs.children.append(valueRow(v));
    rows.append(inputs);
    PropertyRow outputs{"outputs", QString::number(n.outputs.size()), {}};
    for (int v : n.outputs) outputs.children.append(valueRow(v));
    rows.append(outputs);
    rows.append({"GFLOP", QString::number(graph::node_flops(g, n) / 1e9, 'g', 4), {}});
    return rows;
}

}  // namespace tessera::studio
