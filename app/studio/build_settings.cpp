// BuildSettings → driver::BuildOptions, and the texts that name a build.
#include "app/studio/build_settings.h"

#include <QFileInfo>
#include <QThread>
#include <algorithm>

#include "engine/passes/pass_manager.h"

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
    QString text = QString("-O%1 \u00b7 %2 passes \u00b7 %3 thread%4")
                       .arg(optLevel)
                       .arg(passes.size())
                       .arg(threads)
                       .arg(threads == 1 ? "" : "s");
    if (target == "cuda") text = "CUDA \u00b7 " + text;
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
