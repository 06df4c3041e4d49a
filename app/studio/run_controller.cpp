// RunController: the Run job, the Performance panel and the machine's ceilings.
#include "app/studio/run_controller.h"

#include <QFileInfo>
#include <QHeaderView>
#include <QLabel>
#include <QTabWidget>
#include <QTableWidget>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <map>

#include "app/studio/layer_error_table.h"
#include "app/studio/throughput_text.h"
#include "app/studio/workspace.h"
#include "engine/driver/quantization_error.h"
#include "widgets/perf_plot.h"
#include "widgets/roofline_plot.h"

namespace tessera::studio {

RunController::RunController(Workspace* workspace, QWidget* panelParent)
    : QObject(workspace),
      m_workspace(workspace),
      m_jobs(new JobRunner(this)),
      m_peakJobs(new JobRunner(this)),
      m_panel(new QWidget(panelParent)),
      m_perfLabel(new QLabel(m_panel)),
      m_plotTabs(new QTabWidget(m_panel)),
      m_perfPlot(new widgets::PerfPlot(m_panel)),
      m_roofline(new widgets::RooflinePlot(m_panel)),
      m_kernelTable(new QTableWidget(0, 7, m_panel)),
      m_layerErrors(new LayerErrorTable(m_panel)),
      m_lastRunLabel(new QLabel(panelParent)) {
    auto* layout = new QVBoxLayout(m_panel);
    layout->setContentsMargins(4, 4, 4, 4);
    m_perfLabel->setText("Run (F5) to measure latency and GFLOP/s.");
    m_perfLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    // Wrapped: one long line would widen the dock and squeeze the graph.
    m_perfLabel->setWordWrap(true);
    layout->addWidget(m_perfLabel);
    m_plotTabs->addTab(m_perfPlot, "Time per kernel");
    m_plotTabs->addTab(m_roofline, "Roofline");
    m_kernelTable->setHorizontalHeaderLabels(
        {"Kernel", "\u00b5s", "%", "GFLOP/s", "GB/s", "Notes", "Nodes"});
    m_kernelTable->horizontalHeaderItem(1)->setToolTip(
        "Each kernel timed on its own, its buffers flushed from the caches first (as `run "
        "--profile`, the tuner and the schedule editor time it): in a whole run a kernel reads "
        "what the one before left in cache, so these add up to more than the latency.");
    // Kernel names run long (a fused group's nodes): elided in the middle in
    // a column as wide as they need up to a bound, so the numbers stay in view.
    m_kernelTable->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Interactive);
    m_kernelTable->setTextElideMode(Qt::ElideMiddle);
    m_kernelTable->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_kernelTable->setSelectionBehavior(QAbstractItemView::SelectRows);
    // The nodes last: the numbers stay next to the kernel's name in a narrow dock.
    m_kernelTable->horizontalHeader()->setSectionResizeMode(6, QHeaderView::Stretch);
    m_kernelTable->verticalHeader()->setVisible(false);
    connect(m_kernelTable, &QTableWidget::cellDoubleClicked, this, [this](int row, int) {
        if (const QTableWidgetItem* kernel = m_kernelTable->item(row, 0))  // and its first node
            emit kernelRequested(kernel->text(), kernel->data(Qt::UserRole).toString());
    });
    m_plotTabs->addTab(m_kernelTable, "Kernels");
    m_plotTabs->addTab(m_layerErrors, "Int8 error");
    connect(m_layerErrors, &LayerErrorTable::nodeRequested, this, &RunController::nodeRequested);
    layout->addWidget(m_plotTabs, 1);
    connect(m_jobs, &JobRunner::jobFailed, this, [this](int, const QString& message) {
        m_workspace->reportError("Run failed", message);
        emit failed(message);
    });
    connect(m_workspace, &Workspace::buildInputChanged, this,
            &RunController::noteBuildInputChanged);
    updateStatus();
}

bool RunController::isRunning() const { return m_jobs->isRunning(); }

bool RunController::isMeasuringPeaks() const { return m_peakJobs->isRunning(); }

void RunController::clearResult() {
    m_jobs->cancel();  // a result for the old graph would be stale
    m_lastRun.reset();
    m_staleReasons.clear();
    m_perfPlot->clearBars();
    m_roofline->setKernels({}, {}, {});
    m_kernelTable->setRowCount(0);
    m_kernelTable->horizontalHeaderItem(3)->setText("GFLOP/s");  // an int8 model's header went on
    m_layerErrors->setRowCount(0);
    m_perfLabel->setText("Run (F5) to measure latency and GFLOP/s.");
    updateStatus();
}

