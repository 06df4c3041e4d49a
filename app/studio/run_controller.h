// RunController: Model ▸ Run: builds, times and profiles the open model in a
// job (run_job.h) with the workspace's settings and schedules, and owns the
// Performance panel that shows the result: latency, time per kernel, the
// roofline against this machine's measured ceilings, the kernel table, the
// last-run label and whether that result is stale (a build input changed).
#pragma once

#include <QObject>
#include <QStringList>
#include <QVector>
#include <memory>

#include "app/studio/machine_peaks.h"
#include "app/studio/run_job.h"

class QLabel;
class QTabWidget;
class QTableWidget;
class QWidget;

namespace tessera::widgets {
class PerfPlot;
class RooflinePlot;
}  // namespace tessera::widgets

namespace tessera::studio {

class JobRunner;
class LayerErrorTable;
class Workspace;

class RunController : public QObject {
    Q_OBJECT
public:
    /// The panel's widgets are children of `panelParent`.
    RunController(Workspace* workspace, QWidget* panelParent);

    /// Builds, times and profiles the open model in the background.
    void run();
    bool isRunning() const;
    JobRunner* jobs() const { return m_jobs; }
    const RunResult* lastRun() const { return m_lastRun.get(); }
    /// Forgets the last result (another model or graph: it would be stale).
    void clearResult();
    /// Why the last Run's figures no longer describe what Run would build
    /// ("passes, threads changed"); empty when they do or nothing ran yet.
    QString staleReason() const;
    /// The last-run label and the stale notice, from the result and the settings.
    void updateStatus();

    /// Measures this machine's peak FLOP/s and bandwidths once, in a job (roofline).
    void measurePeaks();
    const MachinePeaks* machinePeaks() const { return m_peaks.get(); }
    bool isMeasuringPeaks() const;

    /// The Performance panel: the label and the plot tabs.
    QWidget* panel() const { return m_panel; }
    QTabWidget* plotTabs() const { return m_plotTabs; }
    QLabel* perfLabel() const { return m_perfLabel; }
    /// The status bar's permanent label naming what the last Run ran.
    QLabel* lastRunLabel() const { return m_lastRunLabel; }
    widgets::PerfPlot* perfPlot() const { return m_perfPlot; }
    widgets::RooflinePlot* rooflinePlot() const { return m_roofline; }
    /// The kernel table: kernel, nodes, ms, %, GFLOP/s, GB/s, notes.
    QTableWidget* kernelTable() const { return m_kernelTable; }
    /// A quantized model's per-layer fp32-vs-int8 error after a Run.
    LayerErrorTable* layerErrorTable() const { return m_layerErrors; }

signals:
    void finished();
    void failed(const QString& message);
    /// Relative time per node of the open model (-1: not run), after a Run.
    void nodeHeat(const QVector<double>& heat);
    /// The user asked for a node (double-click in the int8 error table).
    void nodeRequested(const QString& name);
    /// The user asked for a kernel (double-click in the kernel table): its
    /// name and its first node.
    void kernelRequested(const QString& kernel, const QString& node);

private:
    void show(const RunResult& result);
    void fillKernelTable(const RunResult& result);
    void showCeilings();
    void noteBuildInputChanged(const QString& what);

    Workspace* m_workspace;
    JobRunner* m_jobs;
    JobRunner* m_peakJobs;
    QWidget* m_panel;
    QLabel* m_perfLabel;
    QTabWidget* m_plotTabs;
    widgets::PerfPlot* m_perfPlot;
    widgets::RooflinePlot* m_roofline;
    QTableWidget* m_kernelTable;
    LayerErrorTable* m_layerErrors;
    QLabel* m_lastRunLabel;
    std::unique_ptr<RunResult> m_lastRun;
    /// Kernels compiled by this document's Runs: a Run after an edit compiles
    /// only what the edit changed. A new document starts a new cache.
    std::shared_ptr<driver::KernelCache> m_kernels;
    const void* m_kernelsOwner = nullptr;
    std::unique_ptr<MachinePeaks> m_peaks;
    bool m_peaksRemeasured = false;             // once per session, when a kernel tops the ceilings
    QStringList m_changesSinceRunStart;         // build inputs changed since the last Run started
    QStringList m_staleReasons;                 // ... and since the shown Run's result
    QString m_runningInputs;  // Workspace::buildInputsKey when the running Run started
    KernelTraces m_runningTraces, m_runTraces;  // the hand schedules of the running / shown Run
};

}  // namespace tessera::studio
