// ScheduleEditor: the widgets, the trace and its replay. The loop tree's
// selection and drops are in schedule_editor_loop_tree.cpp, Measure in
// schedule_editor_measure.cpp.
#include "app/studio/schedule_editor.h"

#include <QComboBox>
#include <QGridLayout>
#include <QHeaderView>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QListView>
#include <QPushButton>
#include <QSplitter>
#include <QTreeView>
#include <QVBoxLayout>
#include <algorithm>

#include "app/studio/knob_panel.h"
#include "app/studio/schedule_trace_model.h"
#include "app/studio/step_dialog.h"
#include "engine/schedule/query.h"
#include "engine/schedule/schedule.h"
#include "engine/tir/printer.h"
#include "widgets/series_plot.h"

namespace tessera::studio {
namespace {

// Clears the legal-target highlight when a drag ends, dropped or not.
class LoopTreeView : public QTreeView {
public:
    using QTreeView::QTreeView;

protected:
    void startDrag(Qt::DropActions actions) override {
        QTreeView::startDrag(actions);
        if (auto* m = qobject_cast<LoopTreeModel*>(model())) m->setLegalTargets({});
    }
};

// "-1, 32" or "4 8" -> {-1, 32}; false on anything else.
bool parseFactors(const QString& text, std::vector<int64_t>* out) {
    out->clear();
    for (const QString& part : QString(text).replace(',', ' ').split(' ', Qt::SkipEmptyParts)) {
        bool ok = false;
        out->push_back(part.toLongLong(&ok));
        if (!ok) return false;
    }
    return !out->empty();
}

// "step 3 (reorder): no loop named 'i2_3_0'": the step as the trace lists it
// (numbered from 1, disabled steps counted), the reason without the engine's
// own step prefix.
QString stepError(size_t index, const schedule::Step& step, const std::exception& e) {
    const auto* se = dynamic_cast<const schedule::ScheduleError*>(&e);
    return QString("step %1 (%2): %3")
        .arg(index + 1)
        .arg(QString::fromStdString(step.op))
        .arg(oneLine(QString::fromStdString(se ? se->reason() : std::string(e.what()))));
}

}  // namespace

ScheduleEditor::ScheduleEditor(QWidget* parent)
    : QWidget(parent),
      m_loopModel(new LoopTreeModel(this)),
      m_traceModel(new ScheduleTraceModel(this)),
      m_jobs(new JobRunner(this)) {
    buildUi();
    connect(m_loopModel, &LoopTreeModel::loopDropped, this, &ScheduleEditor::onLoopDropped);
    // While a block is dragged, the loops it may be computed at are highlighted.
    connect(
        m_loopModel, &LoopTreeModel::dragStarted, this,
        [this](const QString& source, bool isBlock) {
            m_loopModel->setLegalTargets(isBlock ? legalComputeAtTargets(source) : QSet<QString>());
        });
    setFunction({}, {}, 0);
}

namespace {

// The title in bold, free to wrap after each '_' and ',' (a fused kernel's
// name and nodes are one long word: unwrapped it widened the dock past the
// screen, hiding the step buttons).
// At most about two lines: a fused kernel's title lists all its nodes (13
// lines for a tree ensemble's, which squeezed the editor's controls out of
// view); the middle of a long one is elided, the whole title is the tooltip.
QString wrappableTitle(const QString& title) {
    constexpr int kHead = 100, kTail = 40;
    const QString shown = title.size() > kHead + kTail + 10
                              ? title.left(kHead) + QString(" \u2026 ") + title.right(kTail)
                              : title;
    QString html = shown.toHtmlEscaped();
    const QChar zeroWidthSpace(0x200B);
    html.replace("_", QString("_") + zeroWidthSpace).replace(",", QString(",") + zeroWidthSpace);
    return "<b>" + html + "</b>";
}

}  // namespace

void ScheduleEditor::buildUi() {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    m_title = new QLabel(this);
    m_title->setWordWrap(true);
    layout->addWidget(m_title);

    auto* splitter = new QSplitter(Qt::Vertical, this);
    m_loopView = new LoopTreeView(splitter);
    m_loopView->setModel(m_loopModel);
    m_loopView->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_loopView->setDragDropMode(QAbstractItemView::DragDrop);
    m_loopView->setDragEnabled(true);
    m_loopView->setAcceptDrops(true);
    m_loopView->setDropIndicatorShown(true);
    m_loopView->setAlternatingRowColors(true);
    m_loopView->header()->setSectionResizeMode(0, QHeaderView::Stretch);

    auto* controls = new QWidget(splitter);
    auto* grid = new QGridLayout(controls);
    grid->setContentsMargins(0, 0, 0, 0);
    m_factors = new QLineEdit(controls);
    m_factors->setPlaceholderText("factors, e.g. -1, 8");
    auto* split = new QPushButton("Split", controls);
    split->setToolTip("Split the selected loop by the factors (-1 = inferred)");
    auto* fuse = new QPushButton("Fuse", controls);
    fuse->setToolTip("Fuse the selected adjacent loops");
    auto* parallel = new QPushButton("Parallel", controls);
    auto* vectorize = new QPushButton("Vectorize", controls);
    auto* unroll = new QPushButton("Unroll", controls);
    m_bindAxis = new QComboBox(controls);
    m_bindAxis->addItems({"blockIdx.x", "blockIdx.y", "threadIdx.x", "threadIdx.y"});
    auto* bind = new QPushButton("Bind", controls);
    grid->addWidget(m_factors, 0, 0, 1, 2);
    grid->addWidget(split, 0, 2);
    grid->addWidget(fuse, 0, 3);
    grid->addWidget(parallel, 1, 0);
    grid->addWidget(vectorize, 1, 1);
    grid->addWidget(unroll, 1, 2);
    grid->addWidget(m_bindAxis, 2, 0, 1, 2);
    grid->addWidget(bind, 2, 2);

    m_traceList = new QListView(controls);
    m_traceList->setModel(m_traceModel);
    m_traceList->setDragDropMode(QAbstractItemView::InternalMove);
    m_traceList->setDefaultDropAction(Qt::MoveAction);
    m_traceList->setEditTriggers(QAbstractItemView::NoEditTriggers);  // double-click edits a split
    m_traceList->setToolTip(
        "The trace: uncheck to disable a step, drag to reorder, "
        "double-click a split to edit its factors, Delete to remove");
    auto* more = new QPushButton("Add step...", controls);
    more->setToolTip(
        "Any primitive (tile, compute_inline, cache_read/write, rfactor, "
        "decompose_reduction, annotate, pack_operand...), after the selected step");
    auto* remove = new QPushButton("Remove step", controls);
    m_measureButton = new QPushButton("Measure", controls);
    m_measureButton->setToolTip("Compile and time the scheduled kernel in the background");
    grid->addWidget(new QLabel("Trace", controls), 3, 0, 1, 4);
    grid->addWidget(m_traceList, 4, 0, 1, 4);
    grid->addWidget(more, 5, 0);
    grid->addWidget(remove, 5, 1);
    grid->addWidget(m_measureButton, 5, 2, 1, 2);
    m_errorLabel = new QLabel(controls);
    m_errorLabel->setObjectName("scheduleEditorMessage");
    m_errorLabel->setWordWrap(true);
    m_errorLabel->setStyleSheet("color: #b00020;");
    grid->addWidget(m_errorLabel, 6, 0, 1, 4);

    m_knobs = new KnobPanel(splitter);
    m_plot = new widgets::SeriesPlot("GFLOP/s", splitter);
    splitter->addWidget(m_loopView);
    splitter->addWidget(controls);
    splitter->addWidget(m_knobs);
    splitter->addWidget(m_plot);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 2);
    splitter->setStretchFactor(2, 1);
    splitter->setStretchFactor(3, 2);
    layout->addWidget(splitter, 1);

