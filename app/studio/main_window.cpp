// MainWindow: docks, actions, drag-and-drop, and the load job's result.
#include "app/studio/main_window.h"

#include "app/studio/knob_panel.h"

#include "app/studio/input_shape_dialog.h"
#include "engine/core/error.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QSettings>
#include <QTimer>
#include <QTabWidget>
#include <QTableWidget>
#include <QUndoStack>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QStatusBar>
#include <QStyle>
#include <QTime>
#include <QToolBar>
#include <QToolButton>
#include <QTreeView>
#include <QVBoxLayout>
#include <algorithm>
#include <variant>

#include "app/studio/build_settings_bar.h"
#include "app/studio/graph_collapse.h"
#include "app/studio/pass_pipeline_panel.h"
#include "app/studio/properties_model.h"
#include "app/studio/schedule_editor.h"
#include "engine/driver/driver.h"
#include "engine/graph/op_registry.h"
#include "widgets/code_panes.h"
#include "widgets/code_view.h"
#include "widgets/graph_view.h"
#include "widgets/perf_plot.h"
#include "widgets/roofline_plot.h"
#include "widgets/series_plot.h"
#include "app/studio/machine_peaks.h"

namespace tessera::studio {
namespace {

// What the load job gives: the opened model, or the shapes to ask for.
using LoadOutcome = std::variant<std::shared_ptr<ModelDocument>, InputShapeRequest>;

// The first local .onnx file among dropped URLs, or an empty string.
QString droppedModel(const QMimeData* mime) {
    if (!mime || !mime->hasUrls()) return {};
    for (const QUrl& url : mime->urls())
        if (url.isLocalFile() && url.toLocalFile().endsWith(".onnx", Qt::CaseInsensitive))
            return url.toLocalFile();
    return {};
}

}  // namespace

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent),
      m_loadJobs(new JobRunner(this)),
      m_graphView(new widgets::GraphView(this)),
      m_codePanes(new widgets::CodePanes(this)),
      m_scheduleEditor(new ScheduleEditor(this)),
      m_passPanel(new PassPipelinePanel(this)),
      m_collapseJobs(new JobRunner(this)),
      m_undo(new QUndoStack(this)),
      m_search(new QLineEdit(this)),
      m_properties(new QTreeView(this)),
      m_propertyModel(new PropertiesModel(this)),
      m_messages(new QPlainTextEdit(this)),
      m_progress(new QProgressBar(this)),
      m_cancelButton(new QToolButton(this)),
      m_statusLabel(new QLabel(this)),
      m_settingsBar(new BuildSettingsBar(this)),
      m_workspace(new Workspace(m_settingsBar, m_passPanel, m_loadJobs, this)),
      m_runs(new RunController(m_workspace, this)),
      m_tunes(new TuneController(m_workspace, this)),
      m_exports(new ExportController(m_workspace)),
      m_sessions(new SessionController(
          m_workspace, m_settingsBar, m_passPanel,
          {[this](const QString& path) { openModel(path); },
           [this](const graph::GraphEdit& edit) { return m_edits->apply(edit); },
           [this]() { showNode(m_graphView->currentNode()); }})),
      m_schedules(new ScheduleController(m_workspace, m_scheduleEditor, m_codePanes)),
      m_edits(new EditController(m_workspace, m_undo, m_graphView)) {
    setWindowTitle("Tessera Studio");
    setAcceptDrops(true);
    setCentralWidget(m_graphView);
    createDocks();
    createActions();

    m_progress->setRange(0, 1000);
    m_progress->setMaximumWidth(260);
    m_progress->setVisible(false);
    m_cancelButton->setText("Cancel");
    m_cancelButton->setVisible(false);
    connect(m_cancelButton, &QToolButton::clicked, this, &MainWindow::cancelJobs);
    statusBar()->addWidget(m_statusLabel, 1);
    statusBar()->addPermanentWidget(m_runs->lastRunLabel());
    statusBar()->addPermanentWidget(m_progress);
    statusBar()->addPermanentWidget(m_cancelButton);
    m_statusLabel->setText("Open a model (Ctrl+O) or drop an .onnx file here.");

    connect(m_graphView, &widgets::GraphView::currentNodeChanged, this, &MainWindow::showNode);
    connect(m_graphView, &widgets::GraphView::layoutFinished, this, [this]() {
        updateBusyState();
        if (!m_document) return;
        if (!m_selectAfterLayout.isNull()) {
            const int node = m_document->graph().find_node(m_selectAfterLayout.toStdString());
            m_selectAfterLayout = QString();
            m_graphView->setCurrentNode(node >= 0 ? node : m_document->preferredNode());
            showNode(m_graphView->currentNode());
            emit graphChanged();
            return;
        }
        m_graphView->setCurrentNode(m_document->preferredNode());
        emit modelLoaded(m_document->path());
        m_sessions->modelShown();
    });
    connect(m_propertyModel, &PropertiesModel::edited, m_edits, &EditController::propertyEdited);
    connect(m_edits, &EditController::refused, this, &MainWindow::editRefused);
    connect(m_edits, &EditController::nodeRefresh, this, &MainWindow::showNode);
    connect(m_edits, &EditController::graphInstalled, this, [this](const QString& select) {
        m_runs->clearResult();  // a result for the old graph would be stale
        m_selectAfterLayout = select;
        m_graphView->setGraph(m_document->graphViewData());
        m_passPanel->setGraph(m_document->snapshot());
    });
    // One set of build settings: an opt level selects its pass pipeline; any
    // change marks the last Run's figures stale.
    m_passPanel->setPipeline(defaultPasses(m_settingsBar->optLevel()));
    connect(m_settingsBar, &BuildSettingsBar::optLevelChanged, this,
            [this](int level) { m_passPanel->setPipeline(defaultPasses(level)); });
    connect(m_settingsBar, &BuildSettingsBar::threadsChanged, m_runs, &RunController::updateStatus);
    connect(m_passPanel, &PassPipelinePanel::pipelineChanged, m_runs, &RunController::updateStatus);
    connect(m_undo, &QUndoStack::indexChanged, this,
            [this]() { m_workspace->noteBuildInputChanged("graph edited"); });
    connect(m_workspace, &Workspace::logged, this, &MainWindow::log);
    connect(m_workspace, &Workspace::errorReported, this,
            [this](const QString& title, const QString& message) {
                m_statusLabel->setText(title + ": " + message);
            });
    connect(m_schedules, &ScheduleController::titleChanged, m_codeDock, &QDockWidget::setWindowTitle);
    connect(m_schedules, &ScheduleController::kernelShown, this, &MainWindow::kernelCodeShown);
    connect(m_schedules, &ScheduleController::kernelNodes, this, [this](const QVector<int>& nodes) {
        m_graphView->setHighlightedNodes(nodes, QColor(0x30, 0x80, 0xe0));
    });
    connect(m_runs, &RunController::nodeHeat, m_graphView, &widgets::GraphView::setNodeHeat);
    connect(m_runs, &RunController::nodeRequested, this, [this](const QString& name) {
        const int node = m_document ? m_document->graph().find_node(name.toStdString()) : -1;
        if (node >= 0) m_graphView->setCurrentNode(node);
    });
    connect(m_runs, &RunController::finished, this, [this]() {
        m_statusLabel->setText(m_document ? m_document->displayName() : QString());
        m_perfDock->raise();  // the result, in front of the Messages tab
    });
    connect(m_tunes, &TuneController::started, this, [this]() { showPlot("tuning"); });
    // Tune the rest: the shown kernel, its pinned knobs kept; a hand schedule
    // of it gives way to the tuned record.
    connect(m_scheduleEditor->knobPanel(), &KnobPanel::tuneRestRequested, this, [this](int trials) {
        const TuneScope scope = m_schedules->tuneScope();
        if (scope.node.isEmpty()) return;
        if (m_workspace->traces().contains(scope.node)) {
            m_workspace->removeTrace(scope.node);
            m_workspace->log("The hand schedule of " + scope.node + " gives way to the tuned record.");
        }
        m_tunes->start(trials, scope);
    });
    connect(m_tunes, &TuneController::finished, m_schedules, &ScheduleController::rebuild);
    connect(m_sessions, &SessionController::failed, this, &MainWindow::loadFailed);
    // The code panes show what the settings build now.
    auto showCurrentKernel = [this]() { m_schedules->refresh(); };
    connect(m_settingsBar, &BuildSettingsBar::threadsChanged, this, showCurrentKernel);
    connect(m_settingsBar, &BuildSettingsBar::targetChanged, this, [this, showCurrentKernel](const QString& target) {
        // The panes show what the target builds: CUDA C and PTX, or LLVM IR and assembly.
        const bool gpu = target == "cuda";
        m_codePanes->showKind(0, "Loop IR");
        m_codePanes->showKind(1, gpu ? "CUDA C" : "LLVM IR");
        m_runs->updateStatus();
        showCurrentKernel();
    });
    connect(m_passPanel, &PassPipelinePanel::pipelineChanged, this, showCurrentKernel);
    connect(m_graphView, &widgets::GraphView::layoutFailed, this, [this](const QString& message) {
        updateBusyState();
        log("error: graph layout failed: " + message);
        if (m_document) emit modelLoaded(m_document->path());
    });

    for (JobRunner* runner : {m_loadJobs, m_runs->jobs(), m_scheduleEditor->jobs(),
                              m_passPanel->jobs(), m_exports->jobs(), m_tunes->jobs()}) {
        connect(runner, &JobRunner::jobStarted, this, [this](int, const QString& title) {
            m_statusLabel->setText(title + "...");
            updateBusyState();
        });
        connect(runner, &JobRunner::progressChanged, this,
                [this](int, double fraction) { m_progress->setValue(int(fraction * 1000)); });
        connect(runner, &JobRunner::jobFinished, this, [this]() {
            m_statusLabel->setText(m_document ? m_document->displayName() : QString());
            updateBusyState();
        });
        connect(runner, &JobRunner::jobFailed, this, &MainWindow::updateBusyState);
        connect(runner, &JobRunner::jobCancelled, this, [this]() {
            log("Job cancelled.");
            updateBusyState();
        });
    }
    connect(m_collapseJobs, &JobRunner::jobFailed, this, [this](int, const QString& message) {
        reportError("Cannot collapse the fused kernels", message);
    });
    connect(m_loadJobs, &JobRunner::jobFailed, this, [this](int, const QString& message) {
        reportError("Cannot open model", message);
        emit loadFailed(message);
    });

    resize(1600, 1000);
    resizeDocks({m_propertiesDock}, {540}, Qt::Horizontal);
    resizeDocks({m_codeDock}, {360}, Qt::Vertical);
    resizeDocks({m_propertiesDock, m_perfDock}, {560, 380}, Qt::Vertical);
    QSettings settings;
    restoreState(settings.value("window/state").toByteArray());
    auto* autosave = new QTimer(this);
    connect(autosave, &QTimer::timeout, m_sessions, &SessionController::autosaveNow);
    autosave->start(30000);
    rebuildRecentMenu();
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

    m_properties->setModel(m_propertyModel);
    m_properties->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    m_properties->setAlternatingRowColors(true);
    m_properties->setEditTriggers(QAbstractItemView::DoubleClicked | QAbstractItemView::EditKeyPressed);
    m_propertiesDock = new QDockWidget("Properties", this);
    m_propertiesDock->setObjectName("PropertiesDock");
    m_propertiesDock->setWidget(m_properties);
    addDockWidget(Qt::RightDockWidgetArea, m_propertiesDock);

    m_scheduleDock = new QDockWidget("Schedule", this);
    m_scheduleDock->setObjectName("ScheduleDock");
    m_scheduleDock->setWidget(m_scheduleEditor);

    m_codeDock = new QDockWidget("Code", this);
    m_codeDock->setObjectName("CodeDock");
    m_codeDock->setWidget(m_codePanes);
    addDockWidget(Qt::BottomDockWidgetArea, m_codeDock);
    m_passDock = new QDockWidget("Pass pipeline", this);
    m_passDock->setObjectName("PassPipelineDock");
    m_passDock->setWidget(m_passPanel);
    addDockWidget(Qt::BottomDockWidgetArea, m_passDock);
    tabifyDockWidget(m_codeDock, m_passDock);
    m_codeDock->raise();

    m_runs->plotTabs()->addTab(m_tunes->plot(), "Tuning");
    m_perfDock = new QDockWidget("Performance", this);
    m_perfDock->setObjectName("PerformanceDock");
    m_perfDock->setWidget(m_runs->panel());
    addDockWidget(Qt::RightDockWidgetArea, m_perfDock);
    splitDockWidget(m_propertiesDock, m_perfDock, Qt::Vertical);
    tabifyDockWidget(m_propertiesDock, m_scheduleDock);
    m_propertiesDock->raise();

    m_messages->setReadOnly(true);
    m_messages->setMaximumBlockCount(5000);
    m_messagesDock = new QDockWidget("Messages", this);
    m_messagesDock->setObjectName("MessagesDock");
    m_messagesDock->setWidget(m_messages);
    addDockWidget(Qt::RightDockWidgetArea, m_messagesDock);
    tabifyDockWidget(m_perfDock, m_messagesDock);
    m_perfDock->raise();
}

