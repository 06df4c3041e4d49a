// TuneController: Tune ▸ Tune kernels: autotunes the open model's kernels in
// a job (tune_job.h) with the workspace's settings, appends to its tuning
// database and plots GFLOP/s per trial with the running best as trials
// arrive; finished or failed follows.
#pragma once

#include <QObject>
#include <QString>

#include "app/studio/tune_job.h"

class QWidget;

namespace tessera::widgets {
class SeriesPlot;
}

namespace tessera::studio {

class JobRunner;
class Workspace;

class TuneController : public QObject {
    Q_OBJECT
public:
    /// The plot is made a child of `plotParent`; the database defaults to
    /// tuning.jsonl in the application's data folder.
    TuneController(Workspace* workspace, QWidget* plotParent);

    /// Tunes for `trials` measured candidates (all kernels together, or the
    /// one kernel of `scope`).
    void start(int trials, const TuneScope& scope = {});
    /// Asks for the trial count, then start.
    void tuneDialog();
    bool isTuning() const;
    /// Empties the plot (another model was opened: its trials are not this one's).
    void clearResult();
    JobRunner* jobs() const { return m_jobs; }
    widgets::SeriesPlot* plot() const { return m_plot; }

signals:
    /// A tuning job started (the window raises the plot).
    void started();
    void trialMeasured(double gflops, double bestGflops);
    void finished(int measured, bool cancelled);
    void failed(const QString& message);

private:
    Workspace* m_workspace;
    JobRunner* m_jobs;
    widgets::SeriesPlot* m_plot;
};

}  // namespace tessera::studio
