// Issue 9: Run uses the schedule editor's traces, a short tuning job plots
// its trials live (and Run then reads the tuning database), tuning cancels,
// the CUDA C pane (issue 18: the kernel the CUDA target builds), the graph's
// node context menu, progress while opening.
#include <gtest/gtest.h>
#include <qcustomplot.h>

#include <QApplication>
#include <QComboBox>
#include <QFile>
#include <QLabel>
#include <QMap>
#include <QMenu>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QUndoStack>
#include <cmath>

#include "app/studio/build_settings_bar.h"
#include "app/studio/knob_panel.h"
#include "app/studio/loop_tree_model.h"
#include "app/studio/main_window.h"
#include "app/studio/schedule_editor.h"
#include "engine/autotune/database.h"
#include "engine/autotune/space.h"
#include "tests/gui/studio_fixture.h"
#include "widgets/code_panes.h"
#include "widgets/graph_view.h"
#include "widgets/series_plot.h"

using tessera::studio::MainWindow;
using tessera::studio::makeStep;
using tessera::studio::RunResult;
using tessera::studio::ScheduleEditor;
using namespace tessera;
using namespace tessera::gui_test;

namespace {

using Studio = OpenStudio;

// The schedule editor's title as text (without the zero-width spaces it may
// wrap at).
QString editorTitle(ScheduleEditor* editor) {
    return editor->findChild<QLabel*>()->text().remove(QChar(0x200B));
}

// The loop IR of the run's kernel that covers only node `name`.
// The schedule editor on `node`, the studio's tuning records going to `db`.
ScheduleEditor* editorTuningInto(Studio& s, const QString& db, const std::string& node) {
    s.window.workspace()->setTuningDatabase(db);
    return editorOn(s.window, node);
}

// Selects node `index` in the graph and waits until the code panes show a kernel: its name.
QString selectAndWaitForKernelOf(Studio& s, int index) {
    QSignalSpy shown(&s.window, &MainWindow::kernelCodeShown);
    s.window.graphView()->setCurrentNode(-1);
    s.window.graphView()->setCurrentNode(index);
    if (!QTest::qWaitFor([&]() { return !shown.isEmpty() && !s.window.isCompilingCode(); }, 60000))
        return "(timeout)";
    return shown.last().first().toString();
}

QString kernelIrOf(const RunResult& run, const QString& name) {
    for (const auto& k : run.kernels)
        if (k.nodes.size() == 1 && k.label == name) return k.loopIr;
    return {};
}

// Lines of `ir` that mention `word`.
QStringList linesWith(const QString& ir, const QString& word) {
    QStringList out;
    for (const QString& line : ir.split('\n'))
        if (line.contains(word)) out << line.trimmed();
    return out;
}

}  // namespace

TEST(StudioRun, RunUsesTheEditedSchedule) {
    Studio s;
    ASSERT_TRUE(s.ok);
    const RunResult* before = s.run();
    ASSERT_NE(before, nullptr);
    // A kernel of one node (not fused with others) to schedule by hand.
    QString node;
    for (const auto& k : before->kernels)
        if (k.nodes.size() == 1 &&
            s.window.document()->graph().find_node(k.label.toStdString()) >= 0)
            node = k.label;
    ASSERT_FALSE(node.isEmpty());
    const QString defaultIr = kernelIrOf(*before, node);

    ScheduleEditor* editor = editorOn(s.window, node.toStdString());
    ASSERT_NE(editor, nullptr);
    // An odd factor the default schedules never pick, on the first loop that takes it.
    bool split = false;
    for (const auto& row : editor->loopModel()->rows())
        if (!split && row.kind != "block" && row.extent.toLongLong() >= 4)
            split = editor->addStep(makeStep("split", {row.name.toStdString()}, {-1, 3}));
    ASSERT_TRUE(split) << node.toStdString() << ": " << editor->errorText().toStdString();
    const QString inner = QString::fromStdString(editor->steps().back().outputs[1]);
    const QStringList expected = linesWith(editor->loopIr(), inner);
    ASSERT_FALSE(expected.isEmpty());
    ASSERT_EQ(s.window.traceOf(node), editor->steps());

    QString error;
    const RunResult* after = s.run(&error);
    ASSERT_NE(after, nullptr) << error.toStdString();
    const QString scheduledIr = kernelIrOf(*after, node);
    EXPECT_NE(scheduledIr, defaultIr);
    for (const QString& line : expected) {
        EXPECT_TRUE(scheduledIr.contains(line)) << line.toStdString() << "\n"
                                                << scheduledIr.toStdString();
        EXPECT_FALSE(defaultIr.contains(line)) << line.toStdString();
    }
    EXPECT_EQ(s.window.workspace()->kernelTraces().count(node.toStdString()), 1u);
}

