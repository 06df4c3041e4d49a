// ExportController: the export job and its summary.
#include "app/studio/export_controller.h"

#include <QFileDialog>
#include <QFileInfo>
#include <QMessageBox>

#include "app/studio/export_job.h"
#include "app/studio/workspace.h"

namespace tessera::studio {

ExportController::ExportController(Workspace* workspace)
    : QObject(workspace), m_workspace(workspace), m_jobs(new JobRunner(this)) {
    connect(m_jobs, &JobRunner::jobFailed, this, [this](int, const QString& message) {
        m_workspace->reportError("Export failed", message);
        emit failed(message);
    });
}

void ExportController::exportTo(const QString& path) {
    if (!m_workspace->document() ||
        !m_workspace->confirmInputShapes([this, path] { exportTo(path); }))
        return;
    const std::shared_ptr<ModelDocument>& document = m_workspace->document();
    std::shared_ptr<const graph::Graph> graph = document->snapshot();
    const BuildSettings settings = m_workspace->buildSettings();
    const KernelTraces traces = m_workspace->kernelTraces();
    m_workspace->log("Exporting " + document->displayName() + " to " + path + " (" +
                     settings.describe() + ")");
    m_jobs->start(
        "Exporting package",
        [graph, settings, path, traces](const JobContext& context) {
            return exportPackage(*graph, settings, path, context, traces);
        },
        [this, settings](const ExportResult& r) {
            const QString summary =
                QString(
                    "Package %1: %2 kernels (%3 from tuning records, %4 hand-scheduled; "
                    "meta.json lists them with their traces), %5 KiB, %6, passes: %7")
                    .arg(r.path)
                    .arg(r.kernels)
                    .arg(r.recordsApplied)
                    .arg(r.handScheduled)
                    .arg(r.bytes / 1024)
                    .arg(settings.describe(), r.passes.isEmpty() ? "none" : r.passes.join(", "));
            // The summary only: meta.json (with every listed trace) is in the
            // dialog's details and the package.
            m_workspace->log(summary);
            if (!m_workspace->dialogsSuppressed()) {
                auto* box = new QMessageBox(QMessageBox::Information, "Package exported", summary,
                                            QMessageBox::Ok, m_workspace->dialogParent());
                box->setDetailedText(r.metaJson);
                box->setAttribute(Qt::WA_DeleteOnClose);
                box->open();
            }
            emit exported(r.path, r.metaJson);
        });
}

void ExportController::exportDialog() {
    const std::shared_ptr<ModelDocument>& document = m_workspace->document();
    if (!document) return;
    const QString path = QFileDialog::getSaveFileName(
        m_workspace->dialogParent(), "Export compiled package",
        QFileInfo(document->path()).completeBaseName() + ".tar", "Tessera packages (*.tar)");
    if (!path.isEmpty()) exportTo(path);
}

}  // namespace tessera::studio
