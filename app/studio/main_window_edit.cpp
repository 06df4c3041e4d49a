// MainWindow, second half: graph edits with undo/redo, saving and exporting,
// search, code compilation for the code panes, recent files, About.
#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDockWidget>
#include <QFileDialog>
#include <QFile>
#include <QFileInfo>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QSettings>
#include <QTabWidget>
#include <QTreeWidget>
#include <QUndoStack>
#include <qcustomplot.h>

#include "app/studio/edit_command.h"
#include "app/studio/main_window.h"

#include "app/studio/input_shape_dialog.h"
#include "app/studio/pass_pipeline_panel.h"
#include "app/studio/schedule_editor.h"
#include "app/studio/versions.h"
#include "engine/codegen/cuda/cuda_codegen.h"
#include "engine/codegen/llvm/llvm_codegen.h"
#include "engine/frontend/onnx/onnx_importer.h"
#include "engine/graph/op_registry.h"
#include "engine/topi/schedule_gpu.h"
#include "widgets/code_panes.h"
#include "widgets/graph_view.h"
#include "widgets/perf_plot.h"
#include "widgets/roofline_plot.h"
#include "widgets/series_plot.h"

namespace tessera::studio {
namespace {

constexpr int kMaxRecent = 8;

}  // namespace

void MainWindow::createEditActions(QMenu* editMenu) {
    QAction* undo = m_undo->createUndoAction(this, "&Undo");
    undo->setShortcut(QKeySequence::Undo);
    QAction* redo = m_undo->createRedoAction(this, "&Redo");
    redo->setShortcuts({QKeySequence::Redo, QKeySequence(Qt::CTRL | Qt::Key_Y)});
    editMenu->addAction(undo);
    editMenu->addAction(redo);
    editMenu->addSeparator();
    editMenu->addAction("&Delete node", this, &MainWindow::deleteCurrentNode)
        ->setShortcut(QKeySequence::Delete);
    editMenu->addAction("Re&name node...", this, &MainWindow::renameCurrentNode)
        ->setShortcut(Qt::Key_F2);
    editMenu->addAction("Replace &op type...", this, &MainWindow::replaceCurrentOp);
    m_graphView->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(m_graphView, &QWidget::customContextMenuRequested, this, [this](const QPoint& pos) {
        const int node = m_graphView->nodeAt(pos);
        if (node < 0) return;
        QMenu* menu = nodeContextMenu(node);
        menu->setAttribute(Qt::WA_DeleteOnClose);
        menu->popup(m_graphView->viewport()->mapToGlobal(pos));
    });
}

QMenu* MainWindow::nodeContextMenu(int node) {
    auto* menu = new QMenu(this);
    if (!m_document || node < 0 || node >= m_document->nodeCount()) return menu;
    const graph::Node& n = m_document->graph().nodes[size_t(node)];
    menu->setTitle(QString::fromStdString(n.op + " " + n.name));
    // Each action acts on this node: select it, then do what the menus do.
    auto onNode = [this, node](auto action) {
        return [this, node, action]() {
            if (!m_document || node >= m_document->nodeCount()) return;
            m_graphView->setCurrentNode(node);
            action();
        };
    };
    menu->addAction("Show &loop IR", this, onNode([this]() { raiseView("code"); }));
    menu->addAction("&Schedule...", this, onNode([this]() { raiseView("schedule"); }));
    menu->addSeparator();
    menu->addAction("Re&name...", this, onNode([this]() { renameCurrentNode(); }));
    menu->addAction("Replace &op type...", this, onNode([this]() { replaceCurrentOp(); }));
    menu->addAction("&Insert node after...", this, onNode([this]() { insertNodeDialog(); }));
    menu->addAction("&Delete", this, onNode([this]() { deleteCurrentNode(); }));
    return menu;
}

bool MainWindow::applyGraphEdit(const graph::GraphEdit& edit) {
    if (!m_document) return false;
    std::shared_ptr<const graph::Graph> before = m_document->snapshot(), after;
    try {
        after = GraphEditCommand::applied(*before, edit);
    } catch (const std::exception& e) {
        const QString message = oneLine(QString::fromStdString(e.what()));
        reportError("Edit refused", message);
        emit editRefused(message);
        return false;
    }
    m_undo->push(new GraphEditCommand(
        edit, before, after, m_document->edits(),
        [this](std::shared_ptr<const graph::Graph> g, const std::vector<graph::GraphEdit>& edits) {
            installGraph(std::move(g), edits);
        }));
    log("Edit: " + QString::fromStdString(graph::describe(edit)));
    return true;
}

void MainWindow::installGraph(std::shared_ptr<const graph::Graph> graph,
                              const std::vector<graph::GraphEdit>& edits) {
    if (!m_document) return;
    const int current = m_graphView->currentNode();
    QString keep = current >= 0 && current < m_document->nodeCount()
                       ? QString::fromStdString(m_document->graph().nodes[current].name)
                       : QString("");
    // A rename keeps the selection on the renamed node.
    if (!edits.empty() && edits.back().kind == graph::GraphEdit::Kind::Rename &&
        QString::fromStdString(edits.back().target) == keep)
        keep = QString::fromStdString(edits.back().key);
    m_runs->clearResult();  // a result for the old graph would be stale
    m_document->setGraph(std::move(graph));
    m_document->edits() = edits;
    m_selectAfterLayout = keep;
    m_graphView->setGraph(m_document->graphViewData());
    m_passPanel->setGraph(m_document->snapshot());
}

void MainWindow::onPropertyEdited(QTreeWidgetItem* item, int column) {
    if (m_fillingProperties || column != 1 || !m_document) return;
    const int node = m_graphView->currentNode();
    if (node < 0 || node >= m_document->nodeCount()) return;
    const graph::Node& n = m_document->graph().nodes[node];
    const QString role = item->data(0, Qt::UserRole).toString();
    graph::GraphEdit edit;
    edit.target = n.name;
    if (role == "name") {
        edit.kind = graph::GraphEdit::Kind::Rename;
        edit.key = item->text(1).trimmed().toStdString();
    } else if (role == "attr") {
        const std::string key = item->text(0).toStdString();
        auto it = n.attrs.find(key);
        if (it == n.attrs.end()) return;
        edit.kind = graph::GraphEdit::Kind::SetAttribute;
        edit.key = key;
        if (!attrFromString(item->text(1), it->second, &edit.value)) {
            const QString message = QString("node '%1': '%2' is not a valid value for %3 (was %4)")
                                        .arg(QString::fromStdString(n.name), item->text(1),
                                             QString::fromStdString(key), attrToString(it->second));
            reportError("Edit refused", message);
            emit editRefused(message);
            QMetaObject::invokeMethod(this, [this, node]() { showNode(node); }, Qt::QueuedConnection);
            return;
        }
    } else {
        return;
    }
    if (!applyGraphEdit(edit))  // restore the shown value
        QMetaObject::invokeMethod(this, [this, node]() { showNode(node); }, Qt::QueuedConnection);
}

void MainWindow::deleteCurrentNode() {
    const int node = m_graphView->currentNode();
    if (!m_document || node < 0 || node >= m_document->nodeCount()) return;
    applyGraphEdit(makeEdit(graph::GraphEdit::Kind::DeleteNode, m_document->graph().nodes[node].name));
}

void MainWindow::renameCurrentNode() {
    const int node = m_graphView->currentNode();
    if (!m_document || node < 0 || node >= m_document->nodeCount()) return;
    const QString old = QString::fromStdString(m_document->graph().nodes[node].name);
    bool ok = false;
    const QString name = QInputDialog::getText(this, "Rename node", "New name:", QLineEdit::Normal, old, &ok);
    if (ok && name != old)
        applyGraphEdit(makeEdit(graph::GraphEdit::Kind::Rename, old.toStdString(), name.toStdString()));
}

void MainWindow::replaceCurrentOp() {
    const int node = m_graphView->currentNode();
    if (!m_document || node < 0 || node >= m_document->nodeCount()) return;
    QStringList ops;
    for (const graph::OpDef* def : graph::all_ops()) ops << QString::fromStdString(def->name);
    ops.sort();
    bool ok = false;
    const QString op = QInputDialog::getItem(this, "Replace op type", "New op:", ops, 0, false, &ok);
    if (ok)
        applyGraphEdit(makeEdit(graph::GraphEdit::Kind::ReplaceOp, m_document->graph().nodes[node].name,
                        op.toStdString()));
}

bool MainWindow::insertNodeAfter(int node, const QString& op, const QString& name,
                                 const std::map<std::string, graph::AttrValue>& attrs) {
    if (!m_document || node < 0 || node >= m_document->nodeCount()) return false;
    graph::GraphEdit edit = makeEdit(graph::GraphEdit::Kind::InsertAfter,
                                     m_document->graph().nodes[size_t(node)].name, op.toStdString());
    edit.name = name.toStdString();
    edit.attrs = attrs;
    if (!applyGraphEdit(edit)) return false;
    m_selectAfterLayout = name;  // show the new node once the graph is laid out
    return true;
}

void MainWindow::insertNodeDialog() {
    const int node = m_graphView->currentNode();
    if (!m_document || node < 0 || node >= m_document->nodeCount()) return;
    // The op picker lists every registered op with its description.
    QStringList items;
    for (const graph::OpDef* def : graph::all_ops())
        items << QString::fromStdString(def->name + "  \u2014  " + def->description);
    items.sort();
    bool ok = false;
    const QString item = QInputDialog::getItem(
        this, "Insert node",
        QString("Op to apply to the output of %1:").arg(QString::fromStdString(m_document->graph().nodes[size_t(node)].name)),
        items, 0, false, &ok);
    if (!ok) return;
    const QString op = item.section("  \u2014  ", 0, 0);
    QString base = op.section('.', -1);
    QString name = base;
    for (int k = 1; m_document->graph().find_node(name.toStdString()) >= 0; ++k)
        name = base + QString::number(k);
    const QString text = QInputDialog::getText(
        this, "Insert " + op,
        "Name, then attributes as key=value, separated by ';'\n"
        "(values: 3, 1.5, \"text\", [1, 2] or [0.5, 1.5]):",
        QLineEdit::Normal, name, &ok);
    if (!ok) return;
    const QStringList parts = text.split(';', Qt::SkipEmptyParts);
    if (parts.isEmpty()) return;
    std::map<std::string, graph::AttrValue> attrs;
    QString error;
    if (!parseAttrAssignments(parts.mid(1).join(';'), &attrs, &error)) {
        reportError("Edit refused", error);
        return;
    }
    insertNodeAfter(node, op, parts.first().trimmed(), attrs);
}

void MainWindow::setInputShapeDialog() {
    if (!m_document || m_document->graph().inputs.empty()) return;
    const graph::Graph& g = m_document->graph();
    const graph::Value& input = g.values[g.inputs[0]];
    bool ok = false;
    const QString text = QInputDialog::getText(
        this, "Set input shape", QString("Shape of %1:").arg(QString::fromStdString(input.name)),
        QLineEdit::Normal, shapeText(input.type.shape).replace(QChar(0x00d7), 'x'), &ok);
    std::vector<int64_t> shape;
    if (!ok) return;
    if (!parseShapeText(text, &shape)) {
        reportError("Edit refused", "'" + text + "' is not a shape like 1x3x224x224");
        return;
    }
    applyGraphEdit(makeEdit(graph::GraphEdit::Kind::SetInputShape, input.name, {}, {}, shape));
}

bool MainWindow::saveOnnx(const QString& path) {
    if (!m_document) return false;
    try {
        frontend::export_onnx_file(m_document->graph(), path.toStdString());
    } catch (const std::exception& e) {
        reportError("Cannot save model", oneLine(QString::fromStdString(e.what())));
        return false;
    }
    log("Saved " + path);
    return true;
}

void MainWindow::saveOnnxDialog() {
    if (!m_document) return;
    const QString path = QFileDialog::getSaveFileName(this, "Save model as ONNX", m_document->path(),
                                                      "ONNX models (*.onnx)");
    if (!path.isEmpty()) saveOnnx(path);
}

void MainWindow::exportGraphDialog() {
    const QString path = QFileDialog::getSaveFileName(this, "Export graph", "graph.svg",
                                                      "SVG (*.svg);;PNG (*.png)");
    if (path.isEmpty()) return;
    if (m_graphView->exportImage(path))
        log("Exported graph to " + path);
    else
        reportError("Cannot export graph", path);
}

void MainWindow::exportPlotDialog() {
    const QString path = QFileDialog::getSaveFileName(this, "Export plot", "plot.png",
                                                      "PNG (*.png);;SVG (*.svg);;PDF (*.pdf)");
    if (path.isEmpty()) return;
    QWidget* shown = m_runs->plotTabs()->currentWidget();
    QCustomPlot* plot = shown == m_runs->perfPlot()       ? m_runs->perfPlot()->plot()
                        : shown == m_runs->rooflinePlot() ? m_runs->rooflinePlot()->plot()
                        : shown == m_tunes->plot()        ? m_tunes->plot()->plot()
                                                          : m_scheduleEditor->measurePlot()->plot();
    if (widgets::exportPlot(plot, path))
        log("Exported plot to " + path);
    else
        reportError("Cannot export plot", path);
}

int MainWindow::searchGraph(const QString& text) {
    const int found = m_graphView->search(text);
    m_statusLabel->setText(text.isEmpty() ? QString() : QString("%1 nodes match '%2'").arg(found).arg(text));
    return found;
}

QStringList MainWindow::recentFiles() const {
    return QSettings().value("recentFiles").toStringList();
}

void MainWindow::addRecentFile(const QString& path) {
    QStringList files = recentFiles();
    const QString absolute = QFileInfo(path).absoluteFilePath();
    files.removeAll(absolute);
    files.prepend(absolute);
    while (files.size() > kMaxRecent) files.removeLast();
    QSettings().setValue("recentFiles", files);
    rebuildRecentMenu();
}

void MainWindow::rebuildRecentMenu() {
    if (!m_recentMenu) return;
    m_recentMenu->clear();
    for (const QString& file : recentFiles())
        m_recentMenu->addAction(QFileInfo(file).fileName(), this, [this, file]() { openModel(file); })
            ->setToolTip(file);
    m_recentMenu->setEnabled(!m_recentMenu->isEmpty());
}

void MainWindow::closeEvent(QCloseEvent* event) {
    QSettings().setValue("window/state", saveState());
    QFile::remove(SessionController::autosavePath());  // a normal exit: nothing to recover
    QMainWindow::closeEvent(event);
}

void MainWindow::showAbout() {
    QMessageBox::about(this, "About Tessera Studio", aboutText());
}

}  // namespace tessera::studio
