// MainWindow: docks, actions, drag-and-drop, and the load/run jobs' results.
#include "app/studio/main_window.h"

#include <QAction>
#include <QApplication>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QHeaderView>
#include <QLabel>
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
#include <QTreeWidget>
#include <QVBoxLayout>
#include <algorithm>

#include "widgets/code_view.h"
#include "widgets/graph_view.h"
#include "widgets/perf_plot.h"

namespace tessera::studio {
namespace {

// The first local .onnx file among dropped URLs, or an empty string.
QString droppedModel(const QMimeData* mime) {
    if (!mime || !mime->hasUrls()) return {};
    for (const QUrl& url : mime->urls())
        if (url.isLocalFile() && url.toLocalFile().endsWith(".onnx", Qt::CaseInsensitive))
            return url.toLocalFile();
    return {};
}

void addRows(QTreeWidgetItem* parent, QTreeWidget* tree, const QVector<PropertyRow>& rows) {
    for (const PropertyRow& row : rows) {
        auto* item = parent ? new QTreeWidgetItem(parent) : new QTreeWidgetItem(tree);
        item->setText(0, row.key);
        item->setText(1, row.value);
        item->setToolTip(1, row.value);
        addRows(item, tree, row.children);
    }
}

}  // namespace

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent),
      m_loadJobs(new JobRunner(this)),
      m_runJobs(new JobRunner(this)),
      m_graphView(new widgets::GraphView(this)),
      m_codeView(new widgets::CodeView(this)),
      m_perfPlot(new widgets::PerfPlot(this)),
      m_properties(new QTreeWidget(this)),
      m_messages(new QPlainTextEdit(this)),
      m_perfLabel(new QLabel(this)),
      m_progress(new QProgressBar(this)),
      m_cancelButton(new QToolButton(this)),
      m_statusLabel(new QLabel(this)) {
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
    statusBar()->addPermanentWidget(m_progress);
    statusBar()->addPermanentWidget(m_cancelButton);
    m_statusLabel->setText("Open a model (Ctrl+O) or drop an .onnx file here.");

    connect(m_graphView, &widgets::GraphView::currentNodeChanged, this, &MainWindow::showNode);
    connect(m_graphView, &widgets::GraphView::layoutFinished, this, [this]() {
        if (!m_document) return;
        m_graphView->setCurrentNode(m_document->preferredNode());
        emit modelLoaded(m_document->path());
    });
    connect(m_graphView, &widgets::GraphView::layoutFailed, this, [this](const QString& message) {
        log("error: graph layout failed: " + message);
        if (m_document) emit modelLoaded(m_document->path());
    });

    for (JobRunner* runner : {m_loadJobs, m_runJobs}) {
        connect(runner, &JobRunner::jobStarted, this, [this](int, const QString& title) {
            m_statusLabel->setText(title + "...");
            updateBusyState();
        });
        connect(runner, &JobRunner::progressChanged, this,
                [this](int, double fraction) { m_progress->setValue(int(fraction * 1000)); });
        connect(runner, &JobRunner::jobFinished, this, &MainWindow::updateBusyState);
        connect(runner, &JobRunner::jobFailed, this, &MainWindow::updateBusyState);
        connect(runner, &JobRunner::jobCancelled, this, [this]() {
            log("Job cancelled.");
            updateBusyState();
        });
    }
    connect(m_loadJobs, &JobRunner::jobFailed, this, [this](int, const QString& message) {
        reportError("Cannot open model", message);
        emit loadFailed(message);
    });
    connect(m_runJobs, &JobRunner::jobFailed, this, [this](int, const QString& message) {
        reportError("Run failed", message);
        emit runFailed(message);
    });

    resize(1600, 1000);
    resizeDocks({m_propertiesDock, m_codeDock}, {720, 720}, Qt::Horizontal);
    resizeDocks({m_propertiesDock, m_codeDock}, {260, 680}, Qt::Vertical);
    resizeDocks({m_perfDock}, {290}, Qt::Vertical);
}

MainWindow::~MainWindow() = default;

