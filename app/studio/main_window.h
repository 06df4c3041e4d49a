// MainWindow: the studio's window: graph in the centre (search, edits with
// undo/redo); docks for properties, the schedule editor, code panes, the pass
// pipeline, performance plots and messages; open (menu, drop, recent,
// session), run, measure and export jobs; autosave. Its members are defined
// in main_window.cpp, main_window_edit.cpp, main_window_session.cpp and
// main_window_plots.cpp (tuning, roofline peaks).
#pragma once

#include <QMainWindow>
#include <QMap>
#include <memory>

#include "app/studio/build_settings.h"
#include "app/studio/job_runner.h"
#include "app/studio/machine_peaks.h"
#include "app/studio/model_document.h"
#include "app/studio/run_job.h"
#include "app/studio/session.h"
#include "engine/schedule/trace.h"

class QDockWidget;
class QLabel;
class QLineEdit;
class QMenu;
class QTabWidget;
class QUndoStack;
class QPlainTextEdit;
class QProgressBar;
class QToolBar;
class QToolButton;
class QTableWidget;
class QTreeWidget;
class QTreeWidgetItem;

namespace tessera::widgets {
class CodePanes;
class CodeView;
class GraphView;
class PerfPlot;
class RooflinePlot;
class SeriesPlot;
}  // namespace tessera::widgets

namespace tessera::studio {

class BuildSettingsBar;
class PassPipelinePanel;
class ScheduleEditor;

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
    /// Opens `path` with static shapes for its symbolic inputs; with none, a
    /// model with symbolic dims asks for them (askInputShapes) and reopens.
    void openModelWithShapes(const QString& path, const std::map<std::string, std::vector<int64_t>>& shapes);
    /// Raises the dock of a view: "graph", "schedule", "code", "passes", "plots" or
    /// "tuning" (the plots' tuning tab). False if unknown.
    bool raiseView(const QString& name);

    /// Applies a graph edit through the undo stack. A refused edit changes
    /// nothing, is logged with its reason and emits editRefused; returns false.
    bool applyGraphEdit(const graph::GraphEdit& edit);
    QUndoStack* undoStack() const { return m_undo; }
    /// The graph's context menu for a node (show loop IR, schedule, rename,
    /// replace op, delete); the caller owns it. Its actions select the node first.
    QMenu* nodeContextMenu(int node);
    /// Inserts node `name` applying `op` (with `attrs`) to the output of
    /// `node`, through the undo stack; false (logged) when refused.
    bool insertNodeAfter(int node, const QString& op, const QString& name,
                         const std::map<std::string, graph::AttrValue>& attrs = {});
    /// Saves the (edited) model as ONNX; false (logged) on failure.
    bool saveOnnx(const QString& path);
    /// Highlights nodes matching `text`, selects the next; returns the match count.
    int searchGraph(const QString& text);
    QLineEdit* searchBox() const { return m_search; }
    /// The session of what is open (model, edits, pipeline, traces).
    Session currentSession() const;
    /// Writes the session as JSON; false (logged) on failure.
    bool saveSession(const QString& path);
    /// Opens the session's model in the background, then replays its edits and
    /// restores its pipeline and traces (sessionRestored), or loadFailed.
    void openSession(const QString& path);
    /// Builds the model with the pass pipeline and writes a package (.tar) in a
    /// job; packageExported (with meta.json) or exportFailed follows.
    void exportPackageTo(const QString& path);
    /// Writes the autosave file now if anything changed since the last one.
    void autosaveNow();
    /// Where autosave writes (removed on a normal exit; found after a crash).
    static QString autosavePath();
    /// The recent model files, newest first (QSettings).
    QStringList recentFiles() const;

    const ModelDocument* document() const { return m_document.get(); }
    bool isLoading() const { return m_loadJobs->isRunning(); }
    bool isRunning() const { return m_runJobs->isRunning(); }
    const RunResult* lastRun() const { return m_lastRun.get(); }

