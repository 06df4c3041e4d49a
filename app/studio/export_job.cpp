// exportPackage: driver::build + package::export_package.
#include "app/studio/export_job.h"

#include <QFileInfo>

#include "engine/core/error.h"
#include "engine/driver/driver.h"
#include "engine/driver/package_export.h"

namespace tessera::studio {

ExportResult exportPackage(const graph::Graph& graph, const BuildSettings& settings,
                           const QString& path, const JobContext& context,
                           const KernelTraces& traces) {
    const driver::BuildOptions options = settings.buildOptions(traces);
    auto compiled = driver::build(graph, options, [&](int done, int total) {
        if (total > 0) context.reportProgress(0.8 * done / total);
    });
    context.throwIfCancelled();
    package::ExportOptions exportOptions;
    exportOptions.target = options.target;
    exportOptions.opt_level = options.opt_level;
    exportOptions.passes = driver::find_target(options.target).graph_passes(options.passes,
                                                                           options.opt_level);
    exportOptions.records = options.records;
    exportOptions.threads = options.threads;
    ExportResult result;
    result.metaJson =
        QString::fromStdString(package::export_package(*compiled, exportOptions, path.toStdString()));
    result.path = path;
    result.bytes = QFileInfo(path).size();
    result.kernels = int(compiled->kernels.size());
    result.recordsApplied = compiled->records_applied();
    for (const driver::KernelSchedule& ks : compiled->schedules)
        result.handScheduled += ks.source == "hand" ? 1 : 0;
    for (const std::string& p : exportOptions.passes) result.passes << QString::fromStdString(p);
    context.reportProgress(1.0);
    return result;
}

}  // namespace tessera::studio