// One node, two kernels (issue 19): an int8 conv's node runs in an im2col
// kernel and a GEMM kernel of its name. A double-click in the kernel table
// opens the kernel of that row, whichever of them the node alone reaches;
// its edits are kept under the kernel's name and schedule that kernel only.
TEST(StudioRun, TheKernelTableOpensEachKernelOfANodeAndEditsScheduleThatKernel) {
    Studio s(QString(TESSERA_SOURCE_DIR) + "/tests/data/onnx_models/qdq_conv/model.onnx");
    ASSERT_TRUE(s.ok);
    s.window.settingsBar()->setThreads(1);
    QString error;
    const RunResult* before = s.run(&error);
    ASSERT_NE(before, nullptr) << error.toStdString();
    // Kernels that share their first node's name with another kernel.
    QMap<QString, QStringList> byNode;
    for (const auto& k : before->kernels)
        if (!k.nodeNames.isEmpty()) byNode[k.nodeNames.first()] << k.kernel;
    // The 8-channel conv's (the stem's kernels, an integer GEMM too, have
    // only odd loop extents for the split below).
    QString node;
    for (auto it = byNode.begin(); it != byNode.end(); ++it)
        if (it.value().size() == 2 && it.key().startsWith("conv")) node = it.key();
    ASSERT_FALSE(node.isEmpty()) << "no node of qdq_conv's conv runs in two kernels";
    const QStringList kernels = byNode[node];
    std::map<QString, QString> defaultIr;
    for (const auto& k : before->kernels) defaultIr[k.kernel] = k.loopIr;

    QTableWidget* table = s.window.runs()->kernelTable();
    ScheduleEditor* editor = s.window.scheduleEditor();
    auto openRow = [&](const QString& kernel) {
        QSignalSpy shown(&s.window, &MainWindow::kernelCodeShown);
        for (int row = 0; row < table->rowCount(); ++row)
            if (table->item(row, 0)->text() == kernel) emit table->cellDoubleClicked(row, 0);
        return QTest::qWaitFor(
            [&]() {
                return !s.window.isCompilingCode() && !shown.isEmpty() &&
                       shown.last().first().toString() == kernel && editor->base().defined();
            },
            60000);
    };
    for (const QString& kernel : kernels) {
        ASSERT_TRUE(openRow(kernel)) << kernel.toStdString();
        // The panes and the editor show that kernel, as the run compiled it.
        EXPECT_EQ(s.window.codePanes()->text("Loop IR").trimmed().toStdString(),
                  defaultIr[kernel].trimmed().toStdString());
        EXPECT_TRUE(editorTitle(editor).contains(kernel)) << editorTitle(editor).toStdString();
    }
    // Each of the nodes of that name, selected in the graph, shows its own
    // kernel (the im2col node the im2col kernel, the GEMM node the GEMM's).
    std::vector<int> named;
    QStringList bySelection;
    const auto& nodes = s.window.document()->graph().nodes;
    for (size_t i = 0; i < nodes.size(); ++i)
        if (QString::fromStdString(nodes[i].name) == node) named.push_back(int(i));
    std::map<std::string, QString> byOp;
    for (int i : named) {
        bySelection << selectAndWaitForKernelOf(s, i);
        byOp[nodes[size_t(i)].op] = bySelection.back();
    }
    ASSERT_TRUE(byOp.count("nn.im2col_int8x4") && byOp.count("nn.matmul_i8u8"))
        << bySelection.join(", ").toStdString();
    EXPECT_NE(byOp["nn.im2col_int8x4"], byOp["nn.matmul_i8u8"]);
    for (const QString& k : bySelection) EXPECT_TRUE(kernels.contains(k)) << k.toStdString();
    // An edit of the kernel the name alone does not reach (the hand traces'
    // node of that name is in the other one), opened from the table.
    const int byName = s.window.document()->graph().find_node(node.toStdString());
    const QString byNodeKernel =
        bySelection[int(std::find(named.begin(), named.end(), byName) - named.begin())];
    const QString other = kernels[0] == byNodeKernel ? kernels[1] : kernels[0];
    ASSERT_TRUE(openRow(other));
    bool split = false;
    for (const auto& row : editor->loopModel()->rows())
        if (!split && row.kind != "block" && row.extent.toLongLong() >= 4 &&
            row.extent.toLongLong() % 2 == 0)
            split = editor->addStep(makeStep("split", {row.name.toStdString()}, {-1, 2}));
    ASSERT_TRUE(split) << editor->errorText().toStdString();
    // The title says what the steps now are.
    const QString title = editorTitle(editor);
    EXPECT_TRUE(title.contains("hand schedule") && title.contains(other)) << title.toStdString();
    const QString inner = QString::fromStdString(editor->steps().back().outputs[1]);
    EXPECT_EQ(s.window.workspace()->kernelTraces().count(other.toStdString()), 1u);
    EXPECT_EQ(s.window.workspace()->kernelTraces().count(node.toStdString()), 0u);

    const RunResult* after = s.run(&error);
    ASSERT_NE(after, nullptr) << error.toStdString();
    for (const auto& k : after->kernels) {
        if (k.kernel == other) EXPECT_TRUE(k.loopIr.contains(inner)) << k.loopIr.toStdString();
        if (k.kernel == byNodeKernel) EXPECT_EQ(k.loopIr, defaultIr[byNodeKernel]);
    }
}