    connect(split, &QPushButton::clicked, this, [this]() {
        const QStringList loops = selectedLoops();
        std::vector<int64_t> factors;
        if (loops.size() != 1 || !parseFactors(m_factors->text(), &factors)) {
            m_errorLabel->setText("Split: select one loop and enter factors such as \"-1, 8\".");
            return;
        }
        addStep(makeStep("split", {loops[0].toStdString()}, factors));
    });
    connect(fuse, &QPushButton::clicked, this, [this]() {
        schedule::Step step = makeStep("fuse", {});
        for (const QString& l : selectedLoops()) step.loops.push_back(l.toStdString());
        addStep(step);
    });
    connect(parallel, &QPushButton::clicked, this, [this]() { annotateSelected("parallel"); });
    connect(vectorize, &QPushButton::clicked, this, [this]() { annotateSelected("vectorize"); });
    connect(unroll, &QPushButton::clicked, this, [this]() { annotateSelected("unroll"); });
    connect(bind, &QPushButton::clicked, this, [this]() {
        const QStringList loops = selectedLoops();
        if (loops.size() != 1) return;
        schedule::Step step = makeStep("bind", {loops[0].toStdString()});
        step.key = m_bindAxis->currentText().toStdString();
        addStep(step);
    });
    connect(more, &QPushButton::clicked, this, &ScheduleEditor::addStepDialog);
    connect(remove, &QPushButton::clicked, this, [this]() {
        if (m_traceList->currentIndex().isValid()) removeStep(m_traceList->currentIndex().row());
    });
    connect(m_measureButton, &QPushButton::clicked, this, &ScheduleEditor::measure);
    connect(m_traceModel, &ScheduleTraceModel::stepToggled, this, &ScheduleEditor::setStepEnabled);
    connect(m_traceModel, &ScheduleTraceModel::stepMoved, this, &ScheduleEditor::moveStep);
    connect(m_traceList, &QListView::doubleClicked, this, [this](const QModelIndex& index) {
        const int i = index.row();
        if (i < 0 || size_t(i) >= m_steps.size()) return;
        schedule::Step& step = m_steps[size_t(i)];
        if (step.op != "split") return;
        QStringList current;
        for (int64_t f : step.ints) current << QString::number(f);
        bool ok = false;
        const QString text = QInputDialog::getText(
            this, "Split factors", "Factors:", QLineEdit::Normal, current.join(", "), &ok);
        std::vector<int64_t> factors;
        if (ok && parseFactors(text, &factors)) {
            std::vector<schedule::Step> steps = m_steps;
            steps[size_t(i)].ints = factors;
            setSteps(steps);
        }
    });
    connect(m_jobs, &JobRunner::jobFailed, this, [this](int, const QString& message) {
        m_errorLabel->setText("Measure failed: " + message);
        emit measureFailed(message);
    });
}

