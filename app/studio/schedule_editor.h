// ScheduleEditor: the schedule of the selected operator. Shows its loop nest
// (LoopTreeModel), applies primitives from buttons and drags (split, fuse,
// reorder, parallel, vectorize, unroll, bind, compute_at), keeps the trace as
// an editable list (ScheduleTraceModel: enable/disable, reorder, delete, edit
// factors), replays it live and reports the loop IR; an illegal step shows
// its ScheduleError inline and the trace is kept. "Measure" times the scheduled kernel in a job.
#pragma once

#include <QSet>
#include <QWidget>
#include <functional>
#include <vector>

#include "app/studio/job_runner.h"
#include "app/studio/loop_tree_model.h"
#include "engine/driver/measure_kernel.h"
#include "engine/schedule/trace.h"
#include "engine/tir/stmt.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QListView;
class QPushButton;
class QTreeView;

namespace tessera::widgets {
class SeriesPlot;
}

namespace tessera::studio {

class KnobPanel;
class ScheduleTraceModel;

/// A schedule step with the given fields (the rest empty).
inline schedule::Step makeStep(std::string op, std::vector<std::string> loops,
                               std::vector<int64_t> ints = {}, std::string block = {},
                               std::string key = {}) {
    schedule::Step s;
    s.op = std::move(op);
    s.loops = std::move(loops);
    s.ints = std::move(ints);
    s.block = std::move(block);
    s.key = std::move(key);
    return s;
}

class ScheduleEditor : public QWidget {
    Q_OBJECT
public:
    explicit ScheduleEditor(QWidget* parent = nullptr);
    /// The wrapping labels would make the Schedule dock's scroll area size
    /// the editor by its children's preferred heights (taller than the dock,
    /// its buttons out of view): its height for any width is its minimum.
    int heightForWidth(int) const override { return minimumSizeHint().height(); }

    /// Times a trace of the edited function as `tessera run --profile` times
    /// the kernel in the model (driver::profile_in_model), so that Measure
    /// reads what the profiler reads. `each(done)` returning false cancels.
    using KernelMeasurer = std::function<driver::KernelMeasurement(
        const schedule::Trace&, const std::function<bool(int done)>& each)>;

    /// Starts editing `func` (a kernel's unscheduled loop IR) with `steps`
    /// replayed on it; `flops` is used for GFLOP/s; `measurer`, when given,
    /// is what Measure calls (else it times the replayed function on its
    /// own). An undefined func clears the editor.
    void setFunction(const QString& title, const tir::PrimFunc& func, double flops,
                     const std::vector<schedule::Step>& steps = {}, KernelMeasurer measurer = {});
    void setKernelMeasurer(KernelMeasurer measurer) { m_measurer = std::move(measurer); }
    /// The title above the loop tree (setFunction's), e.g. after an edit
    /// made the steps a hand schedule.
    void setTitle(const QString& title);
    /// The unscheduled function the steps replay on.
    const tir::PrimFunc& base() const { return m_base; }

    /// Applies one new step (as if from a button); false with errorText() set
    /// if it is illegal (the step is then not added).
    bool addStep(const schedule::Step& step);
    /// Inserts `step` before position `index` (0..steps().size()) and
    /// replays; false with errorText() set when the step itself does not
    /// apply there (it is then not inserted). Later steps that no longer
    /// apply are marked as usual.
    bool insertStep(int index, const schedule::Step& step);
    /// Opens StepDialog pre-filled from the selection; the step goes after
    /// the selected trace row (at the end without one).
    void addStepDialog();
    /// Replaces the whole trace and replays it.
    void setSteps(const std::vector<schedule::Step>& steps);
    const std::vector<schedule::Step>& steps() const { return m_steps; }
    /// The steps that applied, as recorded (what the shown loop IR replays).
    const schedule::Trace& appliedTrace() const { return m_applied; }
    void setStepEnabled(int index, bool enabled);
    void removeStep(int index);
    void moveStep(int from, int to);