TEST(StudioTune, ShortTuningJobPlotsTrialsAsTheyArrive) {
    QTemporaryDir dir;
    Studio s;
    ASSERT_TRUE(s.ok);
    const QString db = dir.filePath("tuning.jsonl");
    s.window.workspace()->setTuningDatabase(db);
    int pointsWhileRunning = 0;
    QObject::connect(s.window.tuning(), &tessera::studio::TuneController::trialMeasured, &s.window, [&]() {
        if (s.window.tuning()->isTuning()) ++pointsWhileRunning;
    });
    QSignalSpy points(s.window.tuning(), &tessera::studio::TuneController::trialMeasured);
    QSignalSpy finished(s.window.tuning(), &tessera::studio::TuneController::finished);
    QSignalSpy failed(s.window.tuning(), &tessera::studio::TuneController::failed);
    s.window.tuning()->start(6);
    EXPECT_TRUE(s.window.tuning()->isTuning());  // the UI thread did not wait
    ASSERT_TRUE(QTest::qWaitFor([&]() { return finished.count() + failed.count() > 0; }, 60000));
    ASSERT_EQ(failed.count(), 0) << failed.first().first().toString().toStdString();
    EXPECT_EQ(finished.first().at(0).toInt(), 6);
    EXPECT_EQ(points.count(), 6);
    EXPECT_GT(pointsWhileRunning, 0);  // live, not all at the end
    EXPECT_EQ(s.window.tuning()->plot()->pointCount(), 6);
    double best = 0;
    for (const auto& p : points) best = std::max(best, p.at(0).toDouble());
    EXPECT_GT(best, 0);
    EXPECT_DOUBLE_EQ(s.window.tuning()->plot()->best(), best);
    // Every plotted trial is a record of the database.
    autotune::Database records(db.toStdString(), /*read_only=*/true);
    int trials = 0;
    for (const auto& r : records.records()) trials += r.baseline ? 0 : 1;
    EXPECT_EQ(trials, 6);
    // Run builds with the tuned schedules.
    QString error;
    ASSERT_NE(s.run(&error), nullptr) << error.toStdString();
    // Another model opened: the plot holds none of the old model's trials.
    QSignalSpy loaded(&s.window, &MainWindow::modelLoaded);
    s.window.openModel(exampleModel());
    ASSERT_TRUE(loaded.wait(60000));
    EXPECT_EQ(s.window.tuning()->plot()->pointCount(), 0);
}

