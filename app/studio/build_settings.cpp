// BuildSettings → driver::BuildOptions, and the texts that name a build.
#include "app/studio/build_settings.h"

#include <QFileInfo>
#include <QThread>
#include <algorithm>

#include "engine/graph/passes/pass_manager.h"

namespace tessera::studio {

driver::BuildOptions BuildSettings::buildOptions(const KernelTraces& traces) const {
    driver::BuildOptions options;
    options.target = target.toStdString();
    options.opt_level = optLevel;
    options.threads = threads;
    options.kernel_traces = traces;
    for (const QString& p : passes) options.passes.push_back(p.toStdString());
    if (options.passes.empty()) options.passes.push_back("none");
    if (!records.isEmpty() && QFileInfo(records).isFile()) options.records = records.toStdString();
    return options;
}

QString BuildSettings::describe() const {
    // The passes the target runs of the chosen ones (CUDA leaves convert_layout out).
    size_t run = size_t(passes.size());
    try {
        const driver::BuildOptions options = buildOptions();
        run = driver::find_target(options.target).graph_passes(options.passes, optLevel).size();
    } catch (const std::exception&) {  // an unknown pass or target: the build will say so
    }
    QString text = QString("-O%1 \u00b7 %2 passes").arg(optLevel).arg(run);
    if (target == "cuda")  // the GPU's grid, not CPU threads, runs the kernels
        text = "CUDA \u00b7 " + text;
    else
        text += QString(" \u00b7 %1 thread%2").arg(threads).arg(threads == 1 ? "" : "s");
    if (!records.isEmpty() && QFileInfo(records).isFile())
        text += " \u00b7 records " + QFileInfo(records).fileName();
    return text;
}

QString BuildSettings::differences(const BuildSettings& other) const {
    QStringList what;
    if (target != other.target) what << "target";
    if (optLevel != other.optLevel) what << "opt level";
    if (passes != other.passes) what << "passes";
    if (threads != other.threads) what << "threads";
    if (records != other.records) what << "tuning records";
    return what.join(", ");
}

int defaultThreads() { return std::max(1, QThread::idealThreadCount()); }

QStringList defaultPasses(int optLevel) {
    QStringList names;
    for (const std::string& p : passes::resolve_pipeline({}, optLevel))
        names << QString::fromStdString(p);
    return names;
}

}  // namespace tessera::studio
