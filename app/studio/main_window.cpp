// MainWindow: docks, the status bar, wiring the controllers, drag-and-drop.
#include "app/studio/main_window.h"

#include <QCloseEvent>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFile>
#include <QFileInfo>
#include <QGuiApplication>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QScreen>
#include <QScrollArea>
#include <QScrollBar>
#include <QSettings>
#include <QStatusBar>
#include <QTabBar>
#include <QTabWidget>
#include <QTime>
#include <QTimer>
#include <QTreeView>
#include <QUndoStack>
#include <algorithm>
#include <utility>

#include "app/studio/build_settings_bar.h"
#include "app/studio/collapse_controller.h"
#include "app/studio/job_status.h"
#include "app/studio/knob_panel.h"
#include "app/studio/load_controller.h"
#include "app/studio/main_menus.h"
#include "app/studio/pass_pipeline_panel.h"
#include "app/studio/properties_model.h"
#include "app/studio/schedule_editor.h"
#include "engine/core/thread_guard.h"
#include "widgets/code_panes.h"
#include "widgets/graph_view.h"
#include "widgets/perf_plot.h"
#include "widgets/roofline_plot.h"
#include "widgets/series_plot.h"

namespace tessera::studio {

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent),
      m_graphView(new widgets::GraphView(this)),
      m_codePanes(new widgets::CodePanes(this)),
      m_scheduleEditor(new ScheduleEditor(this)),
      m_passPanel(new PassPipelinePanel(this)),
      m_undo(new QUndoStack(this)),
      m_properties(new QTreeView(this)),
      m_propertyModel(new PropertiesModel(this)),
      m_messages(new QPlainTextEdit(this)),
      m_settingsBar(new BuildSettingsBar(this)),
      m_workspace(new Workspace(m_settingsBar, m_passPanel, this)),
      m_loads(new LoadController(m_workspace)),
      m_runs(new RunController(m_workspace, this)),
      m_tunes(new TuneController(m_workspace, this)),
      m_exports(new ExportController(m_workspace)),
      m_sessions(new SessionController(
          m_workspace, m_settingsBar, m_passPanel,
          {[this](const QString& path) { m_loads->open(path); },  // asked before the session
           [this](const graph::GraphEdit& edit) { return m_edits->apply(edit); },
           [this]() { showNode(m_graphView->currentNode()); }})),
      m_schedules(new ScheduleController(m_workspace, m_scheduleEditor, m_codePanes, m_undo)),
      m_edits(new EditController(m_workspace, m_undo, m_graphView)),
      m_collapses(new CollapseController(m_workspace, m_graphView)) {
    forbid_engine_work_on_this_thread(true);  // the UI thread: engine work runs in jobs
    setWindowTitle("Tessera Studio");
    setAcceptDrops(true);
    setCentralWidget(m_graphView);
    createDocks();
    m_menus = new MainMenus(this, {m_propertiesDock, m_scheduleDock, m_codeDock, m_passDock,
                                   m_perfDock, m_messagesDock});
    m_status = new JobStatus(statusBar(), m_runs->lastRunLabel(), m_workspace, m_graphView);
    m_status->watch({m_loads->jobs(), m_runs->jobs(), m_tunes->jobs()}, true);
    m_status->watch(
        {m_scheduleEditor->jobs(), m_passPanel->jobs(), m_exports->jobs(), m_edits->jobs()}, false);
    connectControllers();

    resize(1600, 1000);
    resizeDocks({m_propertiesDock}, {540}, Qt::Horizontal);
    resizeDocks({m_codeDock}, {360}, Qt::Vertical);
    resizeDocks({m_propertiesDock, m_perfDock}, {560, 380}, Qt::Vertical);
    m_defaultLayout = saveState();
    restoreState(QSettings().value("window/state").toByteArray());
}

void MainWindow::resetLayout() {
    for (QDockWidget* dock : findChildren<QDockWidget*>()) {
        dock->setFloating(false);
        dock->show();
    }
    restoreState(m_defaultLayout);
    QSettings().setValue("window/state", m_defaultLayout);
}

void MainWindow::fitToScreen() {
    const QScreen* screen = this->screen() ? this->screen() : QGuiApplication::primaryScreen();
    if (!screen) return;
    const QRect available = screen->availableGeometry();
    const QSize room = available.size() - QSize(16, 48);
    resize(size().boundedTo(room).expandedTo(minimumSizeHint()));
    move(available.center() - QPoint(width() / 2, height() / 2));
}

