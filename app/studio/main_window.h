// MainWindow: the studio's window: graph in the centre (search, edits with
// undo/redo); docks for properties, the schedule editor, code panes, the pass
// pipeline, performance plots and messages; opening models (menu, drop,
// recent). Run, Tune, Export and sessions are controllers that own their jobs
// and state (run_controller.h, tune_controller.h, export_controller.h,
// session_controller.h) over the shared Workspace; the window lays them out
// and wires them. Its members are defined in main_window.cpp,
// main_window_edit.cpp and main_window_code.cpp.
#pragma once

#include <QMainWindow>
#include <QMap>
#include <memory>

#include "app/studio/build_settings.h"
#include "app/studio/edit_controller.h"
#include "app/studio/export_controller.h"
#include "app/studio/job_runner.h"
#include "app/studio/model_document.h"
#include "app/studio/run_controller.h"
#include "app/studio/schedule_controller.h"
#include "app/studio/session_controller.h"
#include "app/studio/tune_controller.h"
#include "app/studio/workspace.h"
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
class QTreeView;

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
class PropertiesModel;
class ScheduleEditor;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    /// When set, errors only go to the Messages dock (screenshot mode, tests).
    void setDialogsSuppressed(bool suppressed) { m_workspace->setDialogsSuppressed(suppressed); }
    bool dialogsSuppressed() const { return m_workspace->dialogsSuppressed(); }

    Workspace* workspace() const { return m_workspace; }
    RunController* runs() const { return m_runs; }
    TuneController* tuning() const { return m_tunes; }
    ExportController* exports() const { return m_exports; }
    SessionController* sessions() const { return m_sessions; }
    ScheduleController* schedules() const { return m_schedules; }
    EditController* edits() const { return m_edits; }

    /// Starts loading a model in the background. modelLoaded follows once it
    /// is shown and laid out, or loadFailed (the previous model stays open).
    void openModel(const QString& path);
    /// Opens `path` with static shapes for its symbolic inputs; with none, a
    /// model with symbolic dims asks for them (askInputShapes) and reopens.
    void openModelWithShapes(const QString& path, const std::map<std::string, std::vector<int64_t>>& shapes);
    /// Raises the dock of a view: "graph", "schedule", "code", "passes", "plots" or
    /// "tuning" (the plots' tuning tab). False if unknown.
    bool raiseView(const QString& name);

    QUndoStack* undoStack() const { return m_undo; }
    /// The graph's context menu for a node (show loop IR, schedule, rename,
    /// replace op, delete); the caller owns it. Its actions select the node first.
    QMenu* nodeContextMenu(int node);
    /// Highlights nodes matching `text`, selects the next; returns the match count.
    int searchGraph(const QString& text);
    QLineEdit* searchBox() const { return m_search; }
    /// The recent model files, newest first (QSettings).
    QStringList recentFiles() const;

    const ModelDocument* document() const { return m_document.get(); }
    bool isLoading() const { return m_loadJobs->isRunning(); }

    widgets::GraphView* graphView() const { return m_graphView; }
    /// The left code pane (loop IR by default).
    widgets::CodeView* codeView() const;
    widgets::CodePanes* codePanes() const { return m_codePanes; }
    ScheduleEditor* scheduleEditor() const { return m_scheduleEditor; }
    PassPipelinePanel* passPanel() const { return m_passPanel; }
    BuildSettingsBar* settingsBar() const { return m_settingsBar; }
    /// The one set of options Run, Tune, Export and the code views build
    /// with (Workspace::buildSettings).
    BuildSettings buildSettings() const { return m_workspace->buildSettings(); }
    /// The schedule trace kept for a node (by name); empty when none.
    std::vector<schedule::Step> traceOf(const QString& node) const {
        return m_workspace->traces().value(node);
    }
    bool isCompilingCode() const { return m_schedules->isCompiling(); }
    /// Draws groups of nodes as one box: "fused" (the kernels the build makes,
    /// found in a job), "scope1".."scope3" (name scopes at that level, repeated
    /// blocks marked) or "none" (expanded); the selection stays.
    void collapseGraph(const QString& how);
    bool isCollapsing() const { return m_collapseJobs->isRunning(); }
    /// Raises the Performance dock's tab "bars", "roofline" or "tuning".
    void showPlot(const QString& name);
    QTreeView* propertiesView() const { return m_properties; }
    PropertiesModel* propertiesModel() const { return m_propertyModel; }
    QPlainTextEdit* messagesView() const { return m_messages; }
    /// The status bar's progress: opening a model goes 0-60 % while importing
    /// and 60-100 % while laying out; jobs report their own fraction.
    QProgressBar* progressBar() const { return m_progress; }

public slots:
    void openFileDialog();
    void cancelJobs();
    /// Shows a node's loop IR and properties (-1 clears them).
    void showNode(int node);
    void exportGraphDialog();
    void exportPlotDialog();
    void showAbout();

signals:
    void modelLoaded(const QString& path);
    void loadFailed(const QString& message);
    void editRefused(const QString& message);
    /// The graph changed (edit, undo or redo) and is shown again.
    void graphChanged();
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
    void reportError(const QString& title, const QString& message);
    void log(const QString& message);
    void updateBusyState();
    void createEditActions(QMenu* editMenu);
    void addRecentFile(const QString& path);
    void rebuildRecentMenu();

    std::shared_ptr<ModelDocument> m_document;
    JobRunner* m_loadJobs;

    widgets::GraphView* m_graphView;
    widgets::CodePanes* m_codePanes;
    ScheduleEditor* m_scheduleEditor;
    PassPipelinePanel* m_passPanel;
    QDockWidget* m_passDock = nullptr;
    JobRunner* m_collapseJobs;
    QUndoStack* m_undo;
    QLineEdit* m_search;
    QMenu* m_recentMenu = nullptr;
    QTabWidget* m_plotTabs = nullptr;
    QDockWidget* m_scheduleDock = nullptr;
    QString m_selectAfterLayout;  // node name to select once a relayout finishes
    QTreeView* m_properties;
    PropertiesModel* m_propertyModel;
    QPlainTextEdit* m_messages;
    QDockWidget* m_codeDock = nullptr;
    QDockWidget* m_propertiesDock = nullptr;
    QDockWidget* m_perfDock = nullptr;
    QDockWidget* m_messagesDock = nullptr;
    QProgressBar* m_progress;
    QToolButton* m_cancelButton;
    QLabel* m_statusLabel;
    QAction* m_runAction = nullptr;
    BuildSettingsBar* m_settingsBar;
    Workspace* m_workspace;
    RunController* m_runs;
    TuneController* m_tunes;
    ExportController* m_exports;
    SessionController* m_sessions;
    ScheduleController* m_schedules;
    EditController* m_edits;
};

}  // namespace tessera::studio
