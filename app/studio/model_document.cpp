// ModelDocument: graph snapshot and the data the studio's views derive from it.
#include "app/studio/model_document.h"

#include <QDir>
#include <QFileInfo>
#include <QStringList>
#include <algorithm>
#include <set>

#include "engine/core/error.h"
#include "engine/driver/driver.h"
#include "engine/tir/printer.h"

namespace tessera::studio {

ModelDocument::ModelDocument(QString path, graph::Graph graph)
    : m_path(std::move(path)), m_graph(std::make_shared<const graph::Graph>(std::move(graph))) {}

std::shared_ptr<ModelDocument> ModelDocument::load(const QString& path) {
    return std::make_shared<ModelDocument>(path, driver::load_model(path.toStdString()));
}

std::shared_ptr<ModelDocument> ModelDocument::load(
    const QString& path, const std::map<std::string, std::vector<int64_t>>& inputShapes) {
    if (inputShapes.empty()) return load(path);
    return std::make_shared<ModelDocument>(path,
                                           driver::load_model(path.toStdString(), inputShapes));
}

std::shared_ptr<ModelDocument> ModelDocument::loadForInputs(const QString& path,
                                                            const QString& inputDir) {
    const std::vector<std::string> files = driver::test_data_files(inputDir.toStdString(), "input");
    TS_USER_CHECK(!files.empty()) << inputDir.toStdString() << ": no input_0.pb in the folder";
    auto document = std::make_shared<ModelDocument>(
        path, driver::load_model_for_inputs(path.toStdString(), files));
    document->m_inputDir = inputDir;
    return document;
}

void ModelDocument::setGraph(std::shared_ptr<const graph::Graph> graph) {
    m_graph = std::move(graph);
}

QString ModelDocument::displayName() const {
    // Test-case folders all hold a "model.onnx": their folder tells them apart.
    const QFileInfo file(m_path);
    if (file.fileName() == "model.onnx" && !file.dir().dirName().isEmpty())
        return file.dir().dirName() + "/" + file.fileName();
    return file.fileName();
}

widgets::GraphViewData ModelDocument::graphViewData() const {
    widgets::GraphViewData data;
    const graph::Graph& g = *m_graph;
    for (const graph::Node& n : g.nodes) {
        widgets::GraphViewNode node;
        node.op = QString::fromStdString(n.op);
        node.name = QString::fromStdString(n.name);
        node.weight = graph::node_flops(g, n);
        QStringList tip{node.op + "  " + node.name};
        for (int v : n.outputs)
            if (v >= 0 && size_t(v) < g.values.size())
                tip << QString::fromStdString("-> " + g.values[v].name + ": " +
                                              g.values[v].type.str());
        node.toolTip = tip.join('\n');
        if (!n.outputs.empty() && n.outputs[0] >= 0 && size_t(n.outputs[0]) < g.values.size())
            node.shape = shapeText(g.values[n.outputs[0]].type.shape);
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

QString shapeText(const std::vector<int64_t>& shape) {
    if (shape.empty()) return "scalar";
    QStringList dims;
    for (int64_t d : shape) dims << QString::number(d);
    return dims.join(QChar(0x00d7));
}

bool attrFromString(const QString& text, const graph::AttrValue& like, graph::AttrValue* out) {
    const QString t = text.trimmed();
    bool ok = true;
    if (std::holds_alternative<int64_t>(like)) {
        const qlonglong v = t.toLongLong(&ok);
        if (ok) *out = int64_t(v);
        return ok;
    }
    if (std::holds_alternative<double>(like)) {
        const double v = t.toDouble(&ok);
        if (ok) *out = v;
        return ok;
    }
    if (std::holds_alternative<std::string>(like)) {
        QString s = t;
        if (s.size() >= 2 && s.startsWith('"') && s.endsWith('"')) s = s.mid(1, s.size() - 2);
        *out = s.toStdString();
        return true;
    }
    QString inner = t;
    if (inner.startsWith('[') && inner.endsWith(']')) inner = inner.mid(1, inner.size() - 2);
    const QStringList parts = inner.split(',', Qt::SkipEmptyParts);
    if (std::holds_alternative<std::vector<int64_t>>(like)) {
        std::vector<int64_t> v;
        for (const QString& p : parts) {
            v.push_back(p.trimmed().toLongLong(&ok));
            if (!ok) return false;
        }
        *out = v;
        return true;
    }
    std::vector<double> v;
    for (const QString& p : parts) {
        v.push_back(p.trimmed().toDouble(&ok));
        if (!ok) return false;
    }
    *out = v;
    return true;
}

bool parseAttrAssignments(const QString& text, std::map<std::string, graph::AttrValue>* out,
                          QString* error) {
    for (const QString& part : text.split(';', Qt::SkipEmptyParts)) {
        const int eq = part.indexOf('=');
        const QString key = part.left(eq).trimmed(), value = part.mid(eq + 1).trimmed();
        if (eq <= 0 || key.isEmpty() || value.isEmpty()) {
            *error = "'" + part.trimmed() + "' is not key=value";
            return false;
        }
        // The type follows the text: a list or a scalar, integers or not, or a string.
        const bool list = value.startsWith('[');
        const bool quoted = value.startsWith('"');
        const bool integral = !value.contains('.') && !value.contains('e') && !value.contains('E');
        const graph::AttrValue like =
            quoted ? graph::AttrValue(std::string())
            : list ? (integral ? graph::AttrValue(std::vector<int64_t>{})
                               : graph::AttrValue(std::vector<double>{}))
                   : (integral ? graph::AttrValue(int64_t(0)) : graph::AttrValue(0.0));
        graph::AttrValue parsed;
        if (!attrFromString(value, like, &parsed)) {
            *error =
                "attribute " + key + ": '" + value + "' is not a number, a list or a quoted string";
            return false;
        }
        (*out)[key.toStdString()] = parsed;
    }
    return true;
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
        QString type = QString::fromStdString(value.type_str());
        PropertyRow row{"%" + QString::fromStdString(value.name), type, {}};
        if (!value.quantization.empty())
            row.children.append({"quantization", QString::fromStdString(value.quantization), {}});
        if (value.is_constant()) {
            row.value += "  (weight)";
            row.children.append({"shape", shapeText(value.type.shape), {}});
            if (value.type.dtype == graph::DType::Float32 && value.type.num_elements() > 0) {
                const float* data = value.constant->as<float>();
                const int64_t n = value.type.num_elements();
                double lo = data[0], hi = data[0], sum = 0;
                for (int64_t i = 0; i < n; ++i) {
                    lo = std::min(lo, double(data[i]));
                    hi = std::max(hi, double(data[i]));
                    sum += data[i];
                }
                row.children.append({"min", QString::number(lo, 'g', 5), {}});
                row.children.append({"max", QString::number(hi, 'g', 5), {}});
                row.children.append({"mean", QString::number(sum / double(n), 'g', 5), {}});
            }
            row.children.append({"bytes", QString::number(value.type.num_bytes()), {}});
        }
        return row;
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
    // An ONNX QuantizeLinear / DequantizeLinear imports as several nodes of
    // its name (divide, round, add, clip, cast): each of them shows the
    // mapping of the quantized tensor the op makes or reads.
    PropertyRow mapped{"quantized tensor", QString(), {}};
    std::set<int> seen;
    for (const graph::Node& other : g.nodes) {
        if (other.name != n.name || n.name.empty()) continue;
        for (const std::vector<int>* values : {&other.outputs, &other.inputs})
            for (int v : *values)
                if (v >= 0 && size_t(v) < g.values.size() &&
                    !g.values[size_t(v)].quantization.empty() &&
                    !g.values[size_t(v)].is_constant() && seen.insert(v).second)
                    mapped.children.append(valueRow(v));
    }
    if (!mapped.children.isEmpty()) {
        mapped.value = mapped.children.front().key;  // "%xa_q"
        rows.append(mapped);
    }
    rows.append({"GFLOP", QString::number(graph::node_flops(g, n) / 1e9, 'g', 4), {}});
    return rows;
}

}  // namespace tessera::studio