MainWindow::~MainWindow() {
    // Children die after the members their signals' slots use: the undo stack
    // says its index changed while it is cleared in its destructor.
    for (QObject* sender : {static_cast<QObject*>(m_undo), static_cast<QObject*>(m_passPanel),
                            static_cast<QObject*>(m_settingsBar)})
        sender->disconnect(this);
}

void MainWindow::createDocks() {
    setCorner(Qt::TopRightCorner, Qt::RightDockWidgetArea);
    setCorner(Qt::BottomRightCorner, Qt::RightDockWidgetArea);
    // Docks whose panels stack many controls scroll them when the window is
    // small, instead of holding the whole window at the panels' full height.
    auto dock = [this](const QString& title, const QString& name, QWidget* widget,
                       bool scroll = false) {
        auto* d = new QDockWidget(title, this);
        d->setObjectName(name);
        if (scroll) {
            auto* area = new QScrollArea(d);
            area->setFrameShape(QFrame::NoFrame);
            area->setWidgetResizable(true);
            area->setWidget(widget);
            d->setWidget(area);
        } else {
            d->setWidget(widget);
        }
        return d;
    };
    m_properties->setModel(m_propertyModel);
    m_properties->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    m_properties->setAlternatingRowColors(true);
    m_properties->setEditTriggers(QAbstractItemView::DoubleClicked |
                                  QAbstractItemView::EditKeyPressed);
    m_propertiesDock = dock("Properties", "PropertiesDock", m_properties);
    addDockWidget(Qt::RightDockWidgetArea, m_propertiesDock);
    m_scheduleDock = dock("Schedule", "ScheduleDock", m_scheduleEditor, true);

    m_codeDock = dock("Code", "CodeDock", m_codePanes);
    addDockWidget(Qt::BottomDockWidgetArea, m_codeDock);
    m_passDock = dock("Pass pipeline", "PassPipelineDock", m_passPanel, true);
    addDockWidget(Qt::BottomDockWidgetArea, m_passDock);
    tabifyDockWidget(m_codeDock, m_passDock);
    m_codeDock->raise();

    m_runs->plotTabs()->addTab(m_tunes->plot(), "Tuning");
    m_perfDock = dock("Performance", "PerformanceDock", m_runs->panel());
    addDockWidget(Qt::RightDockWidgetArea, m_perfDock);
    splitDockWidget(m_propertiesDock, m_perfDock, Qt::Vertical);
    tabifyDockWidget(m_propertiesDock, m_scheduleDock);
    m_propertiesDock->raise();

    m_messages->setReadOnly(true);
    m_messages->setMaximumBlockCount(5000);
    m_messagesDock = dock("Messages", "MessagesDock", m_messages);
    addDockWidget(Qt::RightDockWidgetArea, m_messagesDock);
    tabifyDockWidget(m_perfDock, m_messagesDock);
    m_perfDock->raise();
    // The editor stacks more than the Properties tab needs: when its tab is
    // shown too short for it (the default layout), the column grows it from
    // the Performance dock below, which keeps room for its plot.
    connect(m_scheduleDock, &QDockWidget::visibilityChanged, this, [this](bool visible) {
        if (visible) QTimer::singleShot(0, this, &MainWindow::fitScheduleDock);
    });
}

void MainWindow::fitScheduleDock() {
    if (!m_scheduleDock->isVisible() || m_scheduleDock->isFloating() || !m_perfDock->isVisible() ||
        m_perfDock->isFloating() || dockWidgetArea(m_scheduleDock) != dockWidgetArea(m_perfDock))
        return;
    const int title = m_scheduleDock->height() - m_scheduleDock->widget()->height();
    const int need = m_scheduleEditor->minimumSizeHint().height() + title + 8;
    const int have = m_scheduleDock->height();
    const int total = have + m_perfDock->height();
    const int top = std::min(need, total - kPerfDockKeeps);
    if (top > have) resizeDocks({m_scheduleDock, m_perfDock}, {top, total - top}, Qt::Vertical);
}