void MainWindow::openFileDialog() {
    const QString path = QFileDialog::getOpenFileName(this, "Open model", QString(),
                                                      "ONNX models (*.onnx);;All files (*)");
    if (!path.isEmpty()) openModel(path);
}

void MainWindow::openModel(const QString& path) { openModelWithShapes(path, {}); }

void MainWindow::openModelWithShapes(const QString& path, const InputShapes& shapes) {
    log("Opening " + path);
    if (!QFileInfo(path).isFile()) {
        const QString message = path + ": no such file";
        reportError("Cannot open model", message);
        emit loadFailed(message);
        return;
    }
    m_loadJobs->start(
        "Loading " + QFileInfo(path).fileName(),
        [path, shapes](const JobContext& context) -> LoadOutcome {
            // Stages: ONNX import 0-60 %, then the graph layout 60-100 % (updateBusyState).
            context.reportProgress(0.05);
            try {
                auto document = ModelDocument::load(path, shapes);
                context.reportProgress(0.6);
                return document;
            } catch (const UserError&) {
                // A model with symbolic input dims: ask for shapes (on the UI thread).
                if (!shapes.empty()) throw;
                std::exception_ptr failure = std::current_exception();
                InputShapeRequest request;
                try {
                    request = inputShapeRequest(path);
                } catch (const UserError&) {
                }
                if (request.empty()) std::rethrow_exception(failure);
                return request;
            }
        },
        [this, path](const LoadOutcome& value) {
            if (const auto* request = std::get_if<InputShapeRequest>(&value)) {
                QString error;
                std::optional<InputShapes> given =
                    askInputShapes(this, *request, dialogsSuppressed(), &error);
                if (!given) {
                    const QString message =
                        path + ": " + (error.isEmpty() ? "no input shapes given" : error);
                    reportError("Cannot open model", message);
                    emit loadFailed(message);
                    return;
                }
                QStringList text;
                for (const auto& [name, dims] : *given)
                    text << QString::fromStdString(name) + ":" + shapeText(dims);
                log("Input shapes " + text.join(", ") + " (Model > Set input shape... changes them)");
                openModelWithShapes(path, *given);
                return;
            }
            setDocument(std::get<std::shared_ptr<ModelDocument>>(value));
        });
}

