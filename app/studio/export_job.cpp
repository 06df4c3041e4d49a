// exportPackage: driver::build + package::export_package.
#include "app/studio/export_job.h"

#include <QFileInfo>

#include "engine/core/error.h"
#include "engine/driver/driver.h"
#include "engine/package/package_export.h"

namespace tessera::studio {

ExportResult exportPackage(const graph::Graph& graph, const QString& target,
                           const QStringList& pipeline, const QString& path,
                           const JobContext& context, const KernelTraces& traces) {
    driver::BuildOptions options;
    options.kernel_traces = traces;
    options.target = target.toStdString();
    for (const QString& p : pipeline) options.passes.push_back(p.toStdString());
    if (options.passes.empty()) options.passes.push_back("none");
    auto compiled = driver::build(graph, options, [&](int done, int total) {
        if (total > 0) context.reportProgress(0.8 * done / total);
    });
    if (context.isCancelled()) throw UserError("cancelled");
    package::ExportOptions exportOptions;
    exportOptions.target = options.target;
    exportOptions.passes = options.passes;
    ExportResult result;
    result.metaJson =
        QString::fromStdString(package::export_package(*compiled, exportOptions, path.toStdString()));
    result.path = path;
    result.bytes = QFileInfo(path).size();
    result.kernels = int(compiled->kernels.size());
    context.reportProgress(1.0);
    return result;
}

}  // namespace tessera::studio