void MainWindow::connectControllers() {
    connect(m_workspace, &Workspace::logged, this, &MainWindow::log);
    connect(m_status, &JobStatus::cancelRequested, this, &MainWindow::cancelJobs);
    connect(m_status, &JobStatus::loadingChanged, this,
            [this](bool loading) { m_menus->runAction()->setEnabled(!loading); });
    connect(m_loads, &LoadController::opened, this, &MainWindow::showDocument);
    connect(m_loads, &LoadController::failed, this, &MainWindow::loadFailed);
    connect(m_graphView, &widgets::GraphView::currentNodeChanged, this, &MainWindow::showNode);
    connect(m_graphView, &widgets::GraphView::layoutFinished, this, &MainWindow::onLayoutFinished);
    connect(m_graphView, &widgets::GraphView::layoutFailed, this, [this](const QString& message) {
        m_status->update();
        log("error: graph layout failed: " + message);
        if (document()) emit modelLoaded(document()->path());
    });
    connect(m_propertyModel, &PropertiesModel::edited, m_edits, &EditController::propertyEdited);
    connect(m_edits, &EditController::refused, this, &MainWindow::editRefused);
    // The status bar says what an edit, an undo or a redo did (graph or
    // schedule): a refused edit's error gives way to it.
    connect(m_undo, &QUndoStack::indexChanged, this, [this](int index) {
        const int before = std::exchange(m_undoIndex, index);
        if (m_undo->count() == 0) return;  // cleared: another model
        if (index > before)
            m_status->showMessage("Edit: " + m_undo->text(index - 1));
        else if (index < before)
            m_status->showMessage("Undone: " + m_undo->text(index));
    });
    connect(m_edits, &EditController::nodeRefresh, this, &MainWindow::showNode);
    connect(m_edits, &EditController::viewRequested, this, &MainWindow::raiseView);
    connect(m_edits, &EditController::graphInstalled, this, [this](const QString& select) {
        m_runs->clearResult();  // a result for the old graph would be stale
        m_selectAfterLayout = select;
        m_graphView->setGraph(document()->graphViewData());
        m_passPanel->setGraph(document()->snapshot());
    });
    // One set of build settings: an opt level selects its pass pipeline; any
    // change marks the last Run's figures stale and the code panes show what
    // the settings build now.
    m_passPanel->setPipeline(defaultPasses(m_settingsBar->optLevel()));
    connect(m_settingsBar, &BuildSettingsBar::optLevelChanged, this,
            [this](int level) { m_passPanel->setPipeline(defaultPasses(level)); });
    auto buildInputsChanged = [this]() {
        m_runs->updateStatus();
        m_schedules->refresh();
    };
    connect(m_settingsBar, &BuildSettingsBar::threadsChanged, this, buildInputsChanged);
    connect(m_passPanel, &PassPipelinePanel::pipelineChanged, this, buildInputsChanged);
    connect(m_settingsBar, &BuildSettingsBar::targetChanged, this,
            [=, this](const QString& target) {
                // The panes show what the target builds: CUDA C and PTX, or LLVM IR and assembly.
                m_codePanes->showKind(0, "Loop IR");
                m_codePanes->showKind(1, target == "cuda" ? "CUDA C" : "LLVM IR");
                buildInputsChanged();
            });
    // The Code dock's title names the kernel and the build settings; as a tab
    // beside "Pass pipeline" a long one squeezed that tab to "P...": the tab
    // keeps the first 56 characters, its tooltip the whole title.
    connect(m_schedules, &ScheduleController::titleChanged, m_codeDock,
            [this](const QString& title) {
                constexpr int kTabChars = 56;
                m_codeDock->setWindowTitle(
                    title.size() > kTabChars ? title.left(kTabChars - 1) + QChar(0x2026) : title);
                m_codeDock->setToolTip(title);
                // The dock's tab (tabified with Pass pipeline) has a tooltip of its own.
                QTimer::singleShot(0, this, [this, title]() {
                    for (QTabBar* bar : findChildren<QTabBar*>())
                        for (int i = 0; i < bar->count(); ++i)
                            if (bar->tabText(i) == m_codeDock->windowTitle())
                                bar->setTabToolTip(i, title);
                });
            });
    connect(m_schedules, &ScheduleController::kernelShown, this, &MainWindow::kernelCodeShown);
    connect(m_schedules, &ScheduleController::kernelNodes, this, [this](const QVector<int>& nodes) {
        m_graphView->setHighlightedNodes(nodes, QColor(0x30, 0x80, 0xe0));
    });
    connect(m_runs, &RunController::nodeHeat, m_graphView, &widgets::GraphView::setNodeHeat);
    connect(m_runs, &RunController::nodeRequested, this, [this](const QString& name) {
        const int node = document() ? document()->graph().find_node(name.toStdString()) : -1;
        if (node >= 0) m_graphView->setCurrentNode(node);
    });
    connect(m_runs, &RunController::kernelRequested, this,
            [this](const QString& kernel, const QString& name) {
                const int node =
                    document() ? document()->graph().find_node(name.toStdString()) : -1;
                if (node < 0) return;
                m_graphView->setCurrentNode(node);    // shows the node's own kernel ...
                m_schedules->showNode(node, kernel);  // ... then the one asked for
            });
    connect(m_runs, &RunController::finished, this, [this]() {
        m_status->showModel();
        m_perfDock->raise();  // the result, in front of the Messages tab
    });
    connect(m_tunes, &TuneController::started, this, [this]() {
        showPlot("tuning");
        m_scheduleEditor->knobPanel()->setTuning(true);
    });
    connect(m_tunes, &TuneController::finished, this,
            [this]() { m_scheduleEditor->knobPanel()->setTuning(false); });
    connect(m_tunes, &TuneController::failed, this,
            [this]() { m_scheduleEditor->knobPanel()->setTuning(false); });
    connect(m_schedules, &ScheduleController::tuneRestRequested, m_tunes, &TuneController::start);
    // Tune the rest measures the editor's kernel alone: its trials go on the
    // editor's plot too, beside its own measurements.
    auto tuningTheEditorsKernel = std::make_shared<bool>(false);
    connect(m_schedules, &ScheduleController::tuneRestRequested, this,
            [tuningTheEditorsKernel]() { *tuningTheEditorsKernel = true; });
    connect(m_tunes, &TuneController::trialMeasured, this,
            [this, tuningTheEditorsKernel](double gflops, double) {
                if (*tuningTheEditorsKernel && gflops > 0)
                    m_scheduleEditor->measurePlot()->addPoint(gflops, "tuning trial");
            });
    connect(m_tunes, &TuneController::finished, this,
            [tuningTheEditorsKernel]() { *tuningTheEditorsKernel = false; });
    connect(m_tunes, &TuneController::failed, this,
            [tuningTheEditorsKernel]() { *tuningTheEditorsKernel = false; });
    connect(m_tunes, &TuneController::finished, m_schedules, &ScheduleController::rebuild);
    connect(m_sessions, &SessionController::failed, this, &MainWindow::loadFailed);
    // The title's '*': graph edits or hand schedules that no saved session holds.
    auto markModified = [this]() {
        updateTitle();
        setWindowModified(m_sessions->hasUnsavedChanges());
    };
    connect(m_workspace, &Workspace::buildInputChanged, this, markModified);
    connect(m_sessions, &SessionController::restored, this, markModified);
    connect(m_sessions, &SessionController::saved, this, markModified);
}