void MainWindow::setDocument(std::shared_ptr<ModelDocument> document) {
    m_document = std::move(document);
    m_workspace->setDocument(m_document);  // and no schedule traces
    m_runs->clearResult();  // a result for the old model would be stale
    m_codePanes->clear();
    m_propertyModel->setRows({});
    m_undo->clear();
    m_selectAfterLayout = QString();
    addRecentFile(m_document->path());
    setWindowTitle(m_document->displayName() + " - Tessera Studio");
    log(QString("Loaded %1: %2 nodes, %3 GFLOP per inference")
            .arg(m_document->path())
            .arg(m_document->nodeCount())
            .arg(m_document->totalFlops() / 1e9, 0, 'g', 4));
    m_statusLabel->setText(m_document->displayName());
    m_graphView->setGraph(m_document->graphViewData());
    m_passPanel->setGraph(m_document->snapshot());
}

void MainWindow::showNode(int node) {
    const bool shown = m_document && node >= 0 && node < m_document->nodeCount();
    m_propertyModel->setRows(shown ? m_document->properties(node) : QVector<PropertyRow>{});
    m_properties->expandAll();
    m_schedules->showNode(node);  // the kernel that runs it and its schedule
}

void MainWindow::cancelJobs() {
    m_loadJobs->cancel();
    m_runs->jobs()->cancel();
    m_exports->jobs()->cancel();
    m_tunes->jobs()->cancel();
    m_scheduleEditor->jobs()->cancel();
    m_passPanel->jobs()->cancel();
}