QString RunController::staleReason() const {
    if (!m_lastRun) return {};
    QStringList reasons = m_staleReasons;
    // Schedules edited back to what the shown Run built with (Edit > Undo)
    // are not a reason: the hand schedules are compared, not counted.
    auto sameSteps = [](const KernelTraces& a, const KernelTraces& b) {
        return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const auto& x, const auto& y) {
            return x.first == y.first && x.second.steps == y.second.steps;
        });
    };
    if (sameSteps(m_workspace->kernelTraces(), m_runTraces)) reasons.removeAll("schedules");
    const QString settings = m_workspace->buildSettings().differences(m_lastRun->settings);
    if (!settings.isEmpty()) reasons.prepend(settings);
    reasons.removeDuplicates();
    return reasons.join(", ");
}

void RunController::noteBuildInputChanged(const QString& what) {
    if (!m_changesSinceRunStart.contains(what)) m_changesSinceRunStart << what;
    if (m_lastRun && !m_staleReasons.contains(what)) m_staleReasons << what;
    updateStatus();
}

void RunController::updateStatus() {
    if (!m_lastRun) {
        m_lastRunLabel->setText("Build: " + m_workspace->buildSettings().describe());
        m_lastRunLabel->setToolTip("What Run, Tune and Export will build with");
        return;
    }
    const RunResult& r = *m_lastRun;
    QString text =
        QString("Last run: %1 \u00b7 %2 kernels").arg(r.settings.describe()).arg(r.kernels.size());
    if (!r.settings.records.isEmpty() && QFileInfo(r.settings.records).isFile())
        text += QString(" \u00b7 %1 tuned").arg(r.recordsApplied);
    const int hand =
        int(m_runTraces.size()) - int(r.tracesUnmatched.size()) - int(r.tracesFailed.size());
    if (hand > 0) text += QString(" \u00b7 %1 hand-scheduled").arg(hand);
    QString tip =
        "Passes: " + (r.settings.passes.isEmpty() ? "none" : r.settings.passes.join(", "));
    if (!r.recordsSkipped.isEmpty())
        tip += "\nTuning records not applied:\n" + r.recordsSkipped.join("\n");
    const QString stale = staleReason();
    if (!stale.isEmpty()) {
        text += " \u2014 stale: " + stale + " changed";
        tip += "\nRun (F5) again to measure what the current settings build.";
    }
    m_lastRunLabel->setText(text);
    m_lastRunLabel->setToolTip(tip);
    QString perf = m_perfLabel->text();
    const int cut = perf.indexOf("\n");
    if (perf.startsWith("Stale") && cut >= 0) perf = perf.mid(cut + 1);
    m_perfLabel->setText(stale.isEmpty() ? perf
                                         : "Stale (" + stale + " changed since this run)\n" + perf);
}