// The tuning plot's best-so-far line is per kernel: a whole-model tune
// measures one kernel after another, and a best of one kernel followed by a
// trial of another means nothing.
TEST(StudioTune, TheTuningPlotsBestSoFarLineRestartsForEachKernel) {
    QTemporaryDir dir;
    Studio s;
    ASSERT_TRUE(s.ok);
    s.window.workspace()->setTuningDatabase(dir.filePath("tuning.jsonl"));
    QString error;
    ASSERT_TRUE(s.tune(12, &error)) << error.toStdString();
    const tessera::widgets::SeriesPlot* plot = s.window.tuning()->plot();
    ASSERT_GT(plot->pointCount(), 0);
    QSet<QString> kernels;
    std::map<QString, double> best;
    const auto points = plot->plot()->graph(0)->data();
    ASSERT_EQ(points->size(), plot->pointCount());
    for (int i = 0; i < plot->pointCount(); ++i) {
        const QString kernel = plot->seriesAt(i);
        kernels.insert(kernel);
        best[kernel] = std::max(best[kernel], points->at(i)->value);
        EXPECT_DOUBLE_EQ(plot->bestAt(i), best[kernel]) << i << " " << kernel.toStdString();
    }
    ASSERT_GE(kernels.size(), 2);  // several kernels, one after another
    // No segment of the line joins two kernels' trials.
    const auto line = plot->plot()->graph(1)->data();
    for (int i = 0; i + 1 < line->size(); ++i) {
        const double a = line->at(i)->value, b = line->at(i + 1)->value;
        if (std::isnan(a) || std::isnan(b)) continue;
        EXPECT_EQ(plot->seriesAt(int(line->at(i)->key) - 1),
                  plot->seriesAt(int(line->at(i + 1)->key) - 1));
    }
}

TEST(StudioTune, CancelStopsTuningAndDropsLaterPoints) {
    QTemporaryDir dir;
    Studio s;
    ASSERT_TRUE(s.ok);
    s.window.workspace()->setTuningDatabase(dir.filePath("tuning.jsonl"));
    QSignalSpy points(s.window.tuning(), &tessera::studio::TuneController::trialMeasured);
    QSignalSpy finished(s.window.tuning(), &tessera::studio::TuneController::finished);
    s.window.tuning()->start(100000);
    ASSERT_TRUE(QTest::qWaitFor([&]() { return points.count() > 0; }, 30000));
    s.window.cancelJobs();
    EXPECT_FALSE(s.window.tuning()->isTuning());
    const int shown = s.window.tuning()->plot()->pointCount();
    QTest::qWait(300);
    EXPECT_EQ(s.window.tuning()->plot()->pointCount(), shown);
    EXPECT_EQ(finished.count(), 0);
}

