// ExportController: File ▸ Export package: builds the open model with the
// workspace's settings and schedules in a job and writes a package
// (export_job.h); exported or failed follows.
#pragma once

#include <QObject>
#include <QString>

namespace tessera::studio {

class JobRunner;
class Workspace;

class ExportController : public QObject {
    Q_OBJECT
public:
    explicit ExportController(Workspace* workspace);

    /// Writes the package (.tar) at `path` in a job.
    void exportTo(const QString& path);
    /// Asks for a path, then exportTo.
    void exportDialog();
    JobRunner* jobs() const { return m_jobs; }

signals:
    void exported(const QString& path, const QString& metaJson);
    void failed(const QString& message);

private:
    Workspace* m_workspace;
    JobRunner* m_jobs;
};

}  // namespace tessera::studio
