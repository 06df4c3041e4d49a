// TuneController: the tuning job, its live plot and its summary.
#include "app/studio/tune_controller.h"

#include <QDir>
#include <QFileInfo>
#include <QInputDialog>
#include <QPointer>
#include <QStandardPaths>
#include <QStringList>

#include "app/studio/tune_job.h"
#include "app/studio/workspace.h"
#include "widgets/series_plot.h"

namespace tessera::studio {

namespace {

// "winograd.tile_cols=14, ..." or "the 27 steps of its hand schedule": one
// line for the log (a pinned trace's JSON filled the Messages view).
QString describePins(const autotune::KnobPins& pins) {
    if (!pins.steps.empty())
        return QString("the %1 steps of its hand schedule").arg(pins.steps.size());
    QStringList knobs;
    for (const auto& [knob, value] : pins.knobs)
        knobs << QString::fromStdString(knob) + "=" + QString::number(value);
    return knobs.isEmpty() ? QString("nothing") : knobs.join(", ");
}

}  // namespace

TuneController::TuneController(Workspace* workspace, QWidget* plotParent)
    : QObject(workspace),
      m_workspace(workspace),
      m_jobs(new JobRunner(this)),
      m_plot(new widgets::SeriesPlot("GFLOP/s per trial", plotParent)) {
    m_plot->setObjectName("TunePlot");
    if (m_workspace->tuningDatabase().isEmpty()) {
        const QString dir = QStandardPaths::writableLocation(QStandardPaths::AppDataLocation);
        m_workspace->setTuningDatabase(QDir(dir).filePath("tuning.jsonl"));
    }
    connect(m_jobs, &JobRunner::jobFailed, this, [this](int, const QString& message) {
        m_workspace->reportError("Tuning failed", message);
        emit failed(message);
    });
}

void TuneController::clearResult() { m_plot->clear(); }

bool TuneController::isTuning() const { return m_jobs->isRunning(); }

void TuneController::tuneDialog() {
    int trials = 64;
    if (!m_workspace->dialogsSuppressed()) {
        bool ok = false;
        trials = QInputDialog::getInt(
            m_workspace->dialogParent(), "Tune kernels",
            "Trials (measured candidates, all kernels):\n" + m_workspace->tuningDatabase(), 64, 1,
            100000, 16, &ok);
        if (!ok) return;
    }
    start(trials);
}

void TuneController::start(int trials, const TuneScope& scope) {
    const std::shared_ptr<ModelDocument>& document = m_workspace->document();
    if (!document || m_workspace->isLoading()) {
        m_workspace->log("Nothing to tune: open a model first.");
        return;
    }
    if (!m_workspace->confirmInputShapes([this, trials, scope] { start(trials, scope); })) return;
    const BuildSettings settings = m_workspace->buildSettings();
    QDir().mkpath(QFileInfo(settings.records).absolutePath());
    std::shared_ptr<const graph::Graph> graph = document->snapshot();
    m_plot->clear();
    emit started();
    m_workspace->log(QString("Tuning %1: %2 trials for %3, database %4")
                         .arg(scope.node.isEmpty() ? document->displayName()
                                                   : "the kernel of " + scope.node + " (pinned: " +
                                                         describePins(scope.pins) + ")")
                         .arg(trials)
                         .arg(settings.describe(), settings.records));
    // Points travel to the UI thread; those of a superseded or cancelled job are dropped.
    auto jobId = std::make_shared<int>(0);
    QPointer<TuneController> self(this);
    auto onTrial = [self, jobId](const TunePoint& point) {
        if (!self) return;
        QMetaObject::invokeMethod(
            self.data(),
            [self, jobId, point]() {
                if (!self || self->m_jobs->currentJob() != *jobId) return;
                self->m_plot->addPoint(point.gflops, point.task, point.task);
                if (!point.error.isEmpty())
                    self->m_workspace->log(QString("Trial %1 (%2) failed: %3")
                                               .arg(point.trial)
                                               .arg(point.task, oneLine(point.error)));
                emit self->trialMeasured(point.gflops, point.bestGflops);
            },
            Qt::QueuedConnection);
    };
    *jobId = m_jobs->start(
        "Tuning " + document->displayName(),
        [graph, settings, trials, onTrial, scope](const JobContext& context) {
            return tuneModel(*graph, settings, trials, context, onTrial, scope);
        },
        [this, trials](const TuneSummary& r) {
            if (r.measured > 0) m_workspace->noteBuildInputChanged("tuning records");
            m_workspace->log(
                QString("Tuning %1: %2, %3 search trials measured (%4 trials of these kernels "
                        "in the database; the re-measurements confirming each kernel's best are "
                        "recorded and plotted too); estimated latency %5 ms (default schedules "
                        "%6 ms)")
                    .arg(r.cancelled ? "cancelled" : "finished")
                    .arg(r.tasks == 1 ? QString("1 task") : QString("%1 tasks").arg(r.tasks))
                    .arg(r.measured)
                    .arg(r.trials)
                    .arg(r.latencyMs, 0, 'f', 4)
                    .arg(r.defaultLatencyMs, 0, 'f', 4) +
                (r.exhausted ? QString("; stopped before %1 trials: the search space has no "
                                       "unmeasured candidate left (the pinned steps or knobs "
                                       "leave few decisions)")
                                   .arg(trials)
                             : QString()));
            emit finished(r.measured, r.cancelled);
        });
}

}  // namespace tessera::studio