    /// The scheduled function after the last step that applied.
    const tir::PrimFunc& scheduled() const { return m_scheduled; }
    /// A hand schedule the build found not to apply (its kernel runs the
    /// build's own schedule, `running`, named by `source`): while the steps
    /// are the current ones and still fail, the loop tree shows `running`
    /// (the kernel the Loop IR pane shows), not the loops the steps left;
    /// the failing step stays marked in the trace. setFunction clears it.
    void setRunningInstead(const tir::PrimFunc& running, const QString& source);
    /// Whether the loop tree shows the kernel that runs instead of the steps' replay.
    bool showsRunningInstead() const;
    QString loopIr() const { return m_loopIr; }
    /// Empty when every enabled step applied; else the ScheduleError text.
    QString errorText() const { return m_error; }
    /// Index of the failing step, or -1.
    int errorStep() const { return m_errorStep; }
    /// Per step: what it undid without failing (a split of a parallel loop
    /// leaves serial parts), or empty.
    const QStringList& stepNotes() const { return m_notes; }

    LoopTreeModel* loopModel() const { return m_loopModel; }
    QTreeView* loopTree() const { return m_loopView; }
    QListView* traceList() const { return m_traceList; }
    ScheduleTraceModel* traceModel() const { return m_traceModel; }
    widgets::SeriesPlot* measurePlot() const { return m_plot; }
    /// The kernel's rule knobs with their pins and "Tune the rest".
    KnobPanel* knobPanel() const { return m_knobs; }
    JobRunner* jobs() const { return m_jobs; }

    /// Loops where compute_at(block, loop) or reverse_compute_at(block, loop)
    /// is legal on the current function (highlighted while the block is dragged).
    QSet<QString> legalComputeAtTargets(const QString& block) const;
    /// "compute_at" or "reverse_compute_at", whichever applies first for
    /// dropping `block` on `loop`; empty when neither does.
    std::string placementAt(const QString& block, const QString& loop) const;

public slots:
    /// Times the scheduled kernel in the background; adds a point to the plot.
    void measure();

signals:
    /// After every replay: the new loop IR and the one before the last step.
    void loopIrChanged(const QString& loopIr, const QString& previousLoopIr);
    void stepsChanged();
    /// `rate`: the throughput as the editor words it (throughputText).
    void measured(double gflops, double ms, const QString& rate);
    void measureFailed(const QString& message);

private:
    /// A step that was not applied: its reason in amber.
    void showRefusal(const QString& why);
    void buildUi();
    void replay();
    /// The loop tree (the replay, or the kernel that runs instead) and the message under the trace.
    void showLoops();
    void refreshTrace();
    QStringList selectedLoops() const;
    QString selectedBlock() const;
    void onLoopDropped(const QString& source, bool isBlock, const QString& target);
    void annotateSelected(const QString& op);

    tir::PrimFunc m_base, m_scheduled;
    tir::PrimFunc m_running;                     // setRunningInstead's function ...
    std::vector<schedule::Step> m_runningSteps;  // ... while the steps are these
    QString m_runningSource;
    QString m_note;             // the last replay's note on a step that undid something
    schedule::Trace m_applied;  // the steps that applied (what m_scheduled replays)
    KernelMeasurer m_measurer;
    double m_flops = 0;
    std::vector<schedule::Step> m_steps;
    QString m_loopIr, m_error;
    int m_errorStep = -1;
    QStringList m_notes;  // per step, see stepNotes()

    LoopTreeModel* m_loopModel;
    QTreeView* m_loopView;
    ScheduleTraceModel* m_traceModel;
    QListView* m_traceList;
    QLabel* m_title;
    QLabel* m_errorLabel;
    QLineEdit* m_factors;
    QComboBox* m_bindAxis;
    widgets::SeriesPlot* m_plot;
    KnobPanel* m_knobs;
    QPushButton* m_measureButton;
    JobRunner* m_jobs;
};

}  // namespace tessera::studio