TEST(StudioCode, CudaPaneShowsTheFusedKernelAsTheCudaTargetBuildsIt) {
    Studio s;
    ASSERT_TRUE(s.ok);
    s.window.graphView()->setCurrentNode(s.window.document()->graph().find_node("relu1"));
    widgets::CodePanes* panes = s.window.codePanes();
    ASSERT_TRUE(QTest::qWaitFor([&]() { return !panes->text("CUDA C").isEmpty(); }, 30000));
    const QString cuda = panes->text("CUDA C");
    EXPECT_TRUE(cuda.contains("__global__")) << cuda.toStdString();
    EXPECT_TRUE(cuda.contains("blockIdx.x")) << cuda.toStdString();
    EXPECT_TRUE(cuda.contains("threadIdx.x")) << cuda.toStdString();
    // relu1 runs fused with conv1 on the GPU too: one kernel for both.
    EXPECT_TRUE(cuda.contains("fused_conv1_relu1")) << cuda.toStdString();
}

TEST(StudioGraph, NodeContextMenuActsOnTheNodeUnderTheMouse) {
    Studio s;
    ASSERT_TRUE(s.ok);
    ASSERT_TRUE(QTest::qWaitFor([&]() { return !s.window.graphView()->isLayoutPending(); }, 30000));
    const int relu = s.window.document()->graph().find_node("relu1");
    widgets::GraphView* view = s.window.graphView();
    widgets::GraphNodeItem* item = nullptr;
    for (auto* it : view->nodeItems())
        if (it->nodeIndex() == relu) item = it;
    ASSERT_NE(item, nullptr);
    view->centerOn(item);
    EXPECT_EQ(view->nodeAt(view->mapFromScene(item->sceneBoundingRect().center())), relu);
    EXPECT_EQ(view->nodeAt(QPoint(-50, -50)), -1);

    std::unique_ptr<QMenu> menu(s.window.edits()->nodeContextMenu(relu));
    QStringList texts;
    QAction* remove = nullptr;
    for (QAction* a : menu->actions()) {
        if (a->isSeparator()) continue;
        texts << a->text().remove('&');
        if (a->text().remove('&') == "Delete") remove = a;
    }
    EXPECT_EQ(texts, (QStringList{"Show loop IR", "Schedule...", "Rename...", "Replace op type...",
                                  "Insert node after...", "Delete"}));
    ASSERT_NE(remove, nullptr);
    const int nodes = s.window.document()->nodeCount();
    QSignalSpy changed(&s.window, &MainWindow::graphChanged);
    remove->trigger();
    ASSERT_TRUE(changed.wait(30000));
    EXPECT_EQ(s.window.document()->nodeCount(), nodes - 1);
    EXPECT_LT(s.window.document()->graph().find_node("relu1"), 0);
    EXPECT_EQ(s.window.undoStack()->count(), 1);
}

TEST(StudioWindow, OpeningShowsDeterminateProgressThroughImportAndLayout) {
    MainWindow window;
    window.setDialogsSuppressed(true);
    window.show();
    QProgressBar* bar = window.progressBar();
    QList<int> values;
    QList<int> maxima;
    QObject::connect(bar, &QProgressBar::valueChanged, bar, [&](int v) {
        values << v;
        maxima << bar->maximum();
    });
    QSignalSpy loaded(&window, &MainWindow::modelLoaded);
    window.openModel(exampleModel());
    EXPECT_TRUE(bar->isVisible());
    ASSERT_TRUE(loaded.wait(60000));
    ASSERT_TRUE(QTest::qWaitFor([&]() { return !window.graphView()->isLayoutPending(); }, 30000));
    // Import stages (5 %, 60 %) then back to idle; never a busy indicator.
    EXPECT_TRUE(values.contains(50)) << values.size();
    EXPECT_TRUE(values.contains(600));
    for (int m : maxima) EXPECT_EQ(m, 1000);
    EXPECT_FALSE(bar->isVisible());
    EXPECT_EQ(bar->value(), 0);
}

