// MainWindow: the studio's window: graph in the centre; docks for loop IR,
// properties, performance and messages; open (menu or drop) and run jobs.
#pragma once

#include <QMainWindow>
#include <memory>

#include "app/studio/job_runner.h"
#include "app/studio/model_document.h"
#include "app/studio/run_job.h"

class QDockWidget;
class QLabel;
class QPlainTextEdit;
class QProgressBar;
class QToolButton;
class QTreeWidget;

namespace tessera::widgets {
class CodeView;
class GraphView;
class PerfPlot;
}  // namespace tessera::widgets

namespace tessera::studio {

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    /// When set, errors only go to the Messages dock (screenshot mode, tests).
    void setDialogsSuppressed(bool suppressed) { m_dialogsSuppressed = suppressed; }
    bool dialogsSuppressed() const { return m_dialogsSuppressed; }

    /// Starts loading a model in the background. modelLoaded follows once it
    /// is shown and laid out, or loadFailed (the previous model stays open).
    void openModel(const QString& path);
    /// Raises the dock of a view: "graph", "code" or "plots". False if unknown.
    bool raiseView(const QString& name);

    const ModelDocument* document() const { return m_document.get(); }
    bool isLoading() const { return m_loadJobs->isRunning(); }
    bool isRunning() const { return m_runJobs->isRunning(); }
    const RunResult* lastRun() const { return m_lastRun.get(); }

    widgets::GraphView* graphView() const { return m_graphView; }
    widgets::CodeView* codeView() const { return m_codeView; }
    widgets::PerfPlot* perfPlot() const { return m_perfPlot; }
    QTreeWidget* propertiesView() const { return m_properties; }
    QPlainTextEdit* messagesView() const { return m_messages; }
    QLabel* perfLabel() const { return m_perfLabel; }

public slots:
    void openFileDialog();
    /// Builds, times and profiles the open model in the background.
    void runModel();
    void cancelJobs();
    /// Shows a node's loop IR and properties (-1 clears them).
    void showNode(int node);

signals:
    void modelLoaded(const QString& path);
    void loadFailed(const QString& message);
    void runFinished();
    void runFailed(const QString& message);

protected:
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    void createDocks();
    void createActions();
    void setDocument(std::shared_ptr<ModelDocument> document);
    void showRunResult(const RunResult& result);
    void reportError(const QString& title, const QString& message);
    void log(const QString& message);
    void updateBusyState();

    std::shared_ptr<ModelDocument> m_document;
    std::unique_ptr<RunResult> m_lastRun;
    bool m_dialogsSuppressed = false;

    JobRunner* m_loadJobs;
    JobRunner* m_runJobs;

    widgets::GraphView* m_graphView;
    widgets::CodeView* m_codeView;
    widgets::PerfPlot* m_perfPlot;
    QTreeWidget* m_properties;
    QPlainTextEdit* m_messages;
    QLabel* m_perfLabel;
    QDockWidget* m_codeDock = nullptr;
    QDockWidget* m_propertiesDock = nullptr;
    QDockWidget* m_perfDock = nullptr;
    QDockWidget* m_messagesDock = nullptr;
    QProgressBar* m_progress;
    QToolButton* m_cancelButton;
    QLabel* m_statusLabel;
    QAction* m_runAction = nullptr;
};

}  // namespace tessera::studio
