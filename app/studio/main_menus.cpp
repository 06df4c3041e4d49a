// MainMenus: the menus, the toolbar, recent files, graph and plot export.
#include "app/studio/main_menus.h"

#include <qcustomplot.h>

#include <QAction>
#include <QActionGroup>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QSettings>
#include <QStyle>
#include <QTabWidget>
#include <QToolBar>

#include "app/studio/build_settings_bar.h"
#include "app/studio/load_controller.h"
#include "app/studio/main_window.h"
#include "app/studio/schedule_editor.h"
#include "app/studio/versions.h"
#include "app/studio/window_shortcuts_first.h"
#include "widgets/graph_view.h"
#include "widgets/perf_plot.h"
#include "widgets/roofline_plot.h"
#include "widgets/series_plot.h"

namespace tessera::studio {
namespace {

constexpr int kMaxRecent = 8;

}  // namespace

MainMenus::MainMenus(MainWindow* window, const QList<QDockWidget*>& docks)
    : QObject(window), m_window(window) {
    createFileMenu();
    m_window->edits()->fillEditMenu(m_window->menuBar()->addMenu("&Edit"));

    QMenu* modelMenu = m_window->menuBar()->addMenu("&Model");
    m_runAction = modelMenu->addAction(m_window->style()->standardIcon(QStyle::SP_MediaPlay),
                                       "&Run", m_window->runs(), &RunController::run);
    m_runAction->setShortcut(Qt::Key_F5);
    m_cancelAction = modelMenu->addAction(m_window->style()->standardIcon(QStyle::SP_BrowserStop),
                                          "&Cancel job", m_window, &MainWindow::cancelJobs);
    m_cancelAction->setShortcut(Qt::Key_Escape);
    modelMenu->addAction("Set &input shape...", m_window->edits(),
                         &EditController::setInputShapeDialog);
    modelMenu->addAction("Input &files...", m_window->loads(), &LoadController::chooseInputFiles)
        ->setObjectName("modelInputFiles");

    QMenu* scheduleMenu = m_window->menuBar()->addMenu("&Schedule");
    scheduleMenu->addAction("&Measure kernel", m_window->scheduleEditor(), &ScheduleEditor::measure)
        ->setShortcut(Qt::CTRL | Qt::Key_M);

    QMenu* tuneMenu = m_window->menuBar()->addMenu("&Tune");
    createViewMenu(m_window->menuBar()->addMenu("&View"), docks);
    QMenu* helpMenu = m_window->menuBar()->addMenu("&Help");
    helpMenu->addAction("&About Tessera Studio", this, [this]() {
        QMessageBox::about(m_window, "About Tessera Studio", aboutText());
    });
    createToolBar(tuneMenu);
    rebuildRecentMenu();
}

void MainMenus::createFileMenu() {
    QMenu* fileMenu = m_window->menuBar()->addMenu("&File");
    m_openAction = fileMenu->addAction(m_window->style()->standardIcon(QStyle::SP_DialogOpenButton),
                                       "&Open...", m_window, [this]() {
                                           if (m_window->maySetAsideWork())
                                               m_window->loads()->openDialog();
                                       });
    m_openAction->setShortcut(QKeySequence::Open);
    m_recentMenu = fileMenu->addMenu("Open &recent");
    SessionController* sessions = m_window->sessions();
    fileMenu->addAction("Open &session...", sessions, [this, sessions]() {
        if (m_window->maySetAsideWork()) sessions->openDialog();
    });
    // What needs an open model is greyed out until one is open.
    QList<QAction*> needModel;
    needModel << fileMenu->addAction("Save s&ession", sessions, &SessionController::saveSession);
    needModel.back()->setShortcut(QKeySequence::Save);
    // (Ctrl+Shift+S stays "Save model as ONNX...".)
    needModel << fileMenu->addAction("Save session &as...", sessions,
                                     &SessionController::saveDialog);
    needModel << fileMenu->addAction("&Save model as ONNX...", m_window->edits(),
                                     &EditController::saveOnnxDialog);
    needModel.back()->setShortcut(QKeySequence::SaveAs);
    needModel << fileMenu->addAction("E&xport package...", m_window->exports(),
                                     &ExportController::exportDialog);
    needModel.back()->setShortcut(Qt::CTRL | Qt::Key_E);
    needModel << fileMenu->addAction("Export &graph image (SVG, PNG)...", this,
                                     &MainMenus::exportGraphDialog);
    for (QAction* a : needModel) {
        a->setEnabled(m_window->document() != nullptr);
        connect(m_window, &MainWindow::modelLoaded, a, [a]() { a->setEnabled(true); });
    }
    needModel.front()->setObjectName("fileSaveSession");
    fileMenu->addAction("Export &plot (PNG, SVG, PDF)...", this, &MainMenus::exportPlotDialog);
    fileMenu->addSeparator();
    fileMenu->addAction("&Quit", m_window, &QWidget::close)->setShortcut(QKeySequence::Quit);
}

void MainMenus::createViewMenu(QMenu* viewMenu, const QList<QDockWidget*>& docks) {
    widgets::GraphView* graphView = m_window->graphView();
    m_fitAction = viewMenu->addAction("&Fit graph", graphView, &widgets::GraphView::fitAll);
    m_fitAction->setShortcut(Qt::CTRL | Qt::Key_0);
    viewMenu->addAction("Zoom &in", graphView, &widgets::GraphView::zoomIn)
        ->setShortcut(QKeySequence::ZoomIn);
    viewMenu->addAction("Zoom &out", graphView, &widgets::GraphView::zoomOut)
        ->setShortcut(QKeySequence::ZoomOut);
    QMenu* collapse = viewMenu->addMenu("&Collapse graph");
    auto* collapseModes = new QActionGroup(collapse);  // the mode shown is checked
    for (const auto& [how, text] : {std::pair{"none", "&Expand all"},
                                    {"fused", "&Fused kernels (as the build fuses them)"},
                                    {"scope1", "Name scopes, level &1"},
                                    {"scope2", "Name scopes, level &2 (blocks)"},
                                    {"scope3", "Name scopes, level &3"}})
        collapseModes
            ->addAction(collapse->addAction(
                text, this, [this, how = QString(how)]() { m_window->collapseGraph(how); }))
            ->setCheckable(true);
    collapseModes->actions().first()->setChecked(true);
    connect(graphView, &widgets::GraphView::layoutFinished, collapseModes,
            [graphView, collapseModes]() {
                if (!graphView->isCollapsed()) collapseModes->actions().first()->setChecked(true);
            });
    viewMenu->addAction("&Reset layout", m_window, &MainWindow::resetLayout)
        ->setObjectName("viewResetLayout");
    viewMenu->addSeparator();
    // Each dock's own toggle action takes the dock's title, which the Code
    // dock changes to the kernel it shows: the menu names the dock instead.
    for (QDockWidget* dock : docks) {
        QAction* toggle = viewMenu->addAction(dock->windowTitle());
        toggle->setObjectName("view" + dock->objectName());
        toggle->setCheckable(true);
        toggle->setChecked(dock->toggleViewAction()->isChecked());
        connect(toggle, &QAction::triggered, dock->toggleViewAction(), &QAction::trigger);
        connect(dock->toggleViewAction(), &QAction::toggled, toggle, &QAction::setChecked);
    }
}

void MainMenus::createToolBar(QMenu* tuneMenu) {
    QToolBar* toolBar = m_window->addToolBar("Main");
    toolBar->setObjectName("MainToolBar");
    toolBar->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    toolBar->addAction(m_openAction);
    toolBar->addAction(m_runAction);
    toolBar->addAction(m_cancelAction);
    TuneController* tunes = m_window->tuning();
    QAction* tune =
        tuneMenu->addAction(m_window->style()->standardIcon(QStyle::SP_MediaSeekForward),
                            "&Tune kernels...", tunes, &TuneController::tuneDialog);
    tune->setShortcut(Qt::CTRL | Qt::Key_T);
    tune->setToolTip(
        "Autotune the model's kernels (Ctrl+T) with the toolbar's settings; Run and "
        "Export then use the best schedules");
    tuneMenu->addAction("&Cancel tuning", tunes->jobs(), &JobRunner::cancel);
    toolBar->addAction(tune);
    toolBar->addWidget(m_window->settingsBar());
    toolBar->addSeparator();
    toolBar->addAction(m_fitAction);
    toolBar->addSeparator();
    m_search = new QLineEdit(m_window);
    m_search->setPlaceholderText("Search nodes (Ctrl+F)");
    m_search->setClearButtonEnabled(true);
    m_search->setMaximumWidth(260);
    letWindowShortcutsPass(m_search, m_window);  // Ctrl+E exports from the search box too
    toolBar->addWidget(m_search);
    auto* findAction = new QAction("&Find node", m_window);
    findAction->setShortcut(QKeySequence::Find);
    connect(findAction, &QAction::triggered, this, [this]() {
        m_search->setFocus();
        m_search->selectAll();
    });
    m_window->addAction(findAction);
    connect(m_search, &QLineEdit::returnPressed, this,
            [this]() { m_window->searchGraph(m_search->text()); });
    connect(m_search, &QLineEdit::textChanged, this, [this](const QString& text) {
        if (text.isEmpty()) m_window->graphView()->setHighlightedNodes({}, QColor());
    });
}

QStringList MainMenus::recentFiles() { return QSettings().value("recentFiles").toStringList(); }

void MainMenus::addRecentFile(const QString& path) {
    QStringList files = recentFiles();
    const QString absolute = QFileInfo(path).absoluteFilePath();
    files.removeAll(absolute);
    files.prepend(absolute);
    while (files.size() > kMaxRecent) files.removeLast();
    QSettings().setValue("recentFiles", files);
    rebuildRecentMenu();
}

void MainMenus::rebuildRecentMenu() {
    m_recentMenu->clear();
    for (const QString& file : recentFiles())
        m_recentMenu
            ->addAction(QFileInfo(file).dir().dirName() + "/" + QFileInfo(file).fileName(), this,
                        [this, file]() { m_window->openModel(file); })
            ->setToolTip(file);
    m_recentMenu->setEnabled(!m_recentMenu->isEmpty());
}

void MainMenus::exportGraphDialog() {
    const QString path = QFileDialog::getSaveFileName(m_window, "Export graph", "graph.svg",
                                                      "SVG (*.svg);;PNG (*.png)");
    if (path.isEmpty()) return;
    if (m_window->graphView()->exportImage(path))
        m_window->workspace()->log("Exported graph to " + path);
    else
        m_window->workspace()->reportError("Cannot export graph", path);
}

void MainMenus::exportPlotDialog() {
    const QString path = QFileDialog::getSaveFileName(m_window, "Export plot", "plot.png",
                                                      "PNG (*.png);;SVG (*.svg);;PDF (*.pdf)");
    if (path.isEmpty()) return;
    RunController* runs = m_window->runs();
    QWidget* shown = runs->plotTabs()->currentWidget();
    QCustomPlot* plot = shown == runs->perfPlot()       ? runs->perfPlot()->plot()
                        : shown == runs->rooflinePlot() ? runs->rooflinePlot()->plot()
                        : shown == m_window->tuning()->plot()
                            ? m_window->tuning()->plot()->plot()
                            : m_window->scheduleEditor()->measurePlot()->plot();
    if (widgets::exportPlot(plot, path))
        m_window->workspace()->log("Exported plot to " + path);
    else
        m_window->workspace()->reportError("Cannot export plot", path);
}

}  // namespace tessera::studio