TEST(StudioTune, TuneTheRestKeepsThePinnedKnobsAndTheRecordBecomesTheKernelsSchedule) {
    QTemporaryDir dir;
    Studio s;
    ASSERT_TRUE(s.ok);
    const QString db = dir.filePath("tuning.jsonl");
    ScheduleEditor* editor = editorTuningInto(s, db, "relu2");
    ASSERT_NE(editor, nullptr);
    tessera::studio::KnobPanel* knobs = editor->knobPanel();
    ASSERT_GT(knobs->table()->rowCount(), 1) << "the kernel's rule shows no knobs";
    // Pin the first knob with a choice at its second value.
    QString pinnedKnob;
    int64_t pinnedValue = 0;
    for (int i = 0; i < knobs->table()->rowCount() && pinnedKnob.isEmpty(); ++i) {
        auto* values = static_cast<QComboBox*>(knobs->table()->cellWidget(i, 2));
        if (values->count() < 2) continue;
        pinnedKnob = knobs->table()->item(i, 1)->text();
        pinnedValue = values->itemData(1).toLongLong();
    }
    ASSERT_FALSE(pinnedKnob.isEmpty());
    ASSERT_TRUE(knobs->pin(pinnedKnob, pinnedValue));
    EXPECT_EQ(knobs->pins().knobs.at(pinnedKnob.toStdString()), pinnedValue);
    QSignalSpy finished(s.window.tuning(), &tessera::studio::TuneController::finished);
    QSignalSpy failed(s.window.tuning(), &tessera::studio::TuneController::failed);
    // Its trials go on the editor's plot as they come (it stayed empty).
    int plotted = 0;
    QObject::connect(s.window.tuning(), &tessera::studio::TuneController::trialMeasured, editor,
                     [&]() { plotted = std::max(plotted, editor->measurePlot()->pointCount()); });
    emit knobs->tuneRestRequested(6);
    ASSERT_TRUE(QTest::qWaitFor([&]() { return finished.count() + failed.count() > 0; }, 120000));
    ASSERT_EQ(failed.count(), 0) << failed.first().first().toString().toStdString();
    EXPECT_GT(plotted, 0);
    // Every candidate kept the pinned value.
    autotune::Database records(db.toStdString(), /*read_only=*/true);
    ASSERT_FALSE(records.records().empty());
    for (const auto& r : records.records()) {
        const autotune::Candidate c = autotune::Candidate::from_json(r.decisions);
        ASSERT_TRUE(c.knobbed) << r.decisions;
        EXPECT_EQ(c.knobs.at(pinnedKnob.toStdString()), pinnedValue) << r.decisions;
    }
    // The editor shows the kernel again, now scheduled by the tuned record.
    ASSERT_TRUE(QTest::qWaitFor(
        [&]() {
            return s.window.schedules()->isCompiling() == false && editor->base().defined() &&
                   editor->findChild<QLabel*>() != nullptr &&
                   editorTitle(editor).contains("tuned record");
        },
        60000))
        << editorTitle(editor).toStdString();
    // Its knob panel shows the record's values (the pinned one among them), not the rule's defaults,
    // and the knob pinned for the tuning stays pinned (to tune again).
    EXPECT_EQ(knobs->shown(pinnedKnob), pinnedValue);
    EXPECT_EQ(knobs->pins().knobs.count(pinnedKnob.toStdString()), 1u);
}