void MainWindow::collapseGraph(const QString& how) {
    if (!m_document || m_loadJobs->isRunning()) return;
    const int current = m_graphView->currentNode();  // selected again after the layout
    m_selectAfterLayout = current >= 0 && current < m_document->nodeCount()
                              ? QString::fromStdString(m_document->graph().nodes[size_t(current)].name)
                              : QString("");
    if (how == "fused") {  // the kernels the code views' build makes
        std::shared_ptr<const graph::Graph> graph = m_document->snapshot();
        driver::BuildOptions options = buildSettings().buildOptions(m_workspace->kernelTraces());
        options.jit = false;
        m_collapseJobs->start(
            "Finding the fused kernels",
            [graph, options](const JobContext&) {
                return fusedKernelGroups(*graph, *driver::build(*graph, options));
            },
            [this](const QVector<widgets::GraphViewCollapse>& groups) {
                log(QString("Graph: %1 fused kernels drawn as one box each").arg(groups.size()));
                m_graphView->setCollapsed(groups);
            });
        return;
    }
    const int level = how.startsWith("scope") ? how.mid(5).toInt() : 0;
    const QVector<widgets::GraphViewCollapse> groups =
        level > 0 ? nameScopeGroups(m_document->graph(), level) : QVector<widgets::GraphViewCollapse>{};
    if (level > 0) log(QString("Graph: %1 name scopes at level %2 collapsed").arg(groups.size()).arg(level));
    m_graphView->setCollapsed(groups);
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
    dock->widget()->setFocus();
    return true;
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
    if (!droppedModel(event->mimeData()).isEmpty())
        event->acceptProposedAction();
    else
        event->ignore();
}