    widgets::GraphView* graphView() const { return m_graphView; }
    /// The left code pane (loop IR by default).
    widgets::CodeView* codeView() const;
    widgets::CodePanes* codePanes() const { return m_codePanes; }
    ScheduleEditor* scheduleEditor() const { return m_scheduleEditor; }
    PassPipelinePanel* passPanel() const { return m_passPanel; }
    BuildSettingsBar* settingsBar() const { return m_settingsBar; }
    /// The one set of options Run, Tune, Export and the code views build
    /// with: the toolbar's opt level and threads, the pass panel's checked
    /// passes, the tuning database.
    BuildSettings buildSettings() const;
    /// Why the last Run's figures no longer describe what Run would build
    /// ("passes, threads changed"); empty when they do or nothing ran yet.
    QString staleReason() const;
    /// The status bar's permanent label naming what the last Run ran.
    QLabel* lastRunLabel() const { return m_lastRunLabel; }
    /// The schedule traces of all nodes, as Run and Export pass them to the build.
    KernelTraces kernelTraces() const;
    /// The schedule trace kept for a node (by name); empty when none.
    std::vector<schedule::Step> traceOf(const QString& node) const { return m_traces.value(node); }
    bool isCompilingCode() const { return m_codeJobs->isRunning(); }
    widgets::PerfPlot* perfPlot() const { return m_perfPlot; }
    widgets::RooflinePlot* rooflinePlot() const { return m_roofline; }
    /// The kernel table (Performance dock): kernel, nodes, ms, %, GFLOP/s, GB/s, notes.
    QTableWidget* kernelTable() const { return m_kernelTable; }
    /// Measures this machine's peak FLOP/s and bandwidths once, in a job (roofline).
    void measurePeaks();
    /// The machine's ceilings, once measured (null before).
    const MachinePeaks* machinePeaks() const { return m_peaks.get(); }
    /// Raises the Performance dock's tab "bars", "roofline" or "tuning".
    void showPlot(const QString& name);
    bool isMeasuringPeaks() const { return m_peakJobs->isRunning(); }
    QTreeWidget* propertiesView() const { return m_properties; }
    QPlainTextEdit* messagesView() const { return m_messages; }
    QLabel* perfLabel() const { return m_perfLabel; }
    /// The status bar's progress: opening a model goes 0-60 % while importing
    /// and 60-100 % while laying out; jobs report their own fraction.
    QProgressBar* progressBar() const { return m_progress; }