// Every knob pinned at the rule's own value: the one candidate is the
// default configuration, so the tuned record has the default's steps. The
// editor, which keeps its state for the same steps, still says that a tuned
// record schedules the kernel now (it went on saying "default schedule").
TEST(StudioTune, ARecordWithTheDefaultsStepsStillRetitlesTheEditor) {
    QTemporaryDir dir;
    Studio s;
    ASSERT_TRUE(s.ok);
    ScheduleEditor* editor = editorTuningInto(s, dir.filePath("tuning.jsonl"), "relu2");
    ASSERT_NE(editor, nullptr);
    ASSERT_TRUE(QTest::qWaitFor([&]() { return !s.window.isCompilingCode(); }, 60000));
    auto* title = editor->findChild<QLabel*>();
    ASSERT_NE(title, nullptr);
    ASSERT_TRUE(title->text().contains("default schedule")) << title->text().toStdString();
    const std::vector<schedule::Step> before = editor->steps();
    tessera::studio::KnobPanel* knobs = editor->knobPanel();
    ASSERT_GT(knobs->table()->rowCount(), 0);
    for (int i = 0; i < knobs->table()->rowCount(); ++i) {
        auto* values = static_cast<QComboBox*>(knobs->table()->cellWidget(i, 2));
        ASSERT_TRUE(knobs->pin(knobs->table()->item(i, 1)->text(), values->itemData(0).toLongLong()));
    }
    QSignalSpy finished(s.window.tuning(), &tessera::studio::TuneController::finished);
    QSignalSpy failed(s.window.tuning(), &tessera::studio::TuneController::failed);
    emit knobs->tuneRestRequested(4);
    ASSERT_TRUE(QTest::qWaitFor([&]() { return finished.count() + failed.count() > 0; }, 120000));
    ASSERT_EQ(failed.count(), 0) << failed.first().first().toString().toStdString();
    ASSERT_TRUE(QTest::qWaitFor([&]() { return title->text().contains("tuned record"); }, 60000))
        << title->text().toStdString();
    EXPECT_EQ(editor->steps(), before);  // the same steps, the editor's state kept
}

// Hybrid with steps: a hand schedule made in the editor, no knob pinned,
// "Tune the rest": its steps are pinned, every record starts with them, and
// the kernel then runs the tuned record that keeps them.
TEST(StudioTune, TuneTheRestKeepsTheHandStepsAndSchedulesWhatTheyLeave) {
    QTemporaryDir dir;
    Studio s;
    ASSERT_TRUE(s.ok);
    const QString db = dir.filePath("tuning.jsonl");
    ScheduleEditor* editor = editorTuningInto(s, db, "relu2");
    ASSERT_NE(editor, nullptr);
    ASSERT_TRUE(QTest::qWaitFor([&]() { return !s.window.isCompilingCode(); }, 60000));
    editor->setSteps({});
    schedule::Schedule probe(editor->scheduled());
    const std::string loop = probe.get_loops(probe.blocks().back()).front();
    ASSERT_TRUE(editor->addStep(tessera::studio::makeStep("split", {loop}, {-1, 2})))
        << editor->errorText().toStdString();
    ASSERT_TRUE(QTest::qWaitFor([&]() { return s.window.workspace()->traces().size() > 0; }, 30000));
    const std::vector<schedule::Step> hand = editor->appliedTrace().steps;
    ASSERT_EQ(hand.size(), 1u);
    EXPECT_TRUE(editor->knobPanel()->pins().knobs.empty());
    QSignalSpy finished(s.window.tuning(), &tessera::studio::TuneController::finished);
    QSignalSpy failed(s.window.tuning(), &tessera::studio::TuneController::failed);
    emit editor->knobPanel()->tuneRestRequested(6);
    EXPECT_FALSE(editor->knobPanel()->tuneButton()->isEnabled());  // busy, no second job
    EXPECT_EQ(editor->knobPanel()->tuneButton()->text(), "Tuning...");
    ASSERT_TRUE(QTest::qWaitFor([&]() { return finished.count() + failed.count() > 0; }, 120000));
    ASSERT_EQ(failed.count(), 0) << failed.first().first().toString().toStdString();
    EXPECT_EQ(editor->knobPanel()->tuneButton()->text(), "Tune the rest");
    autotune::Database records(db.toStdString(), /*read_only=*/true);
    ASSERT_FALSE(records.records().empty());
    for (const auto& r : records.records()) {
        ASSERT_FALSE(r.trace.steps.empty()) << r.decisions;
        EXPECT_EQ(r.trace.steps.front().op, "split") << r.trace.to_json();
        EXPECT_EQ(r.trace.steps.front().loops, hand.front().loops) << r.trace.to_json();
    }
}
