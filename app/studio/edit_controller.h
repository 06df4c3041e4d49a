// EditController: graph editing through the undo stack: one edit at a time
// (refused edits change nothing and say why), the Edit menu's actions and the
// graph's node context menu, the dialogs on the selected node (delete,
// rename, replace op, insert a node after it, set an input shape), edits
// typed into the properties tree, and saving the edited model as ONNX.
#pragma once

#include <QObject>
#include <QString>
#include <map>
#include <memory>
#include <vector>

#include "engine/graph/graph_edit.h"

class QMenu;
class QUndoStack;

namespace tessera::widgets {
class GraphView;
}

namespace tessera::studio {

class JobRunner;
class ModelDocument;
class Workspace;

class EditController : public QObject {
    Q_OBJECT
public:
    EditController(Workspace* workspace, QUndoStack* undo, widgets::GraphView* graphView);

    /// Adds undo, redo and the node edits (delete, rename, replace op) to `menu`.
    void fillEditMenu(QMenu* menu);
    /// The graph's context menu for a node (show loop IR, schedule, rename,
    /// replace op, insert after, delete); the caller owns it. Its actions
    /// select the node first.
    QMenu* nodeContextMenu(int node);

    /// Applies an edit through the undo stack. A refused edit changes nothing,
    /// is logged with its reason and emits refused; returns false.
    bool apply(const graph::GraphEdit& edit);
    /// Inserts node `name` applying `op` (with `attrs`) to the output of
    /// `node`; false (logged) when refused. The new node is selected once shown.
    bool insertNodeAfter(int node, const QString& op, const QString& name,
                         const std::map<std::string, graph::AttrValue>& attrs = {});
    /// Saves the (edited) model as ONNX in a job (a snapshot of the graph,
    /// off the UI thread); emits saved(path) when written, the error is
    /// reported otherwise. False when there is no model.
    bool saveOnnx(const QString& path);
    JobRunner* jobs() const { return m_jobs; }
    /// An edit typed into the Properties dock (PropertiesModel::edited): the
    /// selected node's name (kind "name") or attribute `property` ("attr") is
    /// to become `text`; a refused one asks for the node to be shown again.
    void propertyEdited(const QString& kind, const QString& property, const QString& text);

    void deleteCurrentNode();
    void renameCurrentNode();
    void replaceCurrentOp();
    /// Asks for an op (picker with descriptions), a name and attributes, and
    /// inserts that node after the selected one.
    void insertNodeDialog();
    void setInputShapeDialog();
    void saveOnnxDialog();

signals:
    void refused(const QString& message);
    void saved(const QString& path);
    /// The document holds a new graph (an edit, undo or redo); the window
    /// shows it and then selects `select` (a node name; "" for the default).
    void graphInstalled(const QString& select);
    /// The node should be shown again (its properties restored after a refused edit).
    void nodeRefresh(int node);
    /// The node context menu asks for a view ("code", "schedule": MainWindow::raiseView).
    void viewRequested(const QString& name);

private:
    JobRunner* m_jobs;
    void install(std::shared_ptr<const graph::Graph> graph, const std::vector<graph::GraphEdit>& edits);
    ModelDocument* document() const;

    Workspace* m_workspace;
    QUndoStack* m_undo;
    widgets::GraphView* m_graphView;
    QString m_select;  // the node to select after the next install (an inserted one)
};

}  // namespace tessera::studio
