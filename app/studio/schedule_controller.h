// ScheduleController: the selected node's kernel. The code panes show the
// kernel that runs the node as the workspace's settings build it
// (kernel_code_job.h; built in a job, the build reused while nothing it reads
// changes), and the schedule editor edits the node's trace, which the
// workspace keeps for Run, Tune and Export.
#pragma once

#include <QObject>
#include <QStringList>
#include <QVector>
#include <map>
#include <memory>
#include <optional>

#include "app/studio/kernel_code_job.h"
#include "app/studio/tune_job.h"
#include "engine/driver/driver.h"

class QUndoStack;

namespace tessera::widgets {
class CodePanes;
}

namespace tessera::studio {

class JobRunner;
class ScheduleEditor;
class Workspace;

class ScheduleController : public QObject {
    Q_OBJECT
public:
    /// Schedule edits go on `undo` (Edit > Undo), with the graph edits.
    ScheduleController(Workspace* workspace, ScheduleEditor* editor, widgets::CodePanes* panes,
                       QUndoStack* undo = nullptr);

    /// Shows the kernel and schedule of `node` of the open model (-1 clears);
    /// with `kernel`, that kernel of the node (a name as the kernel table
    /// prints it: an int8 conv's node runs in an im2col and a GEMM kernel).
    void showNode(int node, const QString& kernel = QString());
    /// Shows the current node's kernel again (the settings changed).
    void refresh();
    /// The same, built again (the tuning records changed).
    void rebuild();
    /// "Tune the rest" of the shown kernel: its node and the pinned knobs
    /// (remembered for the kernel: pinned again when it is shown).
    TuneScope tuneScope();
    bool isCompiling() const;
    JobRunner* jobs() const { return m_jobs; }

signals:
    /// The panes show `kernel` (empty: why there is none, in the panes).
    void kernelShown(const QString& kernel);
    /// A title for the code panes: "Code - kernel K (nodes) · settings".
    void titleChanged(const QString& title);
    /// The open model's nodes the shown kernel runs.
    void kernelNodes(const QVector<int>& nodes);
    /// "Tune the rest" (the knob panel): tune the shown kernel with its pinned
    /// knobs kept; a hand schedule of it has given way to the tuned record.
    void tuneRestRequested(int trials, const TuneScope& scope);

private:
    void showKernel();
    /// After a schedule edit: only the shown kernel rebuilt with the editor's
    /// steps (driver::rebuild_kernel on the shown build), not the model.
    void showEditedKernel();
    void showCode(const KernelCode& code, const BuildSettings& settings);
    void showError(const QString& node, const QString& error);
    /// The schedule editor on the kernel `code` shows: its unscheduled loop
    /// IR with the trace the build replayed (default rule, record or hand).
    void showKernelSchedule(const KernelCode& code);
    /// The editor on the selected node alone (targets whose kernels are not traces).
    void showNodeAlone(const tir::PrimFunc& alone);
    void onStepsChanged();
    /// "kernel K (nodes) · source · N steps": the editor's title.
    QString editorTitle(const QString& source, size_t steps) const;
    /// Undo / redo of a schedule edit: `key`'s hand schedule becomes `steps`
    /// (none: the build's own), in the editor when it shows that kernel.
    void applyTrace(const QString& key, const std::optional<std::vector<schedule::Step>>& steps);
    /// What the scheduled build of the code views depends on.
    QString buildKey() const;

    Workspace* m_workspace;
    ScheduleEditor* m_editor;
    widgets::CodePanes* m_panes;
    JobRunner* m_jobs;
    QUndoStack* m_undo;
    bool m_replaying = false;  // applyTrace at work: its edit is no new undo step
    int m_node = -1;
    QString m_requestedKernel;  // showNode's kernel of the node ("": the node's own)
    QString m_traceNode;        // the node (or kernel name) the editor's steps are kept under
    QString m_loggedHandError;  // the last failing hand schedule reported
    /// Per kernel key: the knobs pinned for its last "Tune the rest", pinned
    /// again when the kernel is shown (after the tuning, or selected again).
    std::map<QString, std::map<std::string, int64_t>> m_pinned;
    std::vector<schedule::Step> m_builtSteps;  // the kernel's trace without a hand schedule
    QString m_builtSource;  // what scheduled it then ("default schedule", "tuned record")
    QString m_kernelLabel;  // "kernel K (nodes)": the editor's title, with the source
    QString m_kernel;       // shown in the panes
    QString m_title;
    KernelCode m_shown;  // the kernel the panes show, from a full build (no model: none)
    std::shared_ptr<const driver::CompiledModel> m_build;  // the code views' build
    QString m_buildKey;                                    // ... and what it was built from
};

}  // namespace tessera::studio
