// ScheduleController: the kernel code job, the build it reuses and the
// schedule editor's trace of the selected node.
#include "app/studio/schedule_controller.h"

#include <QUndoCommand>
#include <QUndoStack>

#include "app/studio/kernel_code_job.h"
#include "app/studio/knob_panel.h"
#include "app/studio/schedule_editor.h"
#include "app/studio/workspace.h"
#include "engine/autotune/task.h"
#include "engine/core/error.h"
#include "engine/schedule/schedule.h"
#include "engine/tir/structural_equal.h"
#include "widgets/code_panes.h"

namespace tessera::studio {

namespace {

// A kernel's node names, each once (an ONNX node imported as several nodes
// of its name: a QuantizeLinear's divide, round, add, clip and cast).
QString distinctNames(const QStringList& names) {
    QStringList once;
    for (const QString& n : names)
        if (!once.contains(n)) once << n;
    return once.join(", ");
}


using Steps = std::optional<std::vector<schedule::Step>>;

// One schedule edit on the undo stack: a kernel's hand schedule before and
// after (none: the build's own). Pushed after the edit took effect, so its
// first redo does nothing.
class ScheduleEditCommand : public QUndoCommand {
public:
    using Apply = std::function<void(const QString& key, const Steps& steps)>;
    ScheduleEditCommand(QString key, const QString& kernel, Steps before, Steps after, Apply apply)
        : QUndoCommand("schedule of " + kernel),
          m_key(std::move(key)),
          m_before(std::move(before)),
          m_after(std::move(after)),
          m_apply(std::move(apply)) {}
    void undo() override { m_apply(m_key, m_before); }
    void redo() override {
        if (m_pushed) m_apply(m_key, m_after);
        m_pushed = true;
    }

private:
    QString m_key;
    Steps m_before, m_after;
    Apply m_apply;
    bool m_pushed = false;
};

}  // namespace

ScheduleController::ScheduleController(Workspace* workspace, ScheduleEditor* editor,
                                       widgets::CodePanes* panes, QUndoStack* undo)
    : QObject(workspace),
      m_workspace(workspace),
      m_editor(editor),
      m_panes(panes),
      m_jobs(new JobRunner(this)),
      m_undo(undo) {
    connect(m_editor, &ScheduleEditor::stepsChanged, this, &ScheduleController::onStepsChanged);
    connect(m_editor->knobPanel(), &KnobPanel::tuneRestRequested, this, [this](int trials) {
        const TuneScope scope = tuneScope();
        if (scope.node.isEmpty()) return;
        if (m_workspace->traces().contains(scope.node)) {
            m_workspace->removeTrace(scope.node);
            m_workspace->log(
                scope.pins.steps.empty()
                    ? "The hand schedule of " + scope.node + " gives way to the tuned record."
                    : QString("The %1 steps of %2's hand schedule are pinned; the tuner "
                              "schedules the rest and its record keeps them.")
                          .arg(scope.pins.steps.size())
                          .arg(scope.node));
        }
        emit tuneRestRequested(trials, scope);
    });
    connect(m_editor, &ScheduleEditor::measured, this,
            [this](double, double ms, const QString& rate) {
                m_workspace->log(QString("Measured %1: %2 ms, %3")
                                     .arg(m_kernel.isEmpty() ? m_title : "kernel " + m_kernel)
                                     .arg(ms, 0, 'f', 4)
                                     .arg(rate));
            });
}

bool ScheduleController::isCompiling() const { return m_jobs->isRunning(); }

QString ScheduleController::buildKey() const { return m_workspace->buildInputsKey(); }

void ScheduleController::showNode(int node, const QString& kernel) {
    m_jobs->cancel();
    m_shown = KernelCode();
    const std::shared_ptr<ModelDocument>& document = m_workspace->document();
    m_node = document && node >= 0 && node < document->nodeCount() ? node : -1;
    m_requestedKernel = m_node >= 0 ? kernel : QString();
    if (m_node < 0) {
        m_panes->clear();
        m_kernel.clear();
        m_title = "Code";
        emit titleChanged(m_title);
        m_editor->setFunction({}, {}, 0);
        return;
    }
    m_traceNode.clear();
    m_editor->setFunction({}, {}, 0);  // until the kernel that runs the node is built
    showKernel();
}

void ScheduleController::showNodeAlone(const tir::PrimFunc& alone) {
    // The CUDA kernels are not traces yet: the editor replays the node's
    // trace on the node alone (lowered by the kernel code job).
    const std::shared_ptr<ModelDocument>& document = m_workspace->document();
    const graph::Node& n = document->graph().nodes[size_t(m_node)];
    m_traceNode = QString::fromStdString(n.name);
    m_builtSteps = {};
    if (!alone.defined()) {
        m_workspace->log("error: " + m_traceNode + " has no loop IR of its own to schedule");
        m_editor->setFunction({}, {}, 0);
        return;
    }
    // With Target CUDA, Measure would time this loop IR on the CPU: not what
    // the GPU runs (it showed a CPU time as the kernel's).
    ScheduleEditor::KernelMeasurer refuse =
        [](const schedule::Trace&, const std::function<bool(int)>&) -> driver::KernelMeasurement {
        TS_USER_FAIL() << "Measure times kernels on the CPU; with Target CUDA the kernel runs on "
                          "the GPU (Tune kernels measures it there, where a GPU is present)";
    };
    m_editor->setFunction(
        QString::fromStdString(n.op + " " + n.name + " (alone)"), alone,
        graph::node_flops(document->graph(), n), m_workspace->traces().value(m_traceNode),
        m_workspace->buildSettings().target == "cuda" ? refuse : ScheduleEditor::KernelMeasurer{});
}

void ScheduleController::showKernelSchedule(const KernelCode& code) {
    const driver::CompiledModel& model = *code.model;
    if (code.index < 0 || size_t(code.index) >= model.schedules.size()) {
        showNodeAlone(code.nodeAlone);
        return;
    }
    const driver::KernelSchedule& ks = model.schedules[size_t(code.index)];
    // Edits are kept under the key whose trace the build replays: the
    // anchor node's name, or the kernel's own where that name reaches
    // another kernel (the im2col and the GEMM of one int8 conv node).
    QString traceNode = QString::fromStdString(ks.traced_node.empty() ? ks.anchor : ks.traced_node);
    if (ks.traced_node.empty() && model.kernel_of(ks.anchor) != code.index) traceNode = code.kernel;
    // Measure: the kernel with the editor's trace, timed inside the model as
    // `run --profile` times it.
    std::shared_ptr<const graph::Graph> graph = m_workspace->document()->snapshot();
    const driver::BuildOptions options =
        m_workspace->buildSettings().buildOptions(m_workspace->kernelTraces());
    const std::string node = traceNode.toStdString();
    ScheduleEditor::KernelMeasurer measurer =
        [graph, options, node](const schedule::Trace& trace, const std::function<bool(int)>& each) {
            return driver::profile_in_model(*graph, options, node, trace, 20, each);
        };
    // A hand schedule that does not apply: the editor shows its steps (the
    // failing one marked), the panes the schedule the build fell back to.
    const bool handFailed = !ks.hand_error.empty();
    const std::vector<schedule::Step>& steps = handFailed ? ks.failed_hand.steps : ks.trace.steps;
    if (handFailed && m_loggedHandError != QString::fromStdString(ks.hand_error)) {
        m_loggedHandError = QString::fromStdString(ks.hand_error);
        m_workspace->log("warning: " + oneLine(m_loggedHandError) + "; the code panes show the " +
                         QString::fromStdString(ks.source) + " schedule");
    }
    // What the build chooses without a hand schedule.
    m_builtSteps = ks.source == "hand" ? ks.replaced.steps : ks.trace.steps;
    static const std::map<std::string, QString> sources = {{"default", "default schedule"},
                                                           {"record", "tuned record"},
                                                           {"hand", "hand schedule"},
                                                           {"none", "unscheduled"}};
    auto describe = [](const std::string& s) {
        const auto it = sources.find(s);
        return it == sources.end() ? QString::fromStdString(s) : it->second;
    };
    const QString sourceText = describe(ks.source);
    m_builtSource = describe(ks.source == "hand" ? ks.replaced_source : ks.source);
    m_kernelLabel = QString("kernel %1 (%2)").arg(code.kernel, distinctNames(code.nodes));
    const QString title = handFailed
                              ? QString(
                                    "%1 \u00b7 hand schedule (%2 steps) does not apply: Run uses "
                                    "the %3 (Export refuses until it is fixed or removed)")
                                    .arg(m_kernelLabel)
                                    .arg(steps.size())
                                    .arg(sourceText)
                              : editorTitle(sourceText, steps.size());
    const bool sameKernel = traceNode == m_traceNode && m_editor->steps() == steps &&
                            m_editor->base().defined() &&
                            tir::structural_equal(m_editor->base(), ks.unscheduled);
    m_traceNode = traceNode;
    // The hand schedule's loop tree stops where its steps fail; the kernel
    // runs the build's own schedule, which the loop tree shows instead (as
    // the Loop IR pane does).
    auto showRunning = [&]() {
        if (!handFailed) return;
        try {
            m_editor->setRunningInstead(ks.trace.apply(ks.unscheduled).func(), sourceText);
        } catch (const std::exception& e) {  // the build replayed it: not expected
            m_workspace->log("error: the " + sourceText + " of kernel " + code.kernel +
                             " does not replay: " + oneLine(QString::fromStdString(e.what())));
        }
    };
    if (sameKernel) {
        // The same steps on the same loop IR (an edit rebuilt, or a tuned
        // record that chose the default's steps): the editor keeps its state;
        // what scheduled the kernel and the record's knob values may be new.
        m_editor->setKernelMeasurer(measurer);
        m_editor->setTitle(title);
        showRunning();
        for (const auto& [knob, value] : ks.knobs)
            m_editor->knobPanel()->show(QString::fromStdString(knob), value);
        return;
    }
    m_editor->setFunction(title, ks.unscheduled, code.flops, steps, measurer);
    showRunning();
    // The rule's knobs, for pinning and "Tune the rest".
    const std::vector<int>& members = model.kernel_nodes[size_t(code.index)];
    const int anchor = members.empty() ? -1 : autotune::anchor_node(model.graph, members);
    if (anchor >= 0) {
        const graph::Node& an = model.graph.nodes[size_t(anchor)];
        m_editor->knobPanel()->setKnobs(topi::cpu_schedule_knobs(
            ks.unscheduled, an,
            autotune::default_rule_options(model.graph, an, model.llvm.threads)));
        // A tuned record's values, not the rule's defaults, where one schedules it.
        for (const auto& [knob, value] : ks.knobs)
            m_editor->knobPanel()->show(QString::fromStdString(knob), value);
        // The pins of this kernel's last "Tune the rest" stay pinned.
        if (const auto it = m_pinned.find(m_traceNode); it != m_pinned.end())
            for (const auto& [knob, value] : it->second)
                m_editor->knobPanel()->pin(QString::fromStdString(knob), value);
    }
}

TuneScope ScheduleController::tuneScope() {
    TuneScope scope;
    scope.node = m_traceNode;
    scope.pins = m_editor->knobPanel()->pins();
    m_pinned[m_traceNode] = scope.pins.knobs;
    // No knob pinned but a hand schedule made in the editor: its steps are
    // pinned, and the tuner schedules what they leave.
    if (scope.pins.knobs.empty() && m_workspace->traces().contains(m_traceNode))
        scope.pins.steps = m_editor->appliedTrace().steps;
    return scope;
}

void ScheduleController::rebuild() {
    m_buildKey.clear();
    m_build.reset();
    refresh();
}

void ScheduleController::refresh() {
    if (m_workspace->document() && !m_workspace->isLoading() && m_node >= 0) showKernel();
}

void ScheduleController::onStepsChanged() {
    const std::shared_ptr<ModelDocument>& document = m_workspace->document();
    if (!document || m_node < 0 || m_node >= document->nodeCount()) return;
    if (m_traceNode.isEmpty()) return;
    const std::vector<schedule::Step>& steps = m_editor->steps();
    const bool hand = m_workspace->traces().contains(m_traceNode);
    if (hand && m_workspace->traces().value(m_traceNode) == steps) return;  // shown again
    if (!hand && steps == m_builtSteps) return;  // the default or tuned trace, shown
    if (m_undo && !m_replaying)
        m_undo->push(new ScheduleEditCommand(
            m_traceNode, m_kernelLabel.isEmpty() ? m_traceNode : m_kernelLabel,
            hand ? Steps(m_workspace->traces().value(m_traceNode)) : Steps(),
            steps == m_builtSteps ? Steps() : Steps(steps),
            [this](const QString& key, const Steps& s) { applyTrace(key, s); }));
    if (steps == m_builtSteps)
        m_workspace->removeTrace(m_traceNode);  // edited back to what the build chooses
    else
        m_workspace->setTrace(m_traceNode, steps);
    m_editor->setTitle(
        editorTitle(steps == m_builtSteps ? m_builtSource : "hand schedule", steps.size()));
    m_workspace->noteBuildInputChanged("schedules");
    if (m_shown.model && m_shown.index >= 0 &&
        size_t(m_shown.index) < m_shown.model->schedules.size())
        showEditedKernel();  // only this kernel again, from the build shown
    else
        showKernel();  // the kernel that runs, with the new schedule
}

QString ScheduleController::editorTitle(const QString& source, size_t steps) const {
    return QString("%1 \u00b7 %2 \u00b7 %3 steps").arg(m_kernelLabel, source).arg(steps);
}

void ScheduleController::applyTrace(const QString& key, const Steps& steps) {
    m_replaying = true;
    if (key == m_traceNode && m_editor->base().defined()) {
        m_editor->setSteps(steps ? *steps : m_builtSteps);  // onStepsChanged keeps it
    } else {
        if (steps)
            m_workspace->setTrace(key, *steps);
        else
            m_workspace->removeTrace(key);
        m_workspace->noteBuildInputChanged("schedules");
    }
    m_replaying = false;
}

void ScheduleController::showEditedKernel() {
    m_jobs->cancel();
    const KernelCode shown = m_shown;
    schedule::Trace trace;
    trace.steps = m_editor->steps();
    const QString name = shown.node;
    m_jobs->start(
        "Compiling the edited kernel " + shown.kernel,
        [shown, trace](const JobContext& context) {
            try {
                return editedKernelCode(shown, trace, context);
            } catch (const UserError& e) {  // shown in the panes, not as a failed job
                KernelCode failed = shown;
                failed.error = QString::fromStdString(e.what());
                return failed;
            }
        },
        [this, name](const KernelCode& code) {
            if (!code.error.isEmpty()) {
                showError(name, code.error);
                return;
            }
            showCode(code, m_workspace->buildSettings());
        });
}

void ScheduleController::showError(const QString& node, const QString& error) {
    m_panes->clear();
    // Every pane says why it shows no code (none says "select a node" while one is).
    const QString why = "the kernel of node '" + node + "': " + oneLine(error) + "\n";
    for (const auto& [kind, comment] : {std::pair{QString("Loop IR"), QString("# ")},
                                        {QString("LLVM IR"), QString("; ")},
                                        {QString("Assembly"), QString("# ")},
                                        {QString("CUDA C"), QString("// ")},
                                        {QString("PTX"), QString("// ")}})
        m_panes->setText(kind, comment + why);
    m_kernel.clear();
    m_title = "Code - " + node;
    emit titleChanged(m_title);
    emit kernelShown(QString());
}

void ScheduleController::showCode(const KernelCode& code, const BuildSettings& settings) {
    // Diff against what the same kernel showed before (a schedule edit).
    const bool sameKernel = m_kernel == code.kernel;
    for (const auto& [kind, text] : {std::pair{QString("Loop IR"), code.loopIr},
                                     {QString("LLVM IR"), code.llvmIr},
                                     {QString("Assembly"), code.assembly},
                                     {QString("CUDA C"), code.cudaC},
                                     {QString("PTX"), code.ptx}}) {
        m_panes->setPrevious(kind, sameKernel ? m_panes->text(kind) : text);
        m_panes->setText(kind, text);
    }
    m_kernel = code.kernel;
    m_title = QString("Code - kernel %1 (%2) \u00b7 %3")
                  .arg(code.kernel, distinctNames(code.nodes), settings.describe());
    emit titleChanged(m_title);
    QVector<int> members;
    const std::shared_ptr<ModelDocument>& doc = m_workspace->document();
    for (const QString& n : code.nodes) {
        const int index = doc ? doc->graph().find_node(n.toStdString()) : -1;
        if (index >= 0) members << index;
    }
    emit kernelNodes(members);
    emit kernelShown(code.kernel);
}

void ScheduleController::showKernel() {
    m_jobs->cancel();
    const std::shared_ptr<ModelDocument>& document = m_workspace->document();
    if (!document || m_node < 0 || m_node >= document->nodeCount()) return;
    const QString name = QString::fromStdString(document->graph().nodes[size_t(m_node)].name);
    const graph::Node& shown = document->graph().nodes[size_t(m_node)];
    const QString op = QString::fromStdString(shown.op);
    // Among nodes of one name and op (an int8 conv's GEMM and its windows'
    // byte sums), the one of this output type.
    const QString outputType =
        shown.outputs.empty()
            ? QString()
            : QString::fromStdString(document->graph().values[size_t(shown.outputs[0])].type.str());
    const QString key = buildKey();
    std::shared_ptr<const driver::CompiledModel> cached = key == m_buildKey ? m_build : nullptr;
    std::shared_ptr<const graph::Graph> graph = document->snapshot();
    const BuildSettings settings = m_workspace->buildSettings();
    const KernelTraces traces = m_workspace->kernelTraces();
    const QString kernel = m_requestedKernel;
    emit titleChanged("Code - building the kernel of " + name + "...");
    m_jobs->start(
        "Building the kernel of " + name,
        [graph, settings, traces, name, op, outputType, kernel, cached](const JobContext& context) {
            try {
                return kernelCodeOf(*graph, settings, traces, name, op, outputType, kernel, cached,
                                    context);
            } catch (const UserError& e) {  // shown in the panes, not as a failed job
                KernelCode failed;
                failed.node = name;
                failed.error = QString::fromStdString(e.what());
                return failed;
            }
        },
        [this, key, name, settings, traces](const KernelCode& code) {
            if (!code.error.isEmpty()) {
                m_shown = KernelCode();
                showError(name, code.error);
                return;
            }
            m_build = code.model;
            m_buildKey = key;
            // Run counts the hand schedules that apply from it (no build of its own).
            if (code.model && code.model->target == "llvm")
                m_workspace->setHandScheduleCheck(key, checkHandSchedules(*code.model, traces));
            m_shown = code;
            showKernelSchedule(code);
            showCode(code, settings);
        });
}

}  // namespace tessera::studio
