// The studio's Export job: build the (edited) graph with the studio's build
// settings and write a compiled package (engine/package) — plain C++, runs on
// a worker thread through JobRunner.
#pragma once

#include <QString>
#include <QStringList>

#include "app/studio/job_runner.h"
#include "app/studio/run_job.h"
#include "engine/graph/graph.h"

namespace tessera::studio {

struct ExportResult {
    QString path;
    QString metaJson;  // the package's meta.json
    qint64 bytes = 0;  // size of the .tar
    int kernels = 0;
    int recordsApplied = 0;  // kernels scheduled by the tuning records
    int handScheduled = 0;   // kernels scheduled by hand traces (meta.json lists them)
    QStringList passes;      // the graph passes the target ran (meta.json's)
};

/// Builds `graph` with `settings` (as Run does: passes, opt level, threads,
/// tuning records) and writes the package to `path`, with the node schedules
/// in `traces`. UserError on a failed build or link.
ExportResult exportPackage(const graph::Graph& graph, const BuildSettings& settings,
                           const QString& path, const JobContext& context,
                           const KernelTraces& traces = {});

}  // namespace tessera::studio