void MainWindow::openModel(const QString& path) {
    if (maySetAsideWork()) m_loads->open(path);
}

bool MainWindow::isLoading() const { return m_loads->isLoading(); }

bool MainWindow::isCollapsing() const { return m_collapses->isCollapsing(); }

QLineEdit* MainWindow::searchBox() const { return m_menus->searchBox(); }

QProgressBar* MainWindow::progressBar() const { return m_status->progressBar(); }

QString MainWindow::statusMessage() const { return m_status->message(); }

// A model was opened: what showed the previous one is cleared, the graph laid out.
void MainWindow::showDocument() {
    m_runs->clearResult();  // a result for the old model would be stale
    m_tunes->clearResult();
    m_menus->searchBox()->clear();  // a search in the old graph
    m_codePanes->clear();
    m_propertyModel->setRows({});
    m_undo->clear();
    m_selectAfterLayout = QString();
    m_menus->addRecentFile(document()->path());
    updateTitle();
    setWindowModified(false);
    m_status->showModel();
    m_graphView->setGraph(document()->graphViewData());
    m_passPanel->setGraph(document()->snapshot());
}

void MainWindow::onLayoutFinished() {
    m_status->update();
    if (!document()) return;
    if (!m_selectAfterLayout.isNull()) {  // a relayout after an edit or a collapse
        const int node = document()->graph().find_node(m_selectAfterLayout.toStdString());
        m_selectAfterLayout = QString();
        m_graphView->setCurrentNode(node >= 0 ? node : document()->preferredNode());
        showNode(m_graphView->currentNode());
        emit graphChanged();
        return;
    }
    m_graphView->setCurrentNode(document()->preferredNode());
    emit modelLoaded(document()->path());
    m_sessions->modelShown();
    updateTitle();  // a model opened on its own is in no session any more
    setWindowModified(m_sessions->hasUnsavedChanges());
}

void MainWindow::showNode(int node) {
    const bool shown = document() && node >= 0 && node < document()->nodeCount();
    m_propertyModel->setRows(shown ? document()->properties(node) : QVector<PropertyRow>{});
    m_properties->expandAll();
    m_schedules->showNode(node);  // the kernel that runs it and its schedule
}

void MainWindow::cancelJobs() {
    for (JobRunner* runner : {m_loads->jobs(), m_runs->jobs(), m_exports->jobs(), m_tunes->jobs(),
                              m_scheduleEditor->jobs(), m_passPanel->jobs(), m_edits->jobs()})
        runner->cancel();
}

