// MainWindow: the studio's window: the graph in the centre; docks for
// properties, the schedule editor, code panes, the pass pipeline, performance
// plots and messages; the status bar's job progress. What the studio does is
// in controllers over the shared Workspace (load_controller.h,
// run_controller.h, tune_controller.h, export_controller.h,
// session_controller.h, schedule_controller.h, edit_controller.h) and the
// menus in main_menus.h; the window lays them out and wires them.
#pragma once

#include <QMainWindow>

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

class QDockWidget;
class QLineEdit;
class QPlainTextEdit;
class QProgressBar;
class QTreeView;
class QUndoStack;

namespace tessera::widgets {
class CodePanes;
class CodeView;
class GraphView;
}  // namespace tessera::widgets

namespace tessera::studio {

class BuildSettingsBar;
class CollapseController;
class JobStatus;
class LoadController;
class MainMenus;
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
    /// True when nothing unsaved would be lost by opening another model or
    /// quitting, or the user saved it as a session or chose to discard it
    /// (asked in a dialog; with dialogs suppressed, true).
    bool maySetAsideWork();
    /// "model.onnx (session file)[*] - Tessera Studio".
    void updateTitle();
    bool dialogsSuppressed() const { return m_workspace->dialogsSuppressed(); }

    Workspace* workspace() const { return m_workspace; }
    LoadController* loads() const { return m_loads; }
    RunController* runs() const { return m_runs; }
    TuneController* tuning() const { return m_tunes; }
    ExportController* exports() const { return m_exports; }
    SessionController* sessions() const { return m_sessions; }
    ScheduleController* schedules() const { return m_schedules; }
    EditController* edits() const { return m_edits; }
    MainMenus* menus() const { return m_menus; }

    /// Shrinks the window to the screen's free area (less room for the
    /// window manager's title bar) where its default size does not fit, and
    /// centres it there.
    void fitToScreen();
    /// Every dock back where a fresh studio puts it (View > Reset layout):
    /// a saved layout can leave docks floating over the window.
    void resetLayout();

    /// Starts loading a model in the background (LoadController). modelLoaded
    /// follows once it is shown and laid out, or loadFailed (the previous model stays open).
    void openModel(const QString& path);
    /// Raises the dock of a view: "graph", "schedule", "code", "passes", "plots" or
    /// "tuning" (the plots' tuning tab). False if unknown.
    bool raiseView(const QString& name);
    /// Highlights nodes matching `text`, selects the next; returns the match count.
    int searchGraph(const QString& text);
    QLineEdit* searchBox() const;
    QUndoStack* undoStack() const { return m_undo; }

    const ModelDocument* document() const { return m_workspace->document().get(); }
    bool isLoading() const;

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
    bool isCollapsing() const;
    /// Raises the Performance dock's tab "bars", "roofline" or "tuning".
    void showPlot(const QString& name);
    QTreeView* propertiesView() const { return m_properties; }
    PropertiesModel* propertiesModel() const { return m_propertyModel; }
    QPlainTextEdit* messagesView() const { return m_messages; }
    /// Appends a timestamped line to Messages, following it while the view
    /// is near its end.
    void log(const QString& message);
    /// The status bar's progress: opening a model goes 0-60 % while importing
    /// and 60-100 % while laying out; jobs report their own fraction.
    QProgressBar* progressBar() const;
    /// The status bar's message (the open model, a job, an error, the last edit).
    QString statusMessage() const;

public slots:
    void cancelJobs();
    /// Shows a node's loop IR and properties (-1 clears them).
    void showNode(int node);

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
    /// Floating docks restored from the last session are raised over the
    /// window once it shows (a window manager stacked them behind it).
    void showEvent(QShowEvent* event) override;

private:
    QByteArray m_defaultLayout;  // saveState() before the saved layout is restored
    void createDocks();
    /// Grows the Schedule dock (from the Performance dock under it, which
    /// keeps kPerfDockKeeps pixels) when it is too short for the editor.
    void fitScheduleDock();
    static constexpr int kPerfDockKeeps = 200;
    void connectControllers();
    void showDocument();
    void onLayoutFinished();

    widgets::GraphView* m_graphView;
    widgets::CodePanes* m_codePanes;
    ScheduleEditor* m_scheduleEditor;
    PassPipelinePanel* m_passPanel;
    QUndoStack* m_undo;
    QTreeView* m_properties;
    PropertiesModel* m_propertyModel;
    QPlainTextEdit* m_messages;
    BuildSettingsBar* m_settingsBar;
    QString m_selectAfterLayout;  // node name to select once a relayout finishes
    int m_undoIndex = 0;          // the undo stack's index before its last change
    QDockWidget* m_propertiesDock = nullptr;
    QDockWidget* m_scheduleDock = nullptr;
    QDockWidget* m_codeDock = nullptr;
    QDockWidget* m_passDock = nullptr;
    QDockWidget* m_perfDock = nullptr;
    QDockWidget* m_messagesDock = nullptr;
    Workspace* m_workspace;
    LoadController* m_loads;
    RunController* m_runs;
    TuneController* m_tunes;
    ExportController* m_exports;
    SessionController* m_sessions;
    ScheduleController* m_schedules;
    EditController* m_edits;
    CollapseController* m_collapses;
    MainMenus* m_menus = nullptr;
    JobStatus* m_status = nullptr;
};

}  // namespace tessera::studio
