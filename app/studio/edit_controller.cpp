// EditController: edits through the undo stack, the Edit and node context
// menus, the edit dialogs, saving as ONNX.
#include "app/studio/edit_controller.h"

#include <QFileDialog>
#include <QInputDialog>
#include <QLineEdit>
#include <QMenu>
#include <QUndoStack>

#include "app/studio/edit_command.h"
#include "app/studio/input_shape_dialog.h"
#include "app/studio/job_runner.h"
#include "app/studio/workspace.h"
#include "engine/frontend/onnx/onnx_importer.h"
#include "engine/graph/op_registry.h"
#include "widgets/graph_view.h"

namespace tessera::studio {

EditController::EditController(Workspace* workspace, QUndoStack* undo, widgets::GraphView* graphView)
    : QObject(workspace), m_workspace(workspace), m_undo(undo), m_graphView(graphView) {
    m_jobs = new JobRunner(this);  // Save as ONNX
    connect(m_jobs, &JobRunner::jobFailed, this, [this](int, const QString& message) {
        m_workspace->reportError("Cannot save model", message);
    });
    m_graphView->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(m_graphView, &QWidget::customContextMenuRequested, this, [this](const QPoint& pos) {
        const int node = m_graphView->nodeAt(pos);
        if (node < 0) return;
        QMenu* menu = nodeContextMenu(node);
        menu->setAttribute(Qt::WA_DeleteOnClose);
        menu->popup(m_graphView->viewport()->mapToGlobal(pos));
    });
}

void EditController::fillEditMenu(QMenu* menu) {
    QAction* undo = m_undo->createUndoAction(menu, "&Undo");
    undo->setShortcut(QKeySequence::Undo);
    QAction* redo = m_undo->createRedoAction(menu, "&Redo");
    redo->setShortcuts({QKeySequence::Redo, QKeySequence(Qt::CTRL | Qt::Key_Y)});
    menu->addAction(undo);
    menu->addAction(redo);
    menu->addSeparator();
    menu->addAction("&Delete node", this, &EditController::deleteCurrentNode)
        ->setShortcut(QKeySequence::Delete);
    menu->addAction("Re&name node...", this, &EditController::renameCurrentNode)
        ->setShortcut(Qt::Key_F2);
    menu->addAction("Replace &op type...", this, &EditController::replaceCurrentOp);
}

QMenu* EditController::nodeContextMenu(int node) {
    auto* menu = new QMenu(m_workspace->dialogParent());
    if (!document() || node < 0 || node >= document()->nodeCount()) return menu;
    const graph::Node& n = document()->graph().nodes[size_t(node)];
    menu->setTitle(QString::fromStdString(n.op + " " + n.name));
    // Each action acts on this node: select it, then do what the menus do.
    auto onNode = [this, node](auto action) {
        return [this, node, action]() {
            if (!document() || node >= document()->nodeCount()) return;
            m_graphView->setCurrentNode(node);
            action();
        };
    };
    menu->addAction("Show &loop IR", this, onNode([this]() { emit viewRequested("code"); }));
    menu->addAction("&Schedule...", this, onNode([this]() { emit viewRequested("schedule"); }));
    menu->addSeparator();
    menu->addAction("Re&name...", this, onNode([this]() { renameCurrentNode(); }));
    menu->addAction("Replace &op type...", this, onNode([this]() { replaceCurrentOp(); }));
    menu->addAction("&Insert node after...", this, onNode([this]() { insertNodeDialog(); }));
    menu->addAction("&Delete", this, onNode([this]() { deleteCurrentNode(); }));
    return menu;
}

ModelDocument* EditController::document() const { return m_workspace->document().get(); }

bool EditController::apply(const graph::GraphEdit& edit) {
    if (!document()) return false;
    std::shared_ptr<const graph::Graph> before = document()->snapshot(), after;
    try {
        after = GraphEditCommand::applied(*before, edit);
    } catch (const std::exception& e) {
        const QString message = oneLine(QString::fromStdString(e.what()));
        m_workspace->reportError("Edit refused", message);
        emit refused(message);
        return false;
    }
    m_undo->push(new GraphEditCommand(
        edit, before, after, document()->edits(),
        [this](std::shared_ptr<const graph::Graph> g, const std::vector<graph::GraphEdit>& edits) {
            install(std::move(g), edits);
        }));
    m_workspace->log("Edit: " + QString::fromStdString(graph::describe(edit)));
    return true;
}

void EditController::install(std::shared_ptr<const graph::Graph> graph,
                              const std::vector<graph::GraphEdit>& edits) {
    if (!document()) return;
    const int current = m_graphView->currentNode();
    QString keep = current >= 0 && current < document()->nodeCount()
                       ? QString::fromStdString(document()->graph().nodes[current].name)
                       : QString("");
    // A rename keeps the selection on the renamed node.
    if (!edits.empty() && edits.back().kind == graph::GraphEdit::Kind::Rename &&
        QString::fromStdString(edits.back().target) == keep)
        keep = QString::fromStdString(edits.back().key);
    if (!m_select.isEmpty()) keep = m_select;  // a new node is selected once shown
    document()->setGraph(std::move(graph));
    document()->edits() = edits;
    m_workspace->noteBuildInputChanged("graph edited");
    emit graphInstalled(keep);
}

void EditController::propertyEdited(const QString& kind, const QString& property,
                                    const QString& text) {
    if (!document()) return;
    const int node = m_graphView->currentNode();
    if (node < 0 || node >= document()->nodeCount()) return;
    const graph::Node& n = document()->graph().nodes[node];
    graph::GraphEdit edit;
    edit.target = n.name;
    if (kind == "name") {
        edit.kind = graph::GraphEdit::Kind::Rename;
        edit.key = text.trimmed().toStdString();
    } else if (kind == "attr") {
        const std::string key = property.toStdString();
        auto it = n.attrs.find(key);
        if (it == n.attrs.end()) return;
        edit.kind = graph::GraphEdit::Kind::SetAttribute;
        edit.key = key;
        if (!attrFromString(text, it->second, &edit.value)) {
            const QString message = QString("node '%1': '%2' is not a valid value for %3 (was %4)")
                                        .arg(QString::fromStdString(n.name), text,
                                             QString::fromStdString(key), attrToString(it->second));
            m_workspace->reportError("Edit refused", message);
            emit refused(message);
            QMetaObject::invokeMethod(this, [this, node]() { emit nodeRefresh(node); }, Qt::QueuedConnection);
            return;
        }
    } else {
        return;
    }
    if (!apply(edit))  // restore the shown value
        QMetaObject::invokeMethod(this, [this, node]() { emit nodeRefresh(node); }, Qt::QueuedConnection);
}

void EditController::deleteCurrentNode() {
    const int node = m_graphView->currentNode();
    if (!document() || node < 0 || node >= document()->nodeCount()) return;
    apply(makeEdit(graph::GraphEdit::Kind::DeleteNode, document()->graph().nodes[node].name));
}

void EditController::renameCurrentNode() {
    const int node = m_graphView->currentNode();
    if (!document() || node < 0 || node >= document()->nodeCount()) return;
    const QString old = QString::fromStdString(document()->graph().nodes[node].name);
    bool ok = false;
    const QString name = QInputDialog::getText(m_workspace->dialogParent(), "Rename node", "New name:", QLineEdit::Normal, old, &ok);
    if (ok && name != old)
        apply(makeEdit(graph::GraphEdit::Kind::Rename, old.toStdString(), name.toStdString()));
}

void EditController::replaceCurrentOp() {
    const int node = m_graphView->currentNode();
    if (!document() || node < 0 || node >= document()->nodeCount()) return;
    QStringList ops;
    for (const graph::OpDef* def : graph::all_ops()) ops << QString::fromStdString(def->name);
    ops.sort();
    bool ok = false;
    const QString op = QInputDialog::getItem(m_workspace->dialogParent(), "Replace op type", "New op:", ops, 0, false, &ok);
    if (ok)
        apply(makeEdit(graph::GraphEdit::Kind::ReplaceOp, document()->graph().nodes[node].name,
                        op.toStdString()));
}

bool EditController::insertNodeAfter(int node, const QString& op, const QString& name,
                                 const std::map<std::string, graph::AttrValue>& attrs) {
    if (!document() || node < 0 || node >= document()->nodeCount()) return false;
    graph::GraphEdit edit = makeEdit(graph::GraphEdit::Kind::InsertAfter,
                                     document()->graph().nodes[size_t(node)].name, op.toStdString());
    edit.name = name.toStdString();
    edit.attrs = attrs;
    m_select = name;  // show the new node once the graph is laid out
    const bool applied = apply(edit);
    m_select.clear();
    return applied;
}

void EditController::insertNodeDialog() {
    const int node = m_graphView->currentNode();
    if (!document() || node < 0 || node >= document()->nodeCount()) return;
    // The op picker lists every registered op with its description.
    QStringList items;
    for (const graph::OpDef* def : graph::all_ops())
        items << QString::fromStdString(def->name + "  \u2014  " + def->description);
    items.sort();
    bool ok = false;
    const QString item = QInputDialog::getItem(m_workspace->dialogParent(), "Insert node",
        QString("Op to apply to the output of %1:").arg(QString::fromStdString(document()->graph().nodes[size_t(node)].name)),
        items, 0, false, &ok);
    if (!ok) return;
    const QString op = item.section("  \u2014  ", 0, 0);
    QString base = op.section('.', -1);
    QString name = base;
    for (int k = 1; document()->graph().find_node(name.toStdString()) >= 0; ++k)
        name = base + QString::number(k);
    const QString text = QInputDialog::getText(m_workspace->dialogParent(), "Insert " + op,
        "Name, then attributes as key=value, separated by ';'\n"
        "(values: 3, 1.5, \"text\", [1, 2] or [0.5, 1.5]):",
        QLineEdit::Normal, name, &ok);
    if (!ok) return;
    const QStringList parts = text.split(';', Qt::SkipEmptyParts);
    if (parts.isEmpty()) return;
    std::map<std::string, graph::AttrValue> attrs;
    QString error;
    if (!parseAttrAssignments(parts.mid(1).join(';'), &attrs, &error)) {
        m_workspace->reportError("Edit refused", error);
        return;
    }
    insertNodeAfter(node, op, parts.first().trimmed(), attrs);
}

void EditController::setInputShapeDialog() {
    if (!document() || document()->graph().inputs.empty()) return;
    const graph::Graph& g = document()->graph();
    const graph::Value& input = g.values[g.inputs[0]];
    bool ok = false;
    const QString text = QInputDialog::getText(m_workspace->dialogParent(), "Set input shape", QString("Shape of %1:").arg(QString::fromStdString(input.name)),
        QLineEdit::Normal, shapeText(input.type.shape).replace(QChar(0x00d7), 'x'), &ok);
    std::vector<int64_t> shape;
    if (!ok) return;
    if (!parseShapeText(text, &shape)) {
        m_workspace->reportError("Edit refused", "'" + text + "' is not a shape like 1x3x224x224");
        return;
    }
    apply(makeEdit(graph::GraphEdit::Kind::SetInputShape, input.name, {}, {}, shape));
}

bool EditController::saveOnnx(const QString& path) {
    if (!document()) return false;
    std::shared_ptr<const graph::Graph> graph = document()->snapshot();
    m_jobs->start(
        "Saving " + path,
        [graph, path](const JobContext&) {
            frontend::export_onnx_file(*graph, path.toStdString());
            return path;
        },
        [this](const QString& written) {
            m_workspace->log("Saved " + written);
            emit saved(written);
        });
    return true;
}

void EditController::saveOnnxDialog() {
    if (!document()) return;
    const QString path = QFileDialog::getSaveFileName(m_workspace->dialogParent(), "Save model as ONNX", document()->path(),
                                                      "ONNX models (*.onnx)");
    if (!path.isEmpty()) saveOnnx(path);
}

}  // namespace tessera::studio
