// MainWindow: the Run job with the studio's build settings, its result
// (latency, kernel bars, roofline, node heat) and whether it is still current.
#include <QFileInfo>
#include <QLabel>
#include <QStatusBar>
#include <QTableWidget>
#include <algorithm>
#include <cmath>

#include "app/studio/build_settings_bar.h"
#include "app/studio/main_window.h"
#include "app/studio/pass_pipeline_panel.h"
#include "widgets/graph_view.h"
#include "widgets/perf_plot.h"
#include "widgets/roofline_plot.h"

namespace tessera::studio {

BuildSettings MainWindow::buildSettings() const {
    BuildSettings settings;
    settings.target = m_settingsBar->target();
    settings.optLevel = m_settingsBar->optLevel();
    settings.passes = m_passPanel->pipeline();
    settings.threads = m_settingsBar->threads();
    settings.records = m_tuningDb;
    return settings;
}

QString MainWindow::staleReason() const {
    if (!m_lastRun) return {};
    QStringList reasons = m_staleReasons;
    const QString settings = buildSettings().differences(m_lastRun->settings);
    if (!settings.isEmpty()) reasons.prepend(settings);
    reasons.removeDuplicates();
    return reasons.join(", ");
}

void MainWindow::noteBuildInputChanged(const QString& what) {
    if (!m_changesSinceRunStart.contains(what)) m_changesSinceRunStart << what;
    if (m_lastRun && !m_staleReasons.contains(what)) m_staleReasons << what;
    updateRunStatus();
}

void MainWindow::updateRunStatus() {
    if (!m_lastRun) {
        m_lastRunLabel->setText("Build: " + buildSettings().describe());
        m_lastRunLabel->setToolTip("What Run, Tune and Export will build with");
        return;
    }
    const RunResult& r = *m_lastRun;
    QString text = QString("Last run: %1 \u00b7 %2 kernels").arg(r.settings.describe()).arg(r.kernels.size());
    if (!r.settings.records.isEmpty() && QFileInfo(r.settings.records).isFile())
        text += QString(" \u00b7 %1 tuned").arg(r.recordsApplied);
    QString tip = "Passes: " + (r.settings.passes.isEmpty() ? "none" : r.settings.passes.join(", "));
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

void MainWindow::fillKernelTable(const RunResult& result) {
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
        m_kernelTable->setItem(row, 1, new QTableWidgetItem(k.nodeNames.join(", ")));
        m_kernelTable->setItem(row, 2, number(k.ms, 4));
        m_kernelTable->setItem(row, 3, number(total > 0 ? 100 * k.ms / total : 0, 1));
        QTableWidgetItem* gf = number(k.ms > 0 ? k.flops / (k.ms * 1e6) : 0, 2);
        if (effective)
            gf->setToolTip("Effective: the op's FLOPs (the direct conv's); the Winograd kernel "
                           "executes other work (the roofline plots that)");
        m_kernelTable->setItem(row, 4, gf);
        m_kernelTable->setItem(row, 5, number(k.ms > 0 ? k.bytes / (k.ms * 1e6) : 0, 2));
        m_kernelTable->setItem(row, 6, new QTableWidgetItem(QString(effective ? "effective " : "") +
                                                            (k.tuned ? "tuned" : "")));
    }
    m_kernelTable->setSortingEnabled(true);
    m_kernelTable->sortByColumn(2, Qt::DescendingOrder);
}

void MainWindow::runModel() {
    if (!m_document) {
        log("Nothing to run: open a model first.");
        return;
    }
    if (m_loadJobs->isRunning()) {
        log("Still loading; run again when the model is open.");
        return;
    }
    std::shared_ptr<const graph::Graph> graph = m_document->snapshot();
    const ModelDocument* owner = m_document.get();
    const KernelTraces traces = kernelTraces();
    const BuildSettings settings = buildSettings();
    m_changesSinceRunStart.clear();
    log("Running " + m_document->displayName() + " (build, time, profile): " + settings.describe() +
        (traces.empty() ? QString() : QString(", %1 hand schedules").arg(traces.size())));
    m_runJobs->start(
        "Running " + m_document->displayName(),
        [graph, traces, settings](const JobContext& context) {
            return runAndProfile(*graph, settings, context, traces);
        },
        [this, owner](const RunResult& value) {
            if (m_document.get() != owner) return;  // another model was opened meanwhile
            showRunResult(value);
        });
}

void MainWindow::showRunResult(const RunResult& result) {
    m_lastRun = std::make_unique<RunResult>(result);
    m_staleReasons = m_changesSinceRunStart;
    m_perfLabel->setText(
        QString("Latency %1 ms (median of %2, min %3 ms)  ·  %4 GFLOP/s  ·  compiled in %5 s")
            .arg(result.medianMs, 0, 'f', 3)
            .arg(result.repeat)
            .arg(result.minMs, 0, 'f', 3)
            .arg(result.gflops, 0, 'f', 2)
            .arg(result.compileSeconds, 0, 'f', 2));
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
    }
    m_roofline->setKernels(points, intensity, gflops);
    showCeilings();
    fillKernelTable(result);
    if (m_document && slowest > 0) {  // the compiled graph keeps the model's node names
        QVector<double> heat(m_document->nodeCount(), -1.0);
        for (const KernelTime& k : result.kernels)
            for (const QString& name : k.nodeNames) {
                const int n = m_document->graph().find_node(name.toStdString());
                if (n >= 0 && n < heat.size()) heat[n] = std::max(heat[n], k.ms / slowest);
            }
        m_graphView->setNodeHeat(heat);
    }
    QString records;
    if (!result.settings.records.isEmpty() && QFileInfo(result.settings.records).isFile()) {
        records = QString(", %1 of %2 kernels from tuning records")
                      .arg(result.recordsApplied)
                      .arg(result.kernels.size());
        for (const QString& skipped : result.recordsSkipped)
            log("Tuning record not applied to " + skipped);
    }
    log(QString("Run finished: %1 ms median, %2 GFLOP/s, %3 kernels (%4)%5")
            .arg(result.medianMs, 0, 'f', 3)
            .arg(result.gflops, 0, 'f', 2)
            .arg(result.kernels.size())
            .arg(result.settings.describe(), records));
    m_statusLabel->setText(m_document ? m_document->displayName() : QString());
    updateRunStatus();
    emit runFinished();
}

}  // namespace tessera::studio