void RunController::fillKernelTable(const RunResult& result) {
    m_kernelTable->setSortingEnabled(false);
    m_kernelTable->clearContents();
    m_kernelTable->setRowCount(int(result.kernels.size()));
    double total = 0;
    for (const KernelTime& k : result.kernels) total += k.ms;
    auto number = [](double v, int decimals) {
        auto* item = new QTableWidgetItem;
        item->setData(Qt::DisplayRole, QString::number(v, 'f', decimals).toDouble());
        item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
        return item;
    };
    for (int row = 0; row < result.kernels.size(); ++row) {
        const KernelTime& k = result.kernels[row];
        const bool effective = runtime::executes_other_work(k.flops, k.workFlops);
        auto* name = new QTableWidgetItem(k.kernel);
        name->setData(Qt::UserRole, k.nodeNames.isEmpty() ? QString() : k.nodeNames.first());
        name->setToolTip(k.loopIr.left(4000));
        m_kernelTable->setItem(row, 0, name);
        m_kernelTable->setItem(row, 6, new QTableWidgetItem(k.nodeNames.join(", ")));
        m_kernelTable->setItem(row, 1, number(k.ms * 1e3, 2));  // µs: small kernels stay readable
        m_kernelTable->setItem(row, 2, number(total > 0 ? 100 * k.ms / total : 0, 1));
        QTableWidgetItem* gf = number(k.ms > 0 ? k.flops / (k.ms * 1e6) : 0, 2);
        if (effective)
            gf->setToolTip(
                "Effective: the op's FLOPs (the direct conv's); the Winograd kernel "
                "executes other work (the roofline plots that)");
        if (k.integer)
            gf->setToolTip(
                "G operations/s of 8-bit integer dot products (int8): their roof is the CPU's "
                "int8 peak (vpdpbusd), not its float peak");
        m_kernelTable->setItem(row, 3, gf);
        m_kernelTable->setItem(row, 4, number(k.ms > 0 ? k.bytes / (k.ms * 1e6) : 0, 2));
        QStringList notes;
        if (k.integer) notes << "int8 GOP/s";
        if (effective) notes << "effective";
        if (k.tuned) notes << "tuned";
        m_kernelTable->setItem(row, 5, new QTableWidgetItem(notes.join(", ")));
    }
    const bool anyInteger = std::any_of(result.kernels.begin(), result.kernels.end(),
                                        [](const KernelTime& k) { return k.integer; });
    m_kernelTable->horizontalHeaderItem(3)->setText(anyInteger ? "GFLOP/s | GOP/s" : "GFLOP/s");
    m_kernelTable->setSortingEnabled(true);
    m_kernelTable->sortByColumn(1, Qt::DescendingOrder);
    m_kernelTable->resizeColumnToContents(0);
    constexpr int kMaxKernelColumn = 260;
    if (m_kernelTable->columnWidth(0) > kMaxKernelColumn)
        m_kernelTable->setColumnWidth(0, kMaxKernelColumn);
}

void RunController::run() {
    const std::shared_ptr<ModelDocument>& document = m_workspace->document();
    if (!document) {
        m_workspace->log("Nothing to run: open a model first.");
        return;
    }
    if (m_workspace->isLoading()) {
        m_workspace->log("Still loading; run again when the model is open.");
        return;
    }
    if (!m_workspace->confirmInputShapes([this] { run(); })) return;
    std::shared_ptr<const graph::Graph> graph = document->snapshot();
    const ModelDocument* owner = document.get();
    const KernelTraces traces = m_workspace->kernelTraces();
    const BuildSettings settings = m_workspace->buildSettings();
    const QString inputs = m_workspace->buildInputsKey();
    // The first line counts the hand schedules that apply, apart from those
    // that do not: known from the code views' build of the same inputs, else
    // from a build without code generation first.
    const HandScheduleCheck* check = m_workspace->handScheduleCheck();
    if (!check && !traces.empty() && settings.target == "llvm") {
        driver::BuildOptions options = settings.buildOptions(traces);
        options.jit = false;
        options.report_failing_traces = true;
        m_jobs->start(
            "Checking the hand schedules of " + document->displayName(),
            [graph, options](const JobContext&) {
                return checkHandSchedules(*driver::build(*graph, options), options.kernel_traces);
            },
            [this, owner, inputs](const HandScheduleCheck& checked) {
                if (m_workspace->document().get() != owner) return;
                m_workspace->setHandScheduleCheck(inputs, checked);
                // Once this job has finished: the Run is a job of its own.
                QMetaObject::invokeMethod(this, &RunController::run, Qt::QueuedConnection);
            });
        return;
    }
    QString hand;
    if (check)
        hand = describeHandSchedules(*check);
    else if (!traces.empty())
        hand = QString("%1 hand schedule%2").arg(traces.size()).arg(traces.size() == 1 ? "" : "s");
    m_runningInputs = inputs;
    m_changesSinceRunStart.clear();
    m_runningTraces = traces;
    // One cache per document; bounded, as every edit adds the kernels it changed.
    constexpr size_t kMaxCachedKernels = 1024;
    if (m_kernelsOwner != owner || !m_kernels || m_kernels->size() > kMaxCachedKernels) {
        m_kernels = std::make_shared<driver::KernelCache>();
        m_kernelsOwner = owner;
    }
    std::shared_ptr<driver::KernelCache> kernels = m_kernels;
    // A quantized model as its file holds it: its per-layer int8 error too.
    const QString quantized = document->edits().empty() && driver::has_quantized_tensors(*graph)
                                  ? document->path()
                                  : QString();
    m_workspace->log("Running " + document->displayName() +
                     (document->inputDir().isEmpty()
                          ? QString(" on random inputs (Model > Input files... runs it on yours)")
                          : " on the input files in " + document->inputDir()) +
                     " (build, time, profile): " + settings.describe() +
                     (hand.isEmpty() ? QString() : ", " + hand));
    m_jobs->start(
        "Running " + document->displayName(),
        [graph, traces, settings, kernels, quantized,
         inputDir = document->inputDir()](const JobContext& context) {
            return runAndProfile(*graph, settings, context, traces, kernels, quantized, inputDir);
        },
        [this, owner](const RunResult& value) {
            if (m_workspace->document().get() != owner)
                return;  // another model was opened meanwhile
            show(value);
        });
}