void MainWindow::collapseGraph(const QString& how) {
    if (!document() || isLoading()) return;
    const int current = m_graphView->currentNode();  // selected again after the layout
    m_selectAfterLayout =
        current >= 0 && current < document()->nodeCount()
            ? QString::fromStdString(document()->graph().nodes[size_t(current)].name)
            : QString("");
    m_collapses->collapse(how);
}

void MainWindow::showPlot(const QString& name) {
    raiseView("plots");
    QWidget* tab = name == "roofline" ? static_cast<QWidget*>(m_runs->rooflinePlot())
                   : name == "tuning" ? static_cast<QWidget*>(m_tunes->plot())
                                      : static_cast<QWidget*>(m_runs->perfPlot());
    m_runs->plotTabs()->setCurrentWidget(tab);
}

bool MainWindow::raiseView(const QString& name) {
    if (name == "tuning") {
        showPlot("tuning");
        return true;
    }
    if (name == "graph") {
        m_graphView->setFocus();
        return true;
    }
    QDockWidget* dock = name == "code"       ? m_codeDock
                        : name == "plots"    ? m_perfDock
                        : name == "schedule" ? m_scheduleDock
                        : name == "passes"   ? m_passDock
                                             : nullptr;
    if (!dock) return false;
    dock->show();
    dock->raise();
    auto* area = qobject_cast<QScrollArea*>(dock->widget());
    (area ? area->widget() : dock->widget())->setFocus();
    return true;
}

int MainWindow::searchGraph(const QString& text) {
    const int found = m_graphView->search(text);
    m_status->showMessage(text.isEmpty() ? QString()
                                         : QString("%1 nodes match '%2'").arg(found).arg(text));
    return found;
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
    if (!LoadController::droppedModel(event->mimeData()).isEmpty())
        event->acceptProposedAction();
    else
        event->ignore();
}

void MainWindow::dropEvent(QDropEvent* event) {
    const QString path = LoadController::droppedModel(event->mimeData());
    if (path.isEmpty()) {
        log("Drop an .onnx file to open it.");
        event->ignore();
        return;
    }
    event->acceptProposedAction();
    openModel(path);
}

void MainWindow::updateTitle() {
    if (!document()) return;
    const QString session = m_sessions->sessionPath();
    setWindowTitle(document()->displayName() +
                   (session.isEmpty() ? QString() : " (" + QFileInfo(session).fileName() + ")") +
                   "[*] - Tessera Studio");
}

bool MainWindow::maySetAsideWork() {
    if (!m_sessions->hasUnsavedChanges() || dialogsSuppressed()) return true;
    const QString session = m_sessions->sessionPath();
    const QString what =
        session.isEmpty()
            ? "The graph edits and hand schedules of " + document()->displayName() +
                  " are in no saved session. Save them as a session first?"
            : "The graph edits and hand schedules of " + document()->displayName() +
                  " changed since " + QFileInfo(session).fileName() + " was saved. Save it first?";
    const auto answer = QMessageBox::question(
        this, "Unsaved edits and schedules", what,
        QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, QMessageBox::Save);
    if (answer == QMessageBox::Discard) return true;
    return answer == QMessageBox::Save && m_sessions->saveSession();
}

void MainWindow::showEvent(QShowEvent* event) {
    QMainWindow::showEvent(event);
    QTimer::singleShot(0, this, [this]() {
        for (QDockWidget* dock : findChildren<QDockWidget*>())
            if (dock->isFloating() && dock->isVisible()) dock->raise();
    });
}

void MainWindow::closeEvent(QCloseEvent* event) {
    if (!maySetAsideWork()) {
        event->ignore();
        return;
    }
    QSettings().setValue("window/state", saveState());
    QFile::remove(SessionController::autosavePath());  // a normal exit: nothing to recover
    QMainWindow::closeEvent(event);
}

void MainWindow::log(const QString& message) {
    // Follow the newest line while the view is near its end: after the dock
    // was floated and docked again the view sat a little above it, and
    // QPlainTextEdit follows only from the very end (new lines went unseen).
    QScrollBar* bar = m_messages->verticalScrollBar();
    const bool following = bar->value() >= bar->maximum() - bar->pageStep();
    m_messages->appendPlainText(QTime::currentTime().toString("HH:mm:ss") + "  " + message);
    if (following) bar->setValue(bar->maximum());
}

widgets::CodeView* MainWindow::codeView() const { return m_codePanes->view(0); }

}  // namespace tessera::studio