void MainWindow::createDocks() {
    setCorner(Qt::TopRightCorner, Qt::RightDockWidgetArea);
    setCorner(Qt::BottomRightCorner, Qt::RightDockWidgetArea);

    m_properties->setColumnCount(2);
    m_properties->setHeaderLabels({"Property", "Value"});
    m_properties->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    m_properties->setAlternatingRowColors(true);
    m_propertiesDock = new QDockWidget("Properties", this);
    m_propertiesDock->setObjectName("PropertiesDock");
    m_propertiesDock->setWidget(m_properties);
    addDockWidget(Qt::RightDockWidgetArea, m_propertiesDock);

    m_codeView->setPlaceholderText("Select a node to see its loop IR.");
    m_codeDock = new QDockWidget("Loop IR", this);
    m_codeDock->setObjectName("LoopIrDock");
    m_codeDock->setWidget(m_codeView);
    addDockWidget(Qt::RightDockWidgetArea, m_codeDock);
    splitDockWidget(m_propertiesDock, m_codeDock, Qt::Vertical);

    auto* perfPanel = new QWidget(this);
    auto* perfLayout = new QVBoxLayout(perfPanel);
    perfLayout->setContentsMargins(4, 4, 4, 4);
    m_perfLabel->setText("Run (F5) to measure latency and GFLOP/s.");
    m_perfLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    perfLayout->addWidget(m_perfLabel);
    perfLayout->addWidget(m_perfPlot, 1);
    m_perfDock = new QDockWidget("Performance", this);
    m_perfDock->setObjectName("PerformanceDock");
    m_perfDock->setWidget(perfPanel);
    addDockWidget(Qt::BottomDockWidgetArea, m_perfDock);

    m_messages->setReadOnly(true);
    m_messages->setMaximumBlockCount(5000);
    m_messagesDock = new QDockWidget("Messages", this);
    m_messagesDock->setObjectName("MessagesDock");
    m_messagesDock->setWidget(m_messages);
    addDockWidget(Qt::BottomDockWidgetArea, m_messagesDock);
    splitDockWidget(m_perfDock, m_messagesDock, Qt::Horizontal);
}

void MainWindow::createActions() {
    QMenu* fileMenu = menuBar()->addMenu("&File");
    QAction* openAction = fileMenu->addAction(style()->standardIcon(QStyle::SP_DialogOpenButton),
                                              "&Open...", this, &MainWindow::openFileDialog);
    openAction->setShortcut(QKeySequence::Open);
    fileMenu->addSeparator();
    QAction* quitAction = fileMenu->addAction("&Quit", this, &QWidget::close);
    quitAction->setShortcut(QKeySequence::Quit);

    QMenu* modelMenu = menuBar()->addMenu("&Model");
    m_runAction = modelMenu->addAction(style()->standardIcon(QStyle::SP_MediaPlay), "&Run", this,
                                       &MainWindow::runModel);
    m_runAction->setShortcut(Qt::Key_F5);
    QAction* cancelAction = modelMenu->addAction(style()->standardIcon(QStyle::SP_BrowserStop),
                                                 "&Cancel job", this, &MainWindow::cancelJobs);

    QMenu* viewMenu = menuBar()->addMenu("&View");
    QAction* fitAction =
        viewMenu->addAction("&Fit graph", m_graphView, &widgets::GraphView::fitAll);
    fitAction->setShortcut(Qt::CTRL | Qt::Key_0);
    viewMenu->addAction("Zoom &in", m_graphView, &widgets::GraphView::zoomIn)
        ->setShortcut(QKeySequence::ZoomIn);
    viewMenu->addAction("Zoom &out", m_graphView, &widgets::GraphView::zoomOut)
        ->setShortcut(QKeySequence::ZoomOut);
    viewMenu->addSeparator();
    for (QDockWidget* dock : {m_codeDock, m_propertiesDock, m_perfDock, m_messagesDock})
        viewMenu->addAction(dock->toggleViewAction());

    QToolBar* toolBar = addToolBar("Main");
    toolBar->setObjectName("MainToolBar");
    toolBar->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    toolBar->addAction(openAction);
    toolBar->addAction(m_runAction);
    toolBar->addAction(cancelAction);
    toolBar->addSeparator();
    toolBar->addAction(fitAction);
}

void MainWindow::openFileDialog() {
    const QString path = QFileDialog::getOpenFileName(this, "Open model", QString(),
                                                      "ONNX models (*.onnx);;All files (*)");
    if (!path.isEmpty()) openModel(path);
}

void MainWindow::openModel(const QString& path) {
    log("Opening " + path);
    if (!QFileInfo(path).isFile()) {
        const QString message = path + ": no such file";
        reportError("Cannot open model", message);
        emit loadFailed(message);
        return;
    }
    m_loadJobs->start(
        "Loading " + QFileInfo(path).fileName(),
        [path](const JobContext&) -> std::any { return ModelDocument::load(path); },
        [this](const std::any& value) {
            setDocument(std::any_cast<std::shared_ptr<ModelDocument>>(value));
        });
}

void MainWindow::setDocument(std::shared_ptr<ModelDocument> document) {
    m_runJobs->cancel();  // a result for the old model would be stale
    m_document = std::move(document);
    m_lastRun.reset();
    m_perfPlot->clearBars();
    m_perfLabel->setText("Run (F5) to measure latency and GFLOP/s.");
    m_codeView->setCode(QString());
    m_properties->clear();
    setWindowTitle(m_document->displayName() + " - Tessera Studio");
    log(QString("Loaded %1: %2 nodes, %3 GFLOP per inference")
            .arg(m_document->path())
            .arg(m_document->nodeCount())
            .arg(m_document->totalFlops() / 1e9, 0, 'g', 4));
    m_statusLabel->setText(m_document->displayName());
    m_graphView->setGraph(m_document->graphViewData());
}

