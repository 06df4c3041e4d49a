// BuildSettings: the one set of options the studio builds with. Run, Tune,
// Export and the code views all take it from the window (opt level and thread
// count from the toolbar, the graph passes from the pass pipeline panel, the
// tuning database), so what the studio shows, runs, tunes and exports agree.
#pragma once

#include <QString>
#include <QStringList>
#include <map>
#include <string>

#include "engine/driver/driver.h"
#include "engine/schedule/trace.h"

namespace tessera::studio {

/// Hand-written schedules by node name (driver::BuildOptions::kernel_traces).
using KernelTraces = std::map<std::string, schedule::Trace>;

struct BuildSettings {
    QString target = "llvm";  // "llvm" (CPU) or "cuda" (driver::targets())
    int optLevel = 2;
    QStringList passes;  // exactly these graph passes, in this order (empty: none)
    int threads = 1;     // threads the kernels are scheduled for and run on
    QString records;     // tuning database Run and Export apply when the file exists

    bool operator==(const BuildSettings&) const = default;

    /// The driver's options for these settings (records only when the file exists).
    driver::BuildOptions buildOptions(const KernelTraces& traces = {}) const;
    /// "-O2 · 8 passes · 2 threads · records tuning.jsonl" for the status bar
    /// ("CUDA · -O2 · ..." for the CUDA target).
    QString describe() const;
    /// What differs from `other`, for a stale-result notice: "opt level, passes".
    QString differences(const BuildSettings& other) const;
};

/// The default thread count: every core this process may use.
int defaultThreads();

/// The graph passes an opt level runs, in pipeline order.
QStringList defaultPasses(int optLevel);

}  // namespace tessera::studio
