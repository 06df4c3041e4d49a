// MainWindow's menus around the graph: the Edit menu and the node context
// menu (their actions are EditController's), graph and plot export, search,
// recent files, closing, About.
#include <QAction>
#include <QCloseEvent>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMessageBox>
#include <QSettings>
#include <QTabWidget>
#include <QUndoStack>
#include <qcustomplot.h>

#include "app/studio/main_window.h"
#include "app/studio/schedule_editor.h"
#include "app/studio/versions.h"
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
    editMenu->addAction("&Delete node", m_edits, &EditController::deleteCurrentNode)
        ->setShortcut(QKeySequence::Delete);
    editMenu->addAction("Re&name node...", m_edits, &EditController::renameCurrentNode)
        ->setShortcut(Qt::Key_F2);
    editMenu->addAction("Replace &op type...", m_edits, &EditController::replaceCurrentOp);
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
    menu->addAction("Re&name...", this, onNode([this]() { m_edits->renameCurrentNode(); }));
    menu->addAction("Replace &op type...", this, onNode([this]() { m_edits->replaceCurrentOp(); }));
    menu->addAction("&Insert node after...", this, onNode([this]() { m_edits->insertNodeDialog(); }));
    menu->addAction("&Delete", this, onNode([this]() { m_edits->deleteCurrentNode(); }));
    return menu;
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
