// SessionController: sessions (save, open, restore), autosave and recovery.
#include "app/studio/session_controller.h"

#include "app/studio/job_runner.h"
#include "engine/driver/driver.h"

#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QStandardPaths>
#include <QTimer>

#include "app/studio/build_settings_bar.h"
#include "app/studio/pass_pipeline_panel.h"
#include "app/studio/workspace.h"

namespace tessera::studio {
namespace {

constexpr int kAutosaveMs = 30000;

}  // namespace

SessionController::SessionController(Workspace* workspace, BuildSettingsBar* settingsBar,
                                     PassPipelinePanel* passPanel, Hooks hooks)
    : QObject(workspace),
      m_workspace(workspace),
      m_settingsBar(settingsBar),
      m_passPanel(passPanel),
      m_hooks(std::move(hooks)),
      m_checks(new JobRunner(this)) {
    auto* autosave = new QTimer(this);
    connect(autosave, &QTimer::timeout, this, &SessionController::autosaveNow);
    autosave->start(kAutosaveMs);
}

Session SessionController::currentSession() const {
    Session s;
    if (const std::shared_ptr<ModelDocument>& document = m_workspace->document()) {
        s.modelPath = QFileInfo(document->path()).absoluteFilePath();
        s.modelSha256 = fileSha256(document->path());
        s.edits = document->edits();
    }
    const BuildSettings settings = m_workspace->buildSettings();
    s.pipeline = settings.passes;
    s.target = settings.target;
    s.optLevel = settings.optLevel;
    s.threads = settings.threads;
    s.traces = m_workspace->traces();
    s.tuningDb = m_workspace->tuningDatabase();
    return s;
}

bool SessionController::save(const QString& path) {
    if (!m_workspace->document()) {
        m_workspace->reportError("Cannot save session", "open a model first");
        return false;
    }
    QString error;
    if (!currentSession().save(path, &error)) {
        m_workspace->reportError("Cannot save session", error);
        return false;
    }
    m_workspace->log("Saved session " + path);
    m_path = path == autosavePath() ? QString() : path;
    markSaved();
    emit saved();
    return true;
}

void SessionController::open(const QString& path) {
    auto session = std::make_unique<Session>();
    QString error;
    if (!Session::load(path, session.get(), &error)) {
        m_workspace->reportError("Cannot open session", error);
        emit failed(error);
        return;
    }
    m_workspace->log("Opening session " + path);
    const QString model = session->modelPath;
    m_pending = std::move(session);
    m_pendingPath = path == autosavePath() ? QString() : path;  // a recovery is saved elsewhere
    m_hooks.openModel(model);
}

void SessionController::modelShown() {
    std::unique_ptr<Session> s = std::move(m_pending);
    const std::shared_ptr<ModelDocument>& document = m_workspace->document();
    if (!s || !document) {
        m_path.clear();
        markSaved();  // a model just opened: nothing of the user's yet
        return;
    }
    m_path = m_pendingPath;
    const QString sha = fileSha256(document->path());
    if (!s->modelSha256.isEmpty() && sha != s->modelSha256)
        m_workspace->log("warning: " + document->path() +
                         " changed since the session was saved (sha256 differs); replaying its "
                         "edits anyway");
    int refused = 0;
    for (const graph::GraphEdit& e : s->edits)
        if (!m_hooks.applyEdit(e)) ++refused;
    if (refused)
        m_workspace->log(QString("warning: %1 of the session's edits were refused").arg(refused));
    m_settingsBar->setTarget(s->target);
    m_settingsBar->setOptLevel(s->optLevel);  // selects the level's passes; the session's follow
    if (s->threads > 0) m_settingsBar->setThreads(s->threads);
    if (!s->pipeline.isEmpty()) m_passPanel->setPipeline(s->pipeline);
    m_workspace->setTraces(s->traces);
    if (!s->tuningDb.isEmpty()) m_workspace->setTuningDatabase(s->tuningDb);
    if (s->edits.empty()) m_hooks.refreshNode();  // show the restored trace
    m_workspace->log(QString("Session restored: %1 edits, %2 schedule traces")
                         .arg(s->edits.size())
                         .arg(s->traces.size()));
    markSaved();
    emit restored();
    if (!s->traces.isEmpty()) checkSchedules();
}

void SessionController::checkSchedules() {
    const std::shared_ptr<ModelDocument>& document = m_workspace->document();
    if (!document) return;
    std::shared_ptr<const graph::Graph> graph = document->snapshot();
    driver::BuildOptions options = m_workspace->buildSettings().buildOptions(m_workspace->kernelTraces());
    options.jit = false;
    options.report_failing_traces = true;
    const int total = int(options.kernel_traces.size());
    m_checks->start(
        "Replaying the session's schedules",
        [graph, options](const JobContext&) {
            QStringList failing;
            const std::shared_ptr<driver::CompiledModel> model = driver::build(*graph, options);
            for (const driver::KernelSchedule& ks : model->schedules)
                if (!ks.hand_error.empty())
                    failing << QString::fromStdString(ks.traced_node + ": " + ks.hand_error);
            for (const std::string& key : driver::unmatched_traces(*model, options.kernel_traces))
                failing << QString::fromStdString(
                    key + ": no node or kernel of that name runs in this build");
            return failing;
        },
        [this, total](const QStringList& failing) {
            for (const QString& f : failing)
                m_workspace->log("warning: a session schedule no longer applies here: " + oneLine(f));
            m_workspace->log(QString("Session schedules: %1 of %2 replay on this machine's kernels")
                                 .arg(total - failing.size())
                                 .arg(total));
            emit schedulesChecked(total - int(failing.size()), failing);
        });
}

bool SessionController::saveSession() { return m_path.isEmpty() ? saveDialog() : save(m_path); }

bool SessionController::saveDialog() {
    const QString path = QFileDialog::getSaveFileName(m_workspace->dialogParent(), "Save session",
                                                      "model.tessera-session",
                                                      "Tessera sessions (*.tessera-session)");
    return !path.isEmpty() && save(path);
}

QByteArray SessionController::currentWork() const {
    // Not currentSession(): that hashes the model file, and this runs on the
    // UI thread after every edit.
    Session work;
    if (const std::shared_ptr<ModelDocument>& document = m_workspace->document())
        work.edits = document->edits();
    work.traces = m_workspace->traces();
    return work.toJson();
}

bool SessionController::hasUnsavedChanges() const {
    return m_workspace->document() && currentWork() != m_savedWork;
}

void SessionController::markSaved() { m_savedWork = currentWork(); }

void SessionController::openDialog() {
    const QString path =
        QFileDialog::getOpenFileName(m_workspace->dialogParent(), "Open session", QString(),
                                     "Tessera sessions (*.tessera-session);;All files (*)");
    if (!path.isEmpty()) open(path);
}

QString SessionController::autosavePath() {
    const QString dir = QStandardPaths::writableLocation(QStandardPaths::AppDataLocation);
    return QDir(dir).filePath("autosave.tessera-session");
}

void SessionController::autosaveNow() {
    if (!m_workspace->document()) return;
    const QByteArray json = currentSession().toJson();
    if (json == m_lastAutosave) return;
    QDir().mkpath(QFileInfo(autosavePath()).absolutePath());
    QString error;
    if (currentSession().save(autosavePath(), &error))
        m_lastAutosave = json;
    else
        m_workspace->log("warning: autosave failed: " + error);
}

}  // namespace tessera::studio