void RunController::show(const RunResult& result) {
    m_lastRun = std::make_unique<RunResult>(result);
    m_layerErrors->setErrors(result.layerErrors, result.layerErrorNote);
    m_staleReasons = m_changesSinceRunStart;
    m_runTraces = m_runningTraces;
    if (result.settings.target == "llvm") {  // what this build made of the hand schedules
        HandScheduleCheck check;
        check.failed = result.tracesFailed;
        check.unmatched = result.tracesUnmatched;
        check.applied = std::max(
            0, int(m_runTraces.size()) - int(check.failed.size()) - int(check.unmatched.size()));
        m_workspace->setHandScheduleCheck(m_runningInputs, check);
    }
    double kernelsMs = 0;
    bool anyInteger = false, anyEffective = false;
    for (const KernelTime& k : result.kernels) {
        kernelsMs += k.ms;
        anyInteger = anyInteger || k.integer;
        anyEffective = anyEffective || runtime::executes_other_work(k.flops, k.workFlops);
    }
    const QString unit = modelThroughputUnit(anyInteger, anyEffective);
    // Times under 0.1 ms in microseconds (a small tree model's 0.000 ms said nothing).
    auto time = [](double ms) {
        return ms < 0.1 ? QString("%1 \u00b5s").arg(ms * 1000, 0, 'f', 1)
                        : QString("%1 ms").arg(ms, 0, 'f', 3);
    };
    const QString compiled = result.kernelCount <= 0 ? QString()
                             : result.kernelsCompiled == result.kernelCount
                                 ? QString(" (all %1 kernels compiled)").arg(result.kernelCount)
                                 : QString(" (%1 of %2 kernels compiled; the others unchanged)")
                                       .arg(result.kernelsCompiled)
                                       .arg(result.kernelCount);
    m_perfLabel->setText(QString("Latency %1 (median of %2, min %3)  ·  %4 %7  ·  kernels timed "
                                 "with cold caches: %6 in all  ·  compiled in %5 s")
                             .arg(time(result.medianMs))
                             .arg(result.repeat)
                             .arg(time(result.minMs))
                             .arg(result.gflops, 0, 'f', 2)
                             .arg(result.compileSeconds, 0, 'f', 2)
                             .arg(time(kernelsMs))
                             .arg(unit) +
                         compiled);
    QStringList labels;
    QVector<double> ms;
    double slowest = 0;
    for (const KernelTime& k : result.kernels) {
        labels << k.label + (k.tuned ? " \u2605" : "");
        ms << k.ms;
        slowest = std::max(slowest, k.ms);
    }
    m_perfPlot->setBars(labels, ms);
    // The roofline plots the work a kernel executes: a Winograd kernel's
    // "effective" FLOPs (the direct conv's) could top the machine's peak.
    QVector<double> intensity, gflops;
    QVector<bool> integer;
    QStringList points;
    QVector<KernelTime> byTime = result.kernels;  // the slowest first get the labels
    std::stable_sort(byTime.begin(), byTime.end(),
                     [](const KernelTime& a, const KernelTime& b) { return a.ms > b.ms; });
    for (const KernelTime& k : byTime) {
        const bool transformed = runtime::executes_other_work(k.flops, k.workFlops);
        const double work = transformed ? k.workFlops : k.flops;
        intensity << (k.bytes > 0 ? work / k.bytes : 0);
        gflops << (k.ms > 0 ? work / (k.ms * 1e-3) / 1e9 : 0);
        points << (transformed ? k.label + " (executed work)" : k.label);
        integer << k.integer;
    }
    m_roofline->setKernels(points, intensity, gflops, integer);
    showCeilings();
    fillKernelTable(result);
    const std::shared_ptr<ModelDocument>& document = m_workspace->document();
    if (document && slowest > 0) {  // the compiled graph keeps the model's node names
        QVector<double> heat(document->nodeCount(), -1.0);
        // Every node of a name: an ONNX op expanded at import (DynamicQuantizeLinear,
        // Attention) is several nodes that keep the op's name.
        std::multimap<std::string, int> byName;
        const auto& nodes = document->graph().nodes;
        for (size_t i = 0; i < nodes.size(); ++i) byName.emplace(nodes[i].name, int(i));
        for (const KernelTime& k : result.kernels)
            for (const QString& name : k.nodeNames) {
                const auto [first, last] = byName.equal_range(name.toStdString());
                for (auto it = first; it != last; ++it)
                    if (it->second < heat.size())
                        heat[it->second] = std::max(heat[it->second], k.ms / slowest);
            }
        emit nodeHeat(heat);
    }
    QString records;
    if (!result.settings.records.isEmpty() && QFileInfo(result.settings.records).isFile()) {
        records = QString(", %1 of %2 kernels from tuning records")
                      .arg(result.recordsApplied)
                      .arg(result.kernels.size());
        for (const QString& skipped : result.recordsSkipped)
            m_workspace->log("Tuning record not applied to " + skipped);
    }
    for (const QString& error : result.tracesFailed)
        m_workspace->log("warning: " + error.simplified() +
                         "; Run used the build's own schedule for that kernel (Export refuses "
                         "until the hand schedule is fixed or removed)");
    for (const QString& key : result.tracesUnmatched)
        m_workspace->log("warning: the hand schedule of '" + key +
                         "' scheduled no kernel of this build: no node or kernel of that name "
                         "runs in it (a graph edit removes nodes and renumbers kernel names); it "
                         "stays in the session");
    m_workspace->log(QString("Run finished: %1 ms median, %2 %6, %3 kernels (%4)%5")
                         .arg(result.medianMs, 0, 'f', 3)
                         .arg(result.gflops, 0, 'f', 2)
                         .arg(result.kernels.size())
                         .arg(result.settings.describe(), records)
                         .arg(unit));
    updateStatus();
    emit finished();
}