void MainWindow::showNode(int node) {
    m_properties->clear();
    if (!m_document || node < 0 || node >= m_document->nodeCount()) {
        m_codeView->setCode(QString());
        m_codeDock->setWindowTitle("Loop IR");
        return;
    }
    addRows(nullptr, m_properties, m_document->properties(node));
    m_properties->expandAll();
    const graph::Node& n = m_document->graph().nodes[node];
    m_codeDock->setWindowTitle("Loop IR - " + QString::fromStdString(n.name));
    try {
        m_codeView->setCode(m_document->loopIr(node));
    } catch (const std::exception& e) {
        const QString message = oneLine(QString::fromStdString(e.what()));
        m_codeView->setCode("# cannot lower " + QString::fromStdString(n.op) + " node '" +
                            QString::fromStdString(n.name) + "':\n# " + message);
        log("error: lowering " + QString::fromStdString(n.name) + ": " + message);
    }
}

void MainWindow::runModel() {
    if (!m_document) {
        log("Nothing to run: open a model first.");
        return;
    }
    if (m_loadJobs->isRunning()) {
        log("Still loading; run again when the model is open.");
        return;
    }
    std::shared_ptr<const graph::Graph> graph = m_document->snapshot();
    const ModelDocument* owner = m_document.get();
    log("Running " + m_document->displayName() + " (build, time, profile)");
    m_runJobs->start(
        "Running " + m_document->displayName(),
        [graph](const JobContext& context) -> std::any { return runAndProfile(*graph, context); },
        [this, owner](const std::any& value) {
            if (m_document.get() != owner) return;  // another model was opened meanwhile
            showRunResult(std::any_cast<const RunResult&>(value));
        });
}

void MainWindow::showRunResult(const RunResult& result) {
    m_lastRun = std::make_unique<RunResult>(result);
    m_perfLabel->setText(
        QString("Latency %1 ms (median of %2, min %3 ms)  ·  %4 GFLOP/s  ·  compiled in %5 s")
            .arg(result.medianMs, 0, 'f', 3)
            .arg(result.repeat)
            .arg(result.minMs, 0, 'f', 3)
            .arg(result.gflops, 0, 'f', 2)
            .arg(result.compileSeconds, 0, 'f', 2));
    QStringList labels;
    QVector<double> ms;
    double slowest = 0;
    for (const KernelTime& k : result.kernels) {
        labels << k.label;
        ms << k.ms;
        slowest = std::max(slowest, k.ms);
    }
    m_perfPlot->setBars(labels, ms);
    if (m_document && result.graphNodes == m_document->nodeCount() && slowest > 0) {
        QVector<double> heat(m_document->nodeCount(), -1.0);
        for (const KernelTime& k : result.kernels)
            for (int n : k.nodes)
                if (n >= 0 && n < heat.size()) heat[n] = k.ms / slowest;
        m_graphView->setNodeHeat(heat);
    }
    log(QString("Run finished: %1 ms median, %2 GFLOP/s, %3 kernels")
            .arg(result.medianMs, 0, 'f', 3)
            .arg(result.gflops, 0, 'f', 2)
            .arg(result.kernels.size()));
    m_statusLabel->setText(m_document ? m_document->displayName() : QString());
    emit runFinished();
}

void MainWindow::cancelJobs() {
    m_loadJobs->cancel();
    m_runJobs->cancel();
}

bool MainWindow::raiseView(const QString& name) {
    if (name == "graph") {
        m_graphView->setFocus();
        return true;
    }
    QDockWidget* dock = name == "code" ? m_codeDock : name == "plots" ? m_perfDock : nullptr;
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
    log("error: " + title + ": " + message);
    m_statusLabel->setText(title + ": " + message);
    if (m_dialogsSuppressed) return;
    // Window-modal but not blocking: no nested event loop inside job callbacks.
    auto* box = new QMessageBox(QMessageBox::Critical, title, message, QMessageBox::Ok, this);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
}

void MainWindow::log(const QString& message) {
    m_messages->appendPlainText(QTime::currentTime().toString("HH:mm:ss") + "  " + message);
}

void MainWindow::updateBusyState() {
    const bool busy = m_loadJobs->isRunning() || m_runJobs->isRunning();
    m_progress->setVisible(busy);
    m_cancelButton->setVisible(busy);
    if (m_loadJobs->isRunning())
        m_progress->setRange(0, 0);  // loading reports no progress
    else {
        m_progress->setRange(0, 1000);
        if (!busy) m_progress->setValue(0);
    }
    if (m_runAction) m_runAction->setEnabled(!m_loadJobs->isRunning());
}

}  // namespace tessera::studio