void MainWindow::dropEvent(QDropEvent* event) {
    const QString path = droppedModel(event->mimeData());
    if (path.isEmpty()) {
        log("Drop an .onnx file to open it.");
        event->ignore();
        return;
    }
    event->acceptProposedAction();
    openModel(path);
}

void MainWindow::reportError(const QString& title, const QString& message) {
    m_workspace->reportError(title, message);
}

void MainWindow::log(const QString& message) {
    m_messages->appendPlainText(QTime::currentTime().toString("HH:mm:ss") + "  " + message);
}

void MainWindow::updateBusyState() {
    const bool jobs = m_loadJobs->isRunning() || m_runs->isRunning() || m_tunes->isTuning();
    const bool layout = !m_loadJobs->isRunning() && m_graphView->isLayoutPending() && m_document;
    m_progress->setVisible(jobs || layout);
    m_cancelButton->setVisible(jobs);
    m_progress->setRange(0, 1000);
    if (layout) {  // the second stage of opening a model
        m_progress->setValue(std::max(m_progress->value(), 600));
        m_statusLabel->setText(QString("Laying out %1 nodes...").arg(m_document->nodeCount()));
    } else if (!jobs) {
        m_progress->setValue(0);
        if (m_document && m_statusLabel->text().startsWith("Laying out"))
            m_statusLabel->setText(m_document->displayName());
    }
    if (m_runAction) m_runAction->setEnabled(!m_loadJobs->isRunning());
}

widgets::CodeView* MainWindow::codeView() const { return m_codePanes->view(0); }

}  // namespace tessera::studio
