// MainWindow: sessions (save, open, restore), autosave and recovery.
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QMessageBox>
#include <QStandardPaths>

#include "app/studio/build_settings_bar.h"
#include "app/studio/export_job.h"
#include "app/studio/main_window.h"
#include "app/studio/pass_pipeline_panel.h"
#include "widgets/graph_view.h"

namespace tessera::studio {

Session MainWindow::currentSession() const {
    Session s;
    if (m_document) {
        s.modelPath = QFileInfo(m_document->path()).absoluteFilePath();
        s.modelSha256 = fileSha256(m_document->path());
        s.edits = m_document->edits();
    }
    const BuildSettings settings = buildSettings();
    s.pipeline = settings.passes;
    s.target = settings.target;
    s.optLevel = settings.optLevel;
    s.threads = settings.threads;
    s.traces = m_traces;
    s.tuningDb = m_tuningDb;
    return s;
}

bool MainWindow::saveSession(const QString& path) {
    if (!m_document) {
        reportError("Cannot save session", "open a model first");
        return false;
    }
    QString error;
    if (!currentSession().save(path, &error)) {
        reportError("Cannot save session", error);
        return false;
    }
    log("Saved session " + path);
    return true;
}

void MainWindow::openSession(const QString& path) {
    auto session = std::make_unique<Session>();
    QString error;
    if (!Session::load(path, session.get(), &error)) {
        reportError("Cannot open session", error);
        emit loadFailed(error);
        return;
    }
    log("Opening session " + path);
    const QString model = session->modelPath;
    m_pendingSession = std::move(session);
    openModel(model);
}

void MainWindow::restorePendingSession() {
    std::unique_ptr<Session> s = std::move(m_pendingSession);
    if (!s || !m_document) return;
    const QString sha = fileSha256(m_document->path());
    if (!s->modelSha256.isEmpty() && sha != s->modelSha256)
        log("warning: " + m_document->path() +
            " changed since the session was saved (sha256 differs); replaying its edits anyway");
    int refused = 0;
    for (const graph::GraphEdit& e : s->edits)
        if (!applyGraphEdit(e)) ++refused;
    if (refused) log(QString("warning: %1 of the session's edits were refused").arg(refused));
    m_settingsBar->setTarget(s->target);
    m_settingsBar->setOptLevel(s->optLevel);  // selects the level's passes; the session's follow
    if (s->threads > 0) m_settingsBar->setThreads(s->threads);
    if (!s->pipeline.isEmpty()) m_passPanel->setPipeline(s->pipeline);
    m_traces = s->traces;
    if (!s->tuningDb.isEmpty()) m_tuningDb = s->tuningDb;
    if (s->edits.empty()) showNode(m_graphView->currentNode());  // show the restored trace
    log(QString("Session restored: %1 edits, %2 schedule traces").arg(s->edits.size()).arg(s->traces.size()));
    emit sessionRestored();
}

void MainWindow::saveSessionDialog() {
    const QString path = QFileDialog::getSaveFileName(this, "Save session", "model.tessera-session",
                                                      "Tessera sessions (*.tessera-session)");
    if (!path.isEmpty()) saveSession(path);
}

KernelTraces MainWindow::kernelTraces() const {
    KernelTraces traces;
    for (auto it = m_traces.begin(); it != m_traces.end(); ++it) {
        schedule::Trace trace;
        trace.steps = it.value();
        if (!trace.steps.empty()) traces[it.key().toStdString()] = trace;
    }
    return traces;
}

void MainWindow::openSessionDialog() {
    const QString path = QFileDialog::getOpenFileName(this, "Open session", QString(),
                                                      "Tessera sessions (*.tessera-session);;All files (*)");
    if (!path.isEmpty()) openSession(path);
}

void MainWindow::exportPackageTo(const QString& path) {
    if (!m_document) return;
    std::shared_ptr<const graph::Graph> graph = m_document->snapshot();
    const BuildSettings settings = buildSettings();
    const KernelTraces traces = kernelTraces();
    log("Exporting " + m_document->displayName() + " to " + path + " (" + settings.describe() + ")");
    m_exportJobs->start(
        "Exporting package",
        [graph, settings, path, traces](const JobContext& context) {
            return exportPackage(*graph, settings, path, context, traces);
        },
        [this, settings](const ExportResult& r) {
            const QString summary =
                QString("Package %1: %2 kernels (%3 from tuning records), %4 KiB, %5, passes: %6")
                    .arg(r.path)
                    .arg(r.kernels)
                    .arg(r.recordsApplied)
                    .arg(r.bytes / 1024)
                    .arg(settings.describe(),
                         settings.passes.isEmpty() ? "none" : settings.passes.join(", "));
            log(summary + "\n" + r.metaJson);
            if (!dialogsSuppressed()) {
                auto* box = new QMessageBox(QMessageBox::Information, "Package exported", summary,
                                            QMessageBox::Ok, this);
                box->setDetailedText(r.metaJson);
                box->setAttribute(Qt::WA_DeleteOnClose);
                box->open();
            }
            emit packageExported(r.path, r.metaJson);
        });
}

void MainWindow::exportPackageDialog() {
    if (!m_document) return;
    const QString path = QFileDialog::getSaveFileName(
        this, "Export compiled package", QFileInfo(m_document->path()).completeBaseName() + ".tar",
        "Tessera packages (*.tar)");
    if (!path.isEmpty()) exportPackageTo(path);
}

QString MainWindow::autosavePath() {
    const QString dir = QStandardPaths::writableLocation(QStandardPaths::AppDataLocation);
    return QDir(dir).filePath("autosave.tessera-session");
}

void MainWindow::autosaveNow() {
    if (!m_document) return;
    const QByteArray json = currentSession().toJson();
    if (json == m_lastAutosave) return;
    QDir().mkpath(QFileInfo(autosavePath()).absolutePath());
    QString error;
    if (currentSession().save(autosavePath(), &error))
        m_lastAutosave = json;
    else
        log("warning: autosave failed: " + error);
}

}  // namespace tessera::studio