void RunController::measurePeaks() {
    if (m_peakJobs->isRunning()) return;
    m_peakJobs->start(
        "Measuring machine peaks", [](const JobContext&) { return measureMachinePeaks(); },
        [this](MachinePeaks peaks) {
            // Measured again: keep the best of both (a busy machine measures low).
            if (m_peaks) peaks = bestOf(*m_peaks, peaks);
            m_peaks = std::make_unique<MachinePeaks>(peaks);
            QStringList roofs;
            for (const MemoryRoof& r : m_peaks->roofs)
                roofs << QString("%1 %2 GB/s").arg(r.name).arg(r.gbps, 0, 'f', 1);
            m_workspace->log(
                QString("Machine peaks (%1 FMA): %2 GFLOP/s on one core, %3 on %4 threads; %5")
                    .arg(m_peaks->isa)
                    .arg(m_peaks->gflopsOneCore, 0, 'f', 1)
                    .arg(m_peaks->gflops, 0, 'f', 1)
                    .arg(m_peaks->cores)
                    .arg(roofs.join(", ")));
            showCeilings();
        });
}

void RunController::showCeilings() {
    if (!m_peaks) {
        measurePeaks();
        return;
    }
    // The ceilings of the thread count the shown Run used.
    const int threads =
        m_lastRun ? m_lastRun->settings.threads : m_workspace->buildSettings().threads;
    QVector<QPair<QString, double>> roofs;
    for (const MemoryRoof& r : m_peaks->roofs) roofs.append({r.name, m_peaks->gbpsFor(r, threads)});
    m_roofline->setIntegerPeak(m_peaks->int8GopsFor(threads));
    m_roofline->setCeilings(
        m_peaks->gflopsFor(threads), roofs,
        QString("Ceilings for %1 thread(s).\n").arg(threads) + m_peaks->method());
    // A point above the roof: the ceilings were measured while the machine
    // was busy, or a FLOP count is wrong. Measure once more to tell them apart.
    if (!m_roofline->kernelsAbove(0.0).isEmpty() && !m_peaksRemeasured) {
        m_peaksRemeasured = true;
        m_workspace->log(
            "A kernel plots above the measured ceilings; measuring them again (the first "
            "measurement may have run on a busy machine).");
        measurePeaks();
    }
}

}  // namespace tessera::studio
