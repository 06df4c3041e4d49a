// MainWindow's menus and toolbar: File, Edit (main_window_edit.cpp), Model,
// Schedule, Tune, View (zoom, collapse modes, the docks), Help, and the
// toolbar with the build settings and node search. Each action calls a
// controller; nothing here holds state of its own.
#include <QAction>
#include <QActionGroup>
#include <QDockWidget>
#include <QLineEdit>
#include <QMenuBar>
#include <QStyle>
#include <QToolBar>

#include "app/studio/build_settings_bar.h"
#include "app/studio/main_window.h"
#include "app/studio/schedule_editor.h"
#include "widgets/graph_view.h"

namespace tessera::studio {

void MainWindow::createActions() {
    QMenu* fileMenu = menuBar()->addMenu("&File");
    QAction* openAction = fileMenu->addAction(style()->standardIcon(QStyle::SP_DialogOpenButton),
                                              "&Open...", this, &MainWindow::openFileDialog);
    openAction->setShortcut(QKeySequence::Open);
    m_recentMenu = fileMenu->addMenu("Open &recent");
    fileMenu->addAction("Open &session...", m_sessions, &SessionController::openDialog);
    fileMenu->addAction("Save s&ession...", m_sessions, &SessionController::saveDialog)
        ->setShortcut(QKeySequence::Save);
    fileMenu->addAction("&Save model as ONNX...", m_edits, &EditController::saveOnnxDialog)
        ->setShortcut(QKeySequence::SaveAs);
    fileMenu->addAction("E&xport package...", m_exports, &ExportController::exportDialog)
        ->setShortcut(Qt::CTRL | Qt::Key_E);
    fileMenu->addAction("Export &graph image (SVG, PNG)...", this, &MainWindow::exportGraphDialog);
    fileMenu->addAction("Export &plot (PNG, SVG, PDF)...", this, &MainWindow::exportPlotDialog);
    fileMenu->addSeparator();
    QAction* quitAction = fileMenu->addAction("&Quit", this, &QWidget::close);
    quitAction->setShortcut(QKeySequence::Quit);

    createEditActions(menuBar()->addMenu("&Edit"));

    QMenu* modelMenu = menuBar()->addMenu("&Model");
    m_runAction = modelMenu->addAction(style()->standardIcon(QStyle::SP_MediaPlay), "&Run", m_runs,
                                       &RunController::run);
    m_runAction->setShortcut(Qt::Key_F5);
    QAction* cancelAction = modelMenu->addAction(style()->standardIcon(QStyle::SP_BrowserStop),
                                                 "&Cancel job", this, &MainWindow::cancelJobs);
    cancelAction->setShortcut(Qt::Key_Escape);
    modelMenu->addAction("Set &input shape...", m_edits, &EditController::setInputShapeDialog);

    QMenu* scheduleMenu = menuBar()->addMenu("&Schedule");
    scheduleMenu->addAction("&Measure kernel", m_scheduleEditor, &ScheduleEditor::measure)
        ->setShortcut(Qt::CTRL | Qt::Key_M);

    QMenu* tuneMenu = menuBar()->addMenu("&Tune");
    QMenu* viewMenu = menuBar()->addMenu("&View");
    QAction* fitAction =
        viewMenu->addAction("&Fit graph", m_graphView, &widgets::GraphView::fitAll);
    fitAction->setShortcut(Qt::CTRL | Qt::Key_0);
    viewMenu->addAction("Zoom &in", m_graphView, &widgets::GraphView::zoomIn)
        ->setShortcut(QKeySequence::ZoomIn);
    viewMenu->addAction("Zoom &out", m_graphView, &widgets::GraphView::zoomOut)
        ->setShortcut(QKeySequence::ZoomOut);
    QMenu* collapse = viewMenu->addMenu("&Collapse graph");
    auto* collapseModes = new QActionGroup(collapse);  // the mode shown is checked
    for (const auto& [how, text] :
         {std::pair{"none", "&Expand all"}, {"fused", "&Fused kernels (as the build fuses them)"},
          {"scope1", "Name scopes, level &1"}, {"scope2", "Name scopes, level &2 (blocks)"},
          {"scope3", "Name scopes, level &3"}})
        collapseModes->addAction(collapse->addAction(text, this, [this, how = QString(how)]() {
            collapseGraph(how);
        }))->setCheckable(true);
    collapseModes->actions().first()->setChecked(true);
    connect(m_graphView, &widgets::GraphView::layoutFinished, collapseModes, [this, collapseModes]() {
        if (!m_graphView->isCollapsed()) collapseModes->actions().first()->setChecked(true);
    });
    viewMenu->addSeparator();
    // Each dock's own toggle action takes the dock's title, which the Code
    // dock changes to the kernel it shows: the menu names the dock instead.
    for (QDockWidget* dock :
         {m_propertiesDock, m_scheduleDock, m_codeDock, m_passDock, m_perfDock, m_messagesDock}) {
        QAction* toggle = viewMenu->addAction(dock->windowTitle());
        toggle->setObjectName("view" + dock->objectName());
        toggle->setCheckable(true);
        toggle->setChecked(dock->toggleViewAction()->isChecked());
        connect(toggle, &QAction::triggered, dock->toggleViewAction(), &QAction::trigger);
        connect(dock->toggleViewAction(), &QAction::toggled, toggle, &QAction::setChecked);
    }

    QMenu* helpMenu = menuBar()->addMenu("&Help");
    helpMenu->addAction("&About Tessera Studio", this, &MainWindow::showAbout);

    QToolBar* toolBar = addToolBar("Main");
    toolBar->setObjectName("MainToolBar");
    toolBar->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    toolBar->addAction(openAction);
    toolBar->addAction(m_runAction);
    toolBar->addAction(cancelAction);
    QAction* tune = tuneMenu->addAction(style()->standardIcon(QStyle::SP_MediaSeekForward),
                                        "&Tune kernels...", m_tunes, &TuneController::tuneDialog);
    tune->setShortcut(Qt::CTRL | Qt::Key_T);
    tune->setToolTip("Autotune the model's kernels (Ctrl+T) with the toolbar's settings; Run and "
                     "Export then use the best schedules");
    tuneMenu->addAction("&Cancel tuning", m_tunes->jobs(), &JobRunner::cancel);
    toolBar->addAction(tune);
    toolBar->addWidget(m_settingsBar);
    toolBar->addSeparator();
    toolBar->addAction(fitAction);
    toolBar->addSeparator();
    m_search->setPlaceholderText("Search nodes (Ctrl+F)");
    m_search->setClearButtonEnabled(true);
    m_search->setMaximumWidth(260);
    toolBar->addWidget(m_search);
    QAction* findAction = new QAction("&Find node", this);
    findAction->setShortcut(QKeySequence::Find);
    connect(findAction, &QAction::triggered, this, [this]() {
        m_search->setFocus();
        m_search->selectAll();
    });
    addAction(findAction);
    connect(m_search, &QLineEdit::returnPressed, this, [this]() { searchGraph(m_search->text()); });
    connect(m_search, &QLineEdit::textChanged, this, [this](const QString& text) {
        if (text.isEmpty()) m_graphView->setHighlightedNodes({}, QColor());
    });
}

}  // namespace tessera::studio