    /// Autotunes the open model's kernels for `trials` candidates in a job,
    /// plotting GFLOP/s per trial with the running best as they arrive
    /// (trialMeasured); tuningFinished or tuningFailed follows. Run uses the
    /// tuning database afterwards.
    void startTuning(int trials);
    bool isTuning() const { return m_tuneJobs->isRunning(); }
    widgets::SeriesPlot* tunePlot() const { return m_tunePlot; }
    /// The tuning database (JSON lines) that Tune appends to and Run reads.
    void setTuningDatabase(const QString& path) { m_tuningDb = path; }
    QString tuningDatabase() const { return m_tuningDb; }

public slots:
    void openFileDialog();
    /// Builds, times and profiles the open model in the background.
    void runModel();
    void cancelJobs();
    /// Shows a node's loop IR and properties (-1 clears them).
    void showNode(int node);
    void deleteCurrentNode();
    void renameCurrentNode();
    void replaceCurrentOp();
    /// Asks for an op (picker with descriptions), a name and attributes, and
    /// inserts that node after the selected one.
    void insertNodeDialog();
    void setInputShapeDialog();
    void saveOnnxDialog();
    void exportGraphDialog();
    void exportPlotDialog();
    void showAbout();
    void saveSessionDialog();
    void openSessionDialog();
    void exportPackageDialog();
    void tuneDialog();

signals:
    void modelLoaded(const QString& path);
    void loadFailed(const QString& message);
    void runFinished();
    void runFailed(const QString& message);
    void editRefused(const QString& message);
    void sessionRestored();
    void packageExported(const QString& path, const QString& metaJson);
    void exportFailed(const QString& message);
    /// The graph changed (edit, undo or redo) and is shown again.
    void graphChanged();
    void trialMeasured(double gflops, double bestGflops);
    void tuningFinished(int measured, bool cancelled);
    void tuningFailed(const QString& message);
    /// The code panes show the kernel `kernel` (empty: an error, shown in the panes).
    void kernelCodeShown(const QString& kernel);

protected:
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;
    void closeEvent(QCloseEvent* event) override;

private:
    void createDocks();
    void createActions();
    void setDocument(std::shared_ptr<ModelDocument> document);
    void showRunResult(const RunResult& result);
    void reportError(const QString& title, const QString& message);
    void log(const QString& message);
    void updateBusyState();
    void createEditActions(QMenu* editMenu);
    void installGraph(std::shared_ptr<const graph::Graph> graph,
                      const std::vector<graph::GraphEdit>& edits);
    void onPropertyEdited(QTreeWidgetItem* item, int column);
    void showNodeCode(int node);
    /// The code panes: the kernel that runs `node` as the build settings make
    /// it (loop IR, LLVM IR, assembly; CUDA C as the CUDA target builds its
    /// group), in a job; its nodes highlighted in the graph.
    void showKernelCode(int node);
    /// What the scheduled build of the code views depends on (graph, settings, schedules).
    QString kernelBuildKey() const;
    void addRecentFile(const QString& path);
    void rebuildRecentMenu();
    void restorePendingSession();
    /// The Tune menu and toolbar action, the tuning plot tab (main_window_plots.cpp).
    void createTuneActions(QMenu* menu, QToolBar* toolBar);
    /// Something Run builds from changed (graph edit, schedule, tuning
    /// records): the last Run's figures are stale until the next Run.
    void noteBuildInputChanged(const QString& what);
    /// The last-run label and the stale notice, from m_lastRun and the settings.
    void updateRunStatus();
    /// The roofline's ceilings for the shown Run's thread count (measures first).
    void showCeilings();
    /// The Performance dock's kernel table: one sortable row per kernel.
    void fillKernelTable(const RunResult& result);

    std::shared_ptr<ModelDocument> m_document;
    std::unique_ptr<RunResult> m_lastRun;
    bool m_dialogsSuppressed = false;

    JobRunner* m_loadJobs;
    JobRunner* m_runJobs;

    widgets::GraphView* m_graphView;
    widgets::CodePanes* m_codePanes;
    ScheduleEditor* m_scheduleEditor;
    PassPipelinePanel* m_passPanel;
    QDockWidget* m_passDock = nullptr;
    JobRunner* m_codeJobs;
    widgets::RooflinePlot* m_roofline;
    JobRunner* m_peakJobs;
    JobRunner* m_exportJobs;
    JobRunner* m_tuneJobs;
    widgets::SeriesPlot* m_tunePlot = nullptr;
    QString m_tuningDb;
    QUndoStack* m_undo;
    QLineEdit* m_search;
    QMenu* m_recentMenu = nullptr;
    QTabWidget* m_plotTabs = nullptr;
    QDockWidget* m_scheduleDock = nullptr;
    QMap<QString, std::vector<schedule::Step>> m_traces;  // per node name
    QString m_selectAfterLayout;
    std::unique_ptr<Session> m_pendingSession;  // applied once its model is loaded
    QByteArray m_lastAutosave;  // node name to select once a relayout finishes
    bool m_fillingProperties = false;
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
    BuildSettingsBar* m_settingsBar;
    std::unique_ptr<MachinePeaks> m_peaks;
    bool m_peaksRemeasured = false;  // once per session, when a kernel tops the ceilings
    QTableWidget* m_kernelTable = nullptr;
    std::shared_ptr<const driver::CompiledModel> m_kernelBuild;  // the code views' build
    QString m_kernelBuildKey;                                     // ... and what it was built from
    QLabel* m_lastRunLabel;
    QStringList m_changesSinceRunStart;  // build inputs changed since the last Run started
    QStringList m_staleReasons;          // ... and since the shown Run's result
};

}  // namespace tessera::studio
