// MainWindow's plots: the Tune action (autotuning in a job with the live
// GFLOP/s-per-trial plot), the roofline's machine peaks, raising a plot tab.
#include <QAction>
#include <QDir>
#include <QFileInfo>
#include <QInputDialog>
#include <QMenu>
#include <QPointer>
#include <QStandardPaths>
#include <QStyle>
#include <QTabWidget>
#include <QToolBar>

#include "app/studio/build_settings_bar.h"
#include "app/studio/machine_peaks.h"
#include "app/studio/main_window.h"
#include "app/studio/tune_job.h"
#include "widgets/perf_plot.h"
#include "widgets/roofline_plot.h"
#include "widgets/series_plot.h"

namespace tessera::studio {

void MainWindow::createTuneActions(QMenu* menu, QToolBar* toolBar) {
    m_tunePlot = new widgets::SeriesPlot("GFLOP/s per trial", this);
    m_tunePlot->setObjectName("TunePlot");
    m_plotTabs->addTab(m_tunePlot, "Tuning");
    if (m_tuningDb.isEmpty()) {
        const QString dir = QStandardPaths::writableLocation(QStandardPaths::AppDataLocation);
        m_tuningDb = QDir(dir).filePath("tuning.jsonl");
    }
    QAction* tune = menu->addAction(style()->standardIcon(QStyle::SP_MediaSeekForward),
                                    "&Tune kernels...", this, &MainWindow::tuneDialog);
    tune->setShortcut(Qt::CTRL | Qt::Key_T);
    tune->setToolTip("Autotune the model's kernels (Ctrl+T) at the toolbar's opt level and thread "
                     "count; Run and Export then use the best schedules");
    menu->addAction("&Cancel tuning", m_tuneJobs, &JobRunner::cancel);
    toolBar->addAction(tune);
    connect(m_tuneJobs, &JobRunner::jobFailed, this, [this](int, const QString& message) {
        reportError("Tuning failed", message);
        emit tuningFailed(message);
    });
}

void MainWindow::tuneDialog() {
    int trials = 64;
    if (!dialogsSuppressed()) {
        bool ok = false;
        trials = QInputDialog::getInt(this, "Tune kernels",
                                      "Trials (measured candidates, all kernels):\n" + m_tuningDb,
                                      64, 1, 100000, 16, &ok);
        if (!ok) return;
    }
    startTuning(trials);
}

void MainWindow::startTuning(int trials) {
    if (!m_document || m_loadJobs->isRunning()) {
        log("Nothing to tune: open a model first.");
        return;
    }
    QDir().mkpath(QFileInfo(m_tuningDb).absolutePath());
    std::shared_ptr<const graph::Graph> graph = m_document->snapshot();
    const BuildSettings settings = buildSettings();
    m_tunePlot->clear();
    showPlot("tuning");
    log(QString("Tuning %1: %2 trials for %3, database %4")
            .arg(m_document->displayName())
            .arg(trials)
            .arg(settings.describe(), settings.records));
    // Points travel to the UI thread; those of a superseded or cancelled job are dropped.
    auto jobId = std::make_shared<int>(0);
    QPointer<MainWindow> self(this);
    auto onTrial = [self, jobId](const TunePoint& point) {
        if (!self) return;
        QMetaObject::invokeMethod(
            self.data(),
            [self, jobId, point]() {
                if (!self || self->m_tuneJobs->currentJob() != *jobId) return;
                self->m_tunePlot->addPoint(point.gflops, point.task);
                if (!point.error.isEmpty())
                    self->log(QString("Trial %1 (%2) failed: %3")
                                  .arg(point.trial)
                                  .arg(point.task, oneLine(point.error)));
                emit self->trialMeasured(point.gflops, point.bestGflops);
            },
            Qt::QueuedConnection);
    };
    *jobId = m_tuneJobs->start(
        "Tuning " + m_document->displayName(),
        [graph, settings, trials, onTrial](const JobContext& context) {
            return tuneModel(*graph, settings, trials, context, onTrial);
        },
        [this](const TuneSummary& r) {
            if (r.measured > 0) {
                noteBuildInputChanged("tuning records");
                m_kernelBuildKey.clear();  // the code views rebuild with the new records
            }
            log(QString("Tuning %1: %2 tasks, %3 trials measured (%4 in the database); estimated "
                        "latency %5 ms (default schedules %6 ms)")
                    .arg(r.cancelled ? "cancelled" : "finished")
                    .arg(r.tasks)
                    .arg(r.measured)
                    .arg(r.trials)
                    .arg(r.latencyMs, 0, 'f', 4)
                    .arg(r.defaultLatencyMs, 0, 'f', 4));
            emit tuningFinished(r.measured, r.cancelled);
        });
}

void MainWindow::showPlot(const QString& name) {
    raiseView("plots");
    QWidget* tab = name == "roofline" ? static_cast<QWidget*>(m_roofline)
                   : name == "tuning" ? static_cast<QWidget*>(m_tunePlot)
                                      : static_cast<QWidget*>(m_perfPlot);
    m_plotTabs->setCurrentWidget(tab);
}

void MainWindow::measurePeaks() {
    if (m_peakJobs->isRunning()) return;
    m_peakJobs->start(
        "Measuring machine peaks",
        [](const JobContext&) { return measureMachinePeaks(); },
        [this](MachinePeaks peaks) {
            // Measured again: keep the best of both (a busy machine measures low).
            if (m_peaks) peaks = bestOf(*m_peaks, peaks);
            m_peaks = std::make_unique<MachinePeaks>(peaks);
            QStringList roofs;
            for (const MemoryRoof& r : m_peaks->roofs)
                roofs << QString("%1 %2 GB/s").arg(r.name).arg(r.gbps, 0, 'f', 1);
            log(QString("Machine peaks (%1 FMA): %2 GFLOP/s on one core, %3 on %4 threads; %5")
                    .arg(m_peaks->isa)
                    .arg(m_peaks->gflopsOneCore, 0, 'f', 1)
                    .arg(m_peaks->gflops, 0, 'f', 1)
                    .arg(m_peaks->cores)
                    .arg(roofs.join(", ")));
            showCeilings();
        });
}

void MainWindow::showCeilings() {
    if (!m_peaks) {
        measurePeaks();
        return;
    }
    // The ceilings of the thread count the shown Run used.
    const int threads = m_lastRun ? m_lastRun->settings.threads : m_settingsBar->threads();
    QVector<QPair<QString, double>> roofs;
    for (const MemoryRoof& r : m_peaks->roofs) roofs.append({r.name, m_peaks->gbpsFor(r, threads)});
    m_roofline->setCeilings(m_peaks->gflopsFor(threads), roofs,
                            QString("Ceilings for %1 thread(s).\n").arg(threads) + m_peaks->method());
    // A point above the roof: the ceilings were measured while the machine
    // was busy, or a FLOP count is wrong. Measure once more to tell them apart.
    if (!m_roofline->kernelsAbove(0.0).isEmpty() && !m_peaksRemeasured) {
        m_peaksRemeasured = true;
        log("A kernel plots above the measured ceilings; measuring them again (the first "
            "measurement may have run on a busy machine).");
        measurePeaks();
    }
}
}  // namespace tessera::studio
