// ModelDocument: the open model as an immutable graph snapshot plus what the
// studio derives from it (view data, per-node loop IR and properties).
#pragma once

#include <QMap>
#include <QPair>
#include <QString>
#include <QVector>
#include <map>
#include <memory>

#include "app/studio/input_shape_dialog.h"
#include "engine/graph/graph.h"
#include "engine/graph/graph_edit.h"
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
    /// Takes a loaded graph. A graph snapshot is never mutated: edits replace
    /// it (setGraph), so the document can be built on a worker thread and
    /// snapshots handed to jobs.
    ModelDocument(QString path, graph::Graph graph);

    /// Loads a model with driver::load_model (throws UserError on bad input).
    static std::shared_ptr<ModelDocument> load(const QString& path);
    /// Loads `path` with these static shapes for its symbolic inputs.
    static std::shared_ptr<ModelDocument> load(
        const QString& path, const std::map<std::string, std::vector<int64_t>>& inputShapes);
    /// Loads `path` for the input files of an ONNX test-data folder
    /// (input_N.pb): symbolic dims take the files' shapes, and integer inputs
    /// whose values the import needs (an If on a sample rate, a Reshape's
    /// shape) are frozen from them (driver::load_model_for_inputs). Run then
    /// runs on those files instead of random inputs.
    static std::shared_ptr<ModelDocument> loadForInputs(const QString& path,
                                                        const QString& inputDir);

    /// The test-data folder the model was loaded for, or empty (random inputs).
    const QString& inputDir() const { return m_inputDir; }

    /// A model with symbolic input dims opened with proposed shapes, not yet
    /// confirmed: the question Run, Tune and Export ask first, and the
    /// answer the model was opened with (LoadController::confirmInputShapes).
    struct ProvisionalShapes {
        InputShapeRequest request;
        InputChoice choice;
    };
    const std::optional<ProvisionalShapes>& provisionalShapes() const { return m_provisional; }
    void setProvisionalShapes(std::optional<ProvisionalShapes> p) { m_provisional = std::move(p); }

    const QString& path() const { return m_path; }
    QString displayName() const;
    const graph::Graph& graph() const { return *m_graph; }
    /// A shared, immutable snapshot for background jobs.
    std::shared_ptr<const graph::Graph> snapshot() const { return m_graph; }
    int nodeCount() const { return int(m_graph->nodes.size()); }
    /// Replaces the graph (after an edit or undo); clears derived caches.
    void setGraph(std::shared_ptr<const graph::Graph> graph);
    /// The graph edits applied since loading, oldest first (for sessions).
    const std::vector<graph::GraphEdit>& edits() const { return m_edits; }
    std::vector<graph::GraphEdit>& edits() { return m_edits; }

    /// Nodes and producer→consumer edges for the GraphView.
    widgets::GraphViewData graphViewData() const;
    /// The node to select first: the first convolution, else node 0, else -1.
    int preferredNode() const;
    /// Floating-point operations per inference (sum over nodes).
    double totalFlops() const;

    /// op, name, attrs, input and output types of one node.
    QVector<PropertyRow> properties(int node) const;

private:
    QString m_path;
    QString m_inputDir;  // see inputDir()
    std::optional<ProvisionalShapes> m_provisional;
    std::shared_ptr<const graph::Graph> m_graph;
    std::vector<graph::GraphEdit> m_edits;
};

/// "[1, 2]" / "3" / "1.5" / "\"text\"" for a graph attribute.
QString attrToString(const graph::AttrValue& value);
/// Parses `text` as a value of the same kind as `like` (an int, a float, a
/// quoted or bare string, or a [list]); false when it does not parse.
bool attrFromString(const QString& text, const graph::AttrValue& like, graph::AttrValue* out);
/// Parses "key=value; key=value" (values: 3, 1.5, "text", [1, 2], [0.5, 1.5];
/// the type follows the text) into `out`; false with `error` naming the part.
bool parseAttrAssignments(const QString& text, std::map<std::string, graph::AttrValue>* out,
                          QString* error);
/// "1×8×32×32" for a shape ("scalar" for rank 0).
QString shapeText(const std::vector<int64_t>& shape);

}  // namespace tessera::studio