void ScheduleEditor::setFunction(const QString& title, const tir::PrimFunc& func, double flops,
                                 const std::vector<schedule::Step>& steps,
                                 KernelMeasurer measurer) {
    m_jobs->cancel();
    m_base = func;
    m_running = {};
    m_runningSteps.clear();
    m_runningSource.clear();
    m_measurer = std::move(measurer);
    m_knobs->setKnobs({});  // the controller sets the kernel's rule knobs
    m_flops = flops;
    m_steps = steps;
    m_plot->clear();
    // The unit follows the kernel's first Measure; another kernel starts
    // from GFLOP/s (an int8 kernel's "GOP/s (int8)" stayed on a float one's plot).
    m_plot->setYLabel("GFLOP/s");
    m_title->setText(func.defined() ? wrappableTitle(title) : "Select an operator to schedule it.");
    m_title->setToolTip(func.defined() ? title : QString());
    replay();
}

void ScheduleEditor::setTitle(const QString& title) {
    if (!m_base.defined()) return;
    m_title->setText(wrappableTitle(title));
    m_title->setToolTip(title);
}

bool ScheduleEditor::addStep(const schedule::Step& step) {
    if (!m_base.defined()) return false;
    try {
        schedule::Schedule s(m_scheduled.defined() ? m_scheduled : m_base);
        s.apply(step);
        // Keep the recorded form (it names the loops the step created).
        schedule::Step recorded = s.trace().steps.empty() ? step : s.trace().steps.back();
        recorded.enabled = true;
        m_steps.push_back(recorded);
    } catch (const std::exception& e) {
        m_error = stepError(m_steps.size(), step, e);
        showRefusal(m_error);
        return false;
    }
    replay();
    return m_errorStep < 0;
}

void ScheduleEditor::showRefusal(const QString& why) {
    // Amber, whatever the label showed last (a Measure's result is plain).
    m_errorLabel->setStyleSheet("color: #9a6700;");
    m_errorLabel->setText("Not applied: " + why);
}

bool ScheduleEditor::insertStep(int index, const schedule::Step& step) {
    if (!m_base.defined() || index < 0 || size_t(index) > m_steps.size()) return false;
    try {
        schedule::Schedule s(m_base);  // the steps before it, then it
        for (int i = 0; i < index; ++i)
            if (m_steps[size_t(i)].enabled) s.apply(m_steps[size_t(i)]);
        s.apply(step);
        schedule::Step recorded = s.trace().steps.back();
        recorded.enabled = true;
        m_steps.insert(m_steps.begin() + index, recorded);
    } catch (const std::exception& e) {
        m_error = stepError(size_t(index), step, e);
        showRefusal(m_error);
        return false;
    }
    replay();
    return true;
}

void ScheduleEditor::addStepDialog() {
    StepDialog dialog(selectedBlock(), selectedLoops(), this);
    if (dialog.exec() != QDialog::Accepted) return;
    schedule::Step step;
    QString why;
    if (!dialog.step(&step, &why)) {
        showRefusal(why);
        return;
    }
    const int row = m_traceList->currentIndex().isValid() ? m_traceList->currentIndex().row() : -1;
    insertStep(row >= 0 ? row + 1 : int(m_steps.size()), step);
}

