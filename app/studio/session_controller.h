// SessionController: File ▸ Save / Open session: the session of what is open
// (model path and sha256, graph edits, build settings, pass pipeline,
// schedule traces, tuning database), opening one (its model first, then the
// rest once the model is shown), and autosave for crash recovery.
#pragma once

#include <QByteArray>
#include <QObject>
#include <QString>
#include <QStringList>
#include <functional>
#include <memory>

#include "app/studio/session.h"

namespace tessera::studio {

class BuildSettingsBar;
class JobRunner;
class PassPipelinePanel;
class Workspace;

class SessionController : public QObject {
    Q_OBJECT
public:
    /// What a restore needs from the window: open a model (in the background;
    /// modelShown follows), replay one graph edit (false when refused), show
    /// the selected node again.
    struct Hooks {
        std::function<void(const QString& path)> openModel;
        std::function<bool(const graph::GraphEdit& edit)> applyEdit;
        std::function<void()> refreshNode;
    };
    SessionController(Workspace* workspace, BuildSettingsBar* settingsBar,
                      PassPipelinePanel* passPanel, Hooks hooks);

    /// The session of what is open.
    Session currentSession() const;
    /// Writes the session as JSON; false (logged) on failure.
    bool save(const QString& path);
    /// Opens the session's model in the background; once it is shown
    /// (modelShown), its edits, settings and traces are restored (restored).
    void open(const QString& path);
    /// Called when a model is shown: restores the session being opened, if any.
    void modelShown();
    /// Builds the open model with the workspace's hand schedules (no JIT) and
    /// reports each that no longer applies (schedulesChecked).
    void checkSchedules();
    /// Asks where to save; false when the user cancelled or the save failed.
    bool saveDialog();
    /// Saves to the session file the open work came from or was last saved
    /// to (Ctrl+S); asks where when there is none.
    bool saveSession();
    /// That file ("" when the model was opened on its own).
    QString sessionPath() const { return m_path; }
    void openDialog();

    /// Whether the open model has graph edits or hand schedules that no saved
    /// session holds (since the model was opened, its session restored or
    /// the session saved).
    bool hasUnsavedChanges() const;
    /// What is open now counts as saved (a model just opened, a session
    /// restored or saved).
    void markSaved();

    /// Writes the autosave file now if anything changed since the last one
    /// (also every 30 s).
    void autosaveNow();
    /// Where autosave writes (removed on a normal exit; found after a crash).
    static QString autosavePath();

    JobRunner* checks() const { return m_checks; }

signals:
    void restored();
    /// save() wrote the session.
    void saved();
    /// After restored(): the session's hand schedules were replayed on the
    /// kernels this machine builds; `failing` lists those whose step no
    /// longer applies (node: the schedule error), also logged.
    void schedulesChecked(int replayed, const QStringList& failing);
    void failed(const QString& message);

private:
    /// The user's work in the session: its graph edits and hand schedules.
    QByteArray currentWork() const;

    Workspace* m_workspace;
    BuildSettingsBar* m_settingsBar;
    PassPipelinePanel* m_passPanel;
    Hooks m_hooks;
    std::unique_ptr<Session> m_pending;  // applied once its model is shown
    QString m_pendingPath;               // ... and the file it came from
    QString m_path;                      // see sessionPath()
    QByteArray m_lastAutosave;
    QByteArray m_savedWork;  // currentWork() when last saved or restored
    JobRunner* m_checks;
};

}  // namespace tessera::studio