void ScheduleEditor::setSteps(const std::vector<schedule::Step>& steps) {
    m_steps = steps;
    replay();
}

void ScheduleEditor::setStepEnabled(int index, bool enabled) {
    if (index < 0 || size_t(index) >= m_steps.size()) return;
    m_steps[size_t(index)].enabled = enabled;
    replay();
}

void ScheduleEditor::removeStep(int index) {
    if (index < 0 || size_t(index) >= m_steps.size()) return;
    m_steps.erase(m_steps.begin() + index);
    replay();
}

void ScheduleEditor::moveStep(int from, int to) {
    const int n = int(m_steps.size());
    if (from < 0 || from >= n || to < 0 || to >= n || from == to) return;
    schedule::Step step = m_steps[size_t(from)];
    m_steps.erase(m_steps.begin() + from);
    m_steps.insert(m_steps.begin() + to, step);
    replay();
}

void ScheduleEditor::replay() {
    m_error.clear();
    m_errorStep = -1;
    m_notes = QStringList();
    for (size_t i = 0; i < m_steps.size(); ++i) m_notes << QString();
    QString note;  // the last step's note, shown when nothing failed
    QString previous;
    if (!m_base.defined()) {
        m_scheduled = {};
        m_loopIr.clear();
    } else {
        schedule::Schedule s(m_base);
        tir::PrimFunc before = s.func();
        for (size_t i = 0; i < m_steps.size(); ++i) {
            if (!m_steps[i].enabled) continue;
            const tir::PrimFunc current = s.func();
            try {
                const std::string dropped = schedule::kind_dropped_by(current, m_steps[i]);
                s.apply(m_steps[i]);
                before = current;
                if (!dropped.empty()) {
                    m_notes[int(i)] = QString::fromStdString(dropped);
                    note = QString("step %1 (%2): %3")
                               .arg(i + 1)
                               .arg(QString::fromStdString(m_steps[i].op))
                               .arg(m_notes[int(i)]);
                }
            } catch (const std::exception& e) {
                m_errorStep = int(i);
                m_error = stepError(i, m_steps[i], e);
                break;  // the later steps stay in the trace, not applied
            }
        }
        m_scheduled = s.func();
        m_applied = s.trace();
        m_loopIr = QString::fromStdString(tir::print(m_scheduled));
        previous = QString::fromStdString(tir::print(before));
    }
    m_note = note;
    showLoops();
    refreshTrace();
    m_measureButton->setEnabled(m_scheduled.defined());
    emit loopIrChanged(m_loopIr, previous);
    emit stepsChanged();
}

void ScheduleEditor::setRunningInstead(const tir::PrimFunc& running, const QString& source) {
    m_running = running;
    m_runningSteps = m_steps;
    m_runningSource = source;
    showLoops();
}

bool ScheduleEditor::showsRunningInstead() const {
    return m_errorStep >= 0 && m_running.defined() && m_steps == m_runningSteps;
}

void ScheduleEditor::showLoops() {
    // Keep the loop being worked on selected and in view: the last step's
    // first result (a split's outer loop...), else what was selected before.
    QStringList keep;
    if (!m_steps.empty() && !m_steps.back().outputs.empty())
        keep << QString::fromStdString(m_steps.back().outputs.front());
    keep << selectedLoops();
    // Steps that do not apply leave the kernel the build's own schedule: the
    // tree shows what runs (the Loop IR pane's kernel), not the serial loops
    // the replay stopped at.
    const bool running = showsRunningInstead();
    m_loopModel->setFunction(running ? m_running : m_scheduled);
    m_loopView->expandAll();
    for (const QString& name : keep) {
        const QModelIndex index = m_loopModel->indexOf(name);
        if (!index.isValid()) continue;
        m_loopView->selectionModel()->setCurrentIndex(
            index, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
        m_loopView->scrollTo(index, QAbstractItemView::PositionAtCenter);
        break;
    }
    // A failure in red; else what a step undid (a split parallel loop), in amber.
    m_errorLabel->setStyleSheet(m_error.isEmpty() ? "color: #9a6700;" : "color: #b00020;");
    m_errorLabel->setText(m_error.isEmpty() ? m_note
                          : running ? m_error + "\nThe loops above are the kernel that runs: the " +
                                          m_runningSource + " (the hand schedule does not apply)."
                                    : m_error);
}

void ScheduleEditor::refreshTrace() {
    m_traceModel->setTrace(m_steps, m_errorStep, m_error, m_notes);
}

}  // namespace tessera::studio
