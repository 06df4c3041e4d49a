// Studio behaviours of issue 9: graph edits with undo/redo (menu and the
// properties panel), refused edits, search, save as ONNX, the schedule editor
// (steps, illegal steps, disable/remove, drag-reorder, Measure), code panes.
#include <gtest/gtest.h>
#include <qcustomplot.h>

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QDockWidget>
#include <QLabel>
#include <QLineEdit>
#include <QListView>
#include <QMimeData>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTabBar>
#include <QTemporaryDir>
#include <QTreeView>
#include <QTreeWidget>
#include <QUndoStack>
#include <QWheelEvent>

#include "app/studio/edit_command.h"
#include "app/studio/loop_tree_model.h"
#include "app/studio/main_window.h"
#include "app/studio/properties_model.h"
#include "app/studio/schedule_editor.h"
#include "app/studio/schedule_trace_model.h"
#include "app/studio/step_dialog.h"
#include "engine/driver/driver.h"
#include "engine/graph/graph_edit.h"
#include "engine/graph/passes/pass_manager.h"
#include "engine/schedule/schedule.h"
#include "engine/tir/printer.h"
#include "engine/tir/structural_equal.h"
#include "tests/gui/gui_test_util.h"
#include "tests/gui/studio_fixture.h"
#include "widgets/code_panes.h"
#include "widgets/code_view.h"
#include "widgets/graph_view.h"
#include "widgets/roofline_plot.h"
#include "widgets/series_plot.h"

using tessera::studio::MainWindow;
using tessera::studio::ScheduleEditor;
using tessera::studio::makeEdit;
using tessera::studio::makeStep;
using namespace tessera;
using namespace tessera::gui_test;

namespace {

struct Studio {
    MainWindow window;
    Studio() {
        window.setDialogsSuppressed(true);
        window.show();
        QSignalSpy loaded(&window, &MainWindow::modelLoaded);
        window.openModel(exampleModel());
        ok = loaded.wait(60000);
    }
    bool ok = false;
    const graph::Graph& graph() const { return window.document()->graph(); }
    std::string outShape(const std::string& node) const {
        const auto& g = graph();
        return g.values[g.nodes[g.find_node(node)].outputs[0]].type.str();
    }
    /// Applies an edit and waits until the graph is shown again.
    bool edit(const graph::GraphEdit& e) {
        QSignalSpy changed(&window, &MainWindow::graphChanged);
        if (!window.edits()->apply(e)) return false;
        return changed.wait(30000);
    }
    bool waitChanged(const std::function<void()>& action) {
        QSignalSpy changed(&window, &MainWindow::graphChanged);
        action();
        return changed.wait(30000);
    }
    void select(const std::string& node) {
        window.graphView()->setCurrentNode(graph().find_node(node));
    }
};

// The Value cell of the Properties dock's row `key`.
QModelIndex findProperty(studio::PropertiesModel* model, const QString& key) {
    return model->find(key);
}

}  // namespace

TEST(StudioEdit, EditUndoRedoKeepTheGraphAndViewInStep) {
    Studio s;
    ASSERT_TRUE(s.ok);
    const std::string original = graph::print(s.graph());
    ASSERT_TRUE(s.edit(makeEdit(graph::GraphEdit::Kind::SetAttribute, "conv1", "strides",
                        std::vector<int64_t>{2, 2})));
    EXPECT_EQ(s.outShape("pool1"), "Tensor[(1, 8, 8, 8), float32]");
    ASSERT_TRUE(s.edit(makeEdit(graph::GraphEdit::Kind::DeleteNode, "relu1")));
    EXPECT_EQ(s.window.graphView()->nodeItems().size(), s.window.document()->nodeCount());
    EXPECT_EQ(s.window.document()->edits().size(), 2u);
    EXPECT_EQ(s.window.undoStack()->count(), 2);

    ASSERT_TRUE(s.waitChanged([&]() { s.window.undoStack()->undo(); }));
    EXPECT_GE(s.graph().find_node("relu1"), 0);
    ASSERT_TRUE(s.waitChanged([&]() { s.window.undoStack()->undo(); }));
    EXPECT_EQ(graph::print(s.graph()), original);
    EXPECT_TRUE(s.window.document()->edits().empty());
    ASSERT_TRUE(s.waitChanged([&]() { s.window.undoStack()->redo(); }));
    EXPECT_EQ(s.outShape("conv1"), "Tensor[(1, 8, 16, 16), float32]");
    EXPECT_EQ(s.window.document()->edits().size(), 1u);
}

TEST(StudioEdit, RefusedEditChangesNothingAndSaysWhy) {
    Studio s;
    ASSERT_TRUE(s.ok);
    const std::string original = graph::print(s.graph());
    QSignalSpy refused(&s.window, &MainWindow::editRefused);
    EXPECT_FALSE(s.window.edits()->apply(makeEdit(graph::GraphEdit::Kind::DeleteNode, "pool1")));
    ASSERT_EQ(refused.count(), 1);
    EXPECT_TRUE(refused.first().first().toString().contains("pool1"));
    EXPECT_EQ(graph::print(s.graph()), original);
    EXPECT_EQ(s.window.undoStack()->count(), 0);
    EXPECT_TRUE(s.window.messagesView()->toPlainText().contains("Edit refused"));
}

// A refused edit's error in the status bar gives way to what a later edit,
// undo or redo did (graph or schedule); it stayed until something else ran.
TEST(StudioEdit, ALaterEditUndoOrRedoReplacesARefusedEditsStatusMessage) {
    Studio s;
    ASSERT_TRUE(s.ok);
    auto refuse = [&]() {
        EXPECT_FALSE(
            s.window.edits()->apply(makeEdit(graph::GraphEdit::Kind::DeleteNode, "pool1")));
        EXPECT_TRUE(s.window.statusMessage().startsWith("Edit refused"))
            << s.window.statusMessage().toStdString();
    };
    refuse();
    const graph::GraphEdit strides = makeEdit(graph::GraphEdit::Kind::SetAttribute, "conv1",
                                              "strides", std::vector<int64_t>{2, 2});
    ASSERT_TRUE(s.edit(strides));
    EXPECT_EQ(s.window.statusMessage(),
              "Edit: " + QString::fromStdString(graph::describe(strides)));
    refuse();
    ASSERT_TRUE(s.waitChanged([&]() { s.window.undoStack()->undo(); }));
    EXPECT_EQ(s.window.statusMessage(),
              "Undone: " + QString::fromStdString(graph::describe(strides)));
    refuse();
    ASSERT_TRUE(s.waitChanged([&]() { s.window.undoStack()->redo(); }));
    EXPECT_EQ(s.window.statusMessage(),
              "Edit: " + QString::fromStdString(graph::describe(strides)));
    // A schedule edit too.
    ScheduleEditor* editor = tessera::gui_test::editorOn(s.window, "relu2");
    ASSERT_NE(editor, nullptr);
    refuse();
    bool split = false;
    for (const auto& row : editor->loopModel()->rows())
        if (!split && row.kind != "block" && row.extent.toLongLong() >= 4)
            split = editor->addStep(makeStep("split", {row.name.toStdString()}, {-1, 2}));
    ASSERT_TRUE(split) << editor->errorText().toStdString();
    EXPECT_TRUE(s.window.statusMessage().startsWith("Edit: schedule of kernel"))
        << s.window.statusMessage().toStdString();
}

TEST(StudioEdit, PropertiesPanelEditsAttributesAndNames) {
    Studio s;
    ASSERT_TRUE(s.ok);
    s.select("conv2");
    studio::PropertiesModel* props = s.window.propertiesModel();
    QAbstractItemModelTester tester(props, QAbstractItemModelTester::FailureReportingMode::Fatal);
    QModelIndex strides = findProperty(props, "strides");
    ASSERT_TRUE(strides.isValid());
    EXPECT_TRUE(props->flags(strides) & Qt::ItemIsEditable);
    EXPECT_FALSE(props->flags(props->index(0, 1)) & Qt::ItemIsEditable);  // the op is not
    ASSERT_TRUE(s.waitChanged([&]() { props->setData(strides, "[2, 2]"); }));
    EXPECT_EQ(s.outShape("conv2"), "Tensor[(1, 16, 8, 8), float32]");
    EXPECT_EQ(s.window.graphView()->currentNode(), s.graph().find_node("conv2"));

    QModelIndex name = findProperty(props, "name");
    ASSERT_TRUE(name.isValid());
    ASSERT_TRUE(s.waitChanged([&]() { props->setData(name, "conv_b"); }));
    EXPECT_GE(s.graph().find_node("conv_b"), 0);
    EXPECT_EQ(s.window.graphView()->currentNode(), s.graph().find_node("conv_b"));

    // Weights show their shape and statistics.
    QModelIndex mean = findProperty(props, "mean");
    ASSERT_TRUE(mean.isValid());
    const graph::Value& w = s.graph().values[s.graph().find_value("w2")];
    double sum = 0;
    for (int64_t i = 0; i < w.type.num_elements(); ++i) sum += w.constant->as<float>()[i];
    EXPECT_NEAR(mean.data().toDouble(), sum / double(w.type.num_elements()), 1e-4);

    // A value that does not parse is refused.
    QSignalSpy refused(&s.window, &MainWindow::editRefused);
    QModelIndex groups = findProperty(props, "groups");
    ASSERT_TRUE(groups.isValid());
    props->setData(groups, "many");
    EXPECT_EQ(refused.count(), 1);
}

TEST(StudioEdit, SearchHighlightsAndSelects) {
    Studio s;
    ASSERT_TRUE(s.ok);
    EXPECT_EQ(s.window.searchGraph("relu"), 2);
    const int current = s.window.graphView()->currentNode();
    EXPECT_EQ(s.graph().nodes[current].op, "nn.relu");
    EXPECT_EQ(s.window.searchGraph("fc"), 1);
    EXPECT_EQ(s.graph().nodes[s.window.graphView()->currentNode()].name, "fc");
}

TEST(StudioEdit, SavedOnnxReloadsAsTheEditedGraph) {
    Studio s;
    ASSERT_TRUE(s.ok);
    ASSERT_TRUE(s.edit(makeEdit(graph::GraphEdit::Kind::DeleteNode, "relu2")));
    QTemporaryDir dir;
    const QString path = dir.filePath("edited.onnx");
    QSignalSpy saved(s.window.edits(), &studio::EditController::saved);
    ASSERT_TRUE(s.window.edits()->saveOnnx(path));  // written by a job, off the UI thread
    ASSERT_TRUE(saved.count() > 0 || saved.wait(30000));
    EXPECT_EQ(graph::print(driver::load_model(path.toStdString())), graph::print(s.graph()));
}

TEST(ScheduleEditorWidget, StepsUpdateLoopIrLiveAndIllegalStepsKeepTheTrace) {
    // The editor's mechanics on one operator alone (a standalone editor).
    const graph::Graph g = driver::load_model(exampleModel().toStdString());
    const tir::PrimFunc base = driver::lower_op(g, g.find_node("relu1"));
    ScheduleEditor standalone;
    standalone.setFunction("relu1", base, 1.0);
    ScheduleEditor* editor = &standalone;
    QAbstractItemModelTester tester(editor->loopModel(),
                                    QAbstractItemModelTester::FailureReportingMode::Fatal);
    const auto& rows = editor->loopModel()->rows();
    ASSERT_GE(rows.size(), 5);  // 4 loops and the block
    schedule::Schedule reference(base);
    const std::vector<std::string> loops = reference.get_loops(reference.blocks().back());
    ASSERT_EQ(loops.size(), 4u);
    const QString original = editor->loopIr();

    ASSERT_TRUE(editor->addStep(makeStep("split", {loops[3]}, {-1, 8}))) << editor->errorText().toStdString();
    const std::vector<std::string> inner = editor->steps()[0].outputs;
    ASSERT_EQ(inner.size(), 2u);
    ASSERT_TRUE(editor->addStep(makeStep("vectorize", {inner[1]})));
    // The same steps through the engine give the same text (the editor adds nothing).
    reference.split(loops[3], {-1, 8});
    reference.vectorize(inner[1]);
    EXPECT_EQ(editor->loopIr().toStdString(), tir::print(reference.func()));
    EXPECT_EQ(editor->traceList()->model()->rowCount(), 2);
    EXPECT_TRUE(editor->loopModel()->indexOf(QString::fromStdString(inner[1])).isValid());

    // An illegal step is not added; the trace and the IR stay. Its refusal
    // is amber also after a Measure left the message plain.
    const QString before = editor->loopIr();
    QLabel* message = editor->findChild<QLabel*>("scheduleEditorMessage");
    ASSERT_NE(message, nullptr);
    message->setStyleSheet(QString());  // as a Measure's result leaves it
    EXPECT_FALSE(editor->addStep(makeStep("split", {"no_such_loop"}, {2, 2})));
    EXPECT_TRUE(message->text().startsWith("Not applied: ")) << message->text().toStdString();
    EXPECT_EQ(message->styleSheet().toStdString(), "color: #9a6700;");
    EXPECT_FALSE(editor->errorText().isEmpty());
    EXPECT_EQ(editor->steps().size(), 2u);
    EXPECT_EQ(editor->loopIr(), before);

    // Disabling the split makes the vectorize step fail inline; the trace is kept.
    QAbstractItemModel* trace = editor->traceList()->model();
    trace->setData(trace->index(0, 0), Qt::Unchecked, Qt::CheckStateRole);
    EXPECT_EQ(editor->errorStep(), 1);
    EXPECT_TRUE(editor->errorText().startsWith("step 2 (vectorize): "))
        << editor->errorText().toStdString();
    EXPECT_FALSE(editor->errorText().contains("schedule step"))  // one number, the trace's
        << editor->errorText().toStdString();
    EXPECT_EQ(editor->steps().size(), 2u);
    EXPECT_EQ(editor->loopIr(), original);
    editor->setStepEnabled(0, true);
    EXPECT_EQ(editor->errorStep(), -1);
    EXPECT_EQ(editor->loopIr(), before);

    editor->removeStep(1);
    editor->removeStep(0);
    EXPECT_EQ(editor->loopIr(), original);

    // Splitting a parallel loop applies with serial parts: the step is marked
    // with a note saying so (not an error), and the label shows it.
    ASSERT_TRUE(editor->addStep(makeStep("parallel", {loops[0]}, {})));
    ASSERT_TRUE(editor->addStep(makeStep("split", {loops[0]}, {-1, 2})));
    EXPECT_EQ(editor->errorStep(), -1);
    ASSERT_EQ(editor->stepNotes().size(), 2);
    EXPECT_TRUE(editor->stepNotes()[0].isEmpty());
    EXPECT_TRUE(editor->stepNotes()[1].contains("was parallel")) << editor->stepNotes()[1].toStdString();
    EXPECT_EQ(trace->data(trace->index(1, 0), Qt::ToolTipRole).toString(), editor->stepNotes()[1]);
    EXPECT_FALSE(trace->data(trace->index(0, 0), Qt::ToolTipRole).isValid());
    editor->removeStep(1);
    EXPECT_TRUE(editor->stepNotes()[0].isEmpty());
}

TEST(ScheduleEditorWidget, OpensOnTheKernelThatRunsWithItsTraceAndKeepsEdits) {
    Studio s;
    ASSERT_TRUE(s.ok);
    ScheduleEditor* editor = tessera::gui_test::editorOn(s.window, "relu1");
    ASSERT_NE(editor, nullptr);
    // What the editor starts from is the build's: the fused group's loop IR
    // and the trace the default rules recorded, packing and layout included.
    auto build = [&]() {
        driver::BuildOptions o =
            s.window.workspace()->buildSettings().buildOptions(s.window.workspace()->kernelTraces());
        o.jit = false;
        return driver::build(s.graph(), o);
    };
    std::shared_ptr<driver::CompiledModel> model = build();
    const int k = model->kernel_of("relu1");
    ASSERT_GE(k, 0);
    const driver::KernelSchedule& ks = model->schedules[size_t(k)];
    EXPECT_EQ(ks.source, "default");
    EXPECT_TRUE(tir::structural_equal(editor->base(), ks.unscheduled));
    EXPECT_EQ(editor->steps(), ks.trace.steps);
    ASSERT_GT(editor->steps().size(), 2u);
    EXPECT_TRUE(s.window.workspace()->traces().isEmpty()) << "showing a kernel saved a hand trace";
    widgets::CodePanes* panes = s.window.codePanes();
    const QString kernelIr = QString::fromStdString(tir::print(model->kernels[size_t(k)]));
    ASSERT_TRUE(QTest::qWaitFor([&]() { return panes->text("Loop IR") == kernelIr; }, 30000))
        << panes->text("Loop IR").toStdString();

    // Disabling the last step is a hand schedule of the kernel: the build
    // replays it and the code panes show what the editor's trace compiles to.
    const int last = int(editor->steps().size()) - 1;
    editor->setStepEnabled(last, false);
    ASSERT_EQ(editor->errorStep(), -1) << editor->errorText().toStdString();
    const QString anchor = QString::fromStdString(ks.anchor);
    EXPECT_EQ(s.window.traceOf(anchor), editor->steps());
    schedule::Trace edited;
    edited.steps = editor->steps();
    const QString editedIr = QString::fromStdString(tir::print(driver::rebuild_kernel(*model, size_t(k), edited)));
    EXPECT_NE(editedIr, kernelIr);
    EXPECT_TRUE(QTest::qWaitFor([&]() { return panes->text("Loop IR") == editedIr; }, 30000))
        << panes->text("Loop IR").toStdString();
    std::shared_ptr<driver::CompiledModel> rebuilt = build();
    EXPECT_EQ(rebuilt->schedules[size_t(rebuilt->kernel_of("relu1"))].source, "hand");

    // The edit is kept: another kernel, then back.
    ASSERT_NE(tessera::gui_test::editorOn(s.window, "relu2"), nullptr);
    EXPECT_NE(editor->steps(), edited.steps);
    ASSERT_NE(tessera::gui_test::editorOn(s.window, "relu1"), nullptr);
    EXPECT_EQ(editor->steps(), edited.steps);
    // Back to the build's own steps: no hand schedule any more.
    editor->setStepEnabled(last, true);
    EXPECT_TRUE(s.window.workspace()->traces().isEmpty());
}

// A standalone editor on node `node` of the example model, alone.
void editAlone(ScheduleEditor& editor, const std::string& node) {
    const graph::Graph g = driver::load_model(exampleModel().toStdString());
    editor.setFunction(QString::fromStdString(node), driver::lower_op(g, g.find_node(node)), 1.0);
}

TEST(ScheduleEditorWidget, DraggingALoopOntoAnotherReorders) {
    ScheduleEditor standalone;
    editAlone(standalone, "relu1");
    ScheduleEditor* editor = &standalone;
    tessera::studio::LoopTreeModel* model = editor->loopModel();
    QVector<QString> loops;
    for (const auto& row : model->rows())
        if (!row.isBlock) loops.append(row.name);
    ASSERT_EQ(loops.size(), 4);
    std::unique_ptr<QMimeData> mime(model->mimeData({model->indexOf(loops[3])}));
    ASSERT_TRUE(model->canDropMimeData(mime.get(), Qt::MoveAction, -1, -1, model->indexOf(loops[1])));
    model->dropMimeData(mime.get(), Qt::MoveAction, -1, -1, model->indexOf(loops[1]));
    ASSERT_EQ(editor->steps().size(), 1u);
    EXPECT_EQ(editor->steps()[0].op, "reorder");
    QVector<QString> after;
    for (const auto& row : model->rows())
        if (!row.isBlock) after.append(row.name);
    EXPECT_EQ(after, (QVector<QString>{loops[0], loops[3], loops[1], loops[2]}));
}

TEST(ScheduleEditorWidget, MeasureAddsAPointInTheBackground) {
    Studio s;
    ASSERT_TRUE(s.ok);
    ScheduleEditor* editor = tessera::gui_test::editorOn(s.window, "conv1");
    ASSERT_NE(editor, nullptr);
    QSignalSpy measured(editor, &ScheduleEditor::measured);
    editor->measure();
    EXPECT_TRUE(editor->jobs()->isRunning());  // the UI thread did not wait
    ASSERT_TRUE(measured.wait(60000));
    EXPECT_EQ(editor->measurePlot()->pointCount(), 1);
    EXPECT_GT(measured.first().at(0).toDouble(), 0.0);
    EXPECT_GT(measured.first().at(1).toDouble(), 0.0);
    // Another kernel's plot starts empty, in GFLOP/s (an int8 kernel's
    // "GOP/s (int8)" label stayed on the next kernel's empty plot).
    editor->measurePlot()->setYLabel("GOP/s (int8)");
    ScheduleEditor* other = tessera::gui_test::editorOn(s.window, "fc");
    ASSERT_EQ(other, editor);
    EXPECT_EQ(editor->measurePlot()->pointCount(), 0);
    EXPECT_EQ(editor->measurePlot()->plot()->yAxis->label().toStdString(), "GFLOP/s");
}

// A fused kernel's title lists its nodes (13 lines for a tree ensemble's):
// the label shows its start and end, the tooltip all of it. A kernel
// without arithmetic (a gather) is plotted in GB/s of its buffers, not at 0
// GFLOP/s on the axis.
TEST(ScheduleEditorWidget, ALongTitleIsElidedAndAKernelWithoutFlopsPlotsGigabytes) {
    Studio s;
    ASSERT_TRUE(s.ok);
    ScheduleEditor* editor = tessera::gui_test::editorOn(s.window, "conv1");
    ASSERT_NE(editor, nullptr);
    QString title = "kernel fused_walk (";
    for (int i = 0; i < 60; ++i) title += QString("Y_GatherElements_rw%1, ").arg(i);
    title += "Y_last) \u00b7 default schedule \u00b7 3 steps";
    const tir::PrimFunc func = editor->base();
    editor->setFunction(title, func, 0.0);
    editor->setTitle(title);  // the controller retitles what setFunction replays
    QLabel* label = nullptr;
    for (QLabel* l : editor->findChildren<QLabel*>())
        if (l->toolTip() == title) label = l;
    ASSERT_NE(label, nullptr);
    EXPECT_LT(label->text().size(), 400);
    EXPECT_TRUE(label->text().contains("3 steps")) << label->text().toStdString();
    EXPECT_TRUE(label->text().contains(QChar(0x2026))) << label->text().toStdString();
    QSignalSpy measured(editor, &ScheduleEditor::measured);
    editor->measure();
    ASSERT_TRUE(measured.wait(60000));
    EXPECT_EQ(editor->measurePlot()->plot()->yAxis->label().toStdString(), "GB/s (its buffers)");
    EXPECT_GT(editor->measurePlot()->best(), 0.0);
}

TEST(StudioCode, LlvmIrAndAssemblyFollowTheSchedule) {
    Studio s;
    ASSERT_TRUE(s.ok);
    ScheduleEditor* editor = tessera::gui_test::editorOn(s.window, "relu1");
    ASSERT_NE(editor, nullptr);
    widgets::CodePanes* panes = s.window.codePanes();
    ASSERT_TRUE(QTest::qWaitFor([&]() { return !panes->text("Assembly").isEmpty(); }, 30000));
    EXPECT_TRUE(panes->text("LLVM IR").contains("define"));
    const QString defaultIr = panes->text("LLVM IR");
    // No steps: the kernel unscheduled, scalar.
    editor->setSteps({});
    ASSERT_TRUE(QTest::qWaitFor([&]() { return panes->text("LLVM IR") != defaultIr; }, 30000));
    ASSERT_TRUE(QTest::qWaitFor([&]() { return !panes->text("Loop IR").contains("T.vectorized"); }, 30000));
    const QString scalarIr = panes->text("LLVM IR");
    // Split and vectorize the innermost loop of the kernel's last block.
    schedule::Schedule probe(editor->scheduled());
    const std::string inner = probe.get_loops(probe.blocks().back()).back();
    ASSERT_TRUE(editor->addStep(makeStep("split", {inner}, {-1, 8}))) << editor->errorText().toStdString();
    ASSERT_TRUE(editor->addStep(makeStep("vectorize", {editor->steps()[0].outputs[1]})));
    ASSERT_TRUE(QTest::qWaitFor([&]() { return panes->text("LLVM IR") != scalarIr; }, 30000));
    // The loop is vectorized in the loop IR; LLVM may widen the 8 lanes
    // further (on AVX-512 it joins two iterations into <16 x float>).
    ASSERT_TRUE(QTest::qWaitFor([&]() { return panes->text("Loop IR").contains("T.vectorized"); }, 30000));
    EXPECT_TRUE(panes->text("LLVM IR").contains(QRegularExpression("<(8|16|32) x float>")))
        << panes->text("LLVM IR").toStdString();
    panes->setDiffEnabled(true);
    EXPECT_TRUE(panes->view(0)->toPlainText().contains("+ "));
}

TEST(StudioViews, EveryNamedViewCanBeRaised) {
    MainWindow window;
    for (const char* view : {"graph", "schedule", "code", "plots"}) EXPECT_TRUE(window.raiseView(view));
    EXPECT_FALSE(window.raiseView("nonsense"));
}

TEST(StudioPlots, RunFillsTheRooflineWithMeasuredPeaks) {
    Studio s;
    ASSERT_TRUE(s.ok);
    QSignalSpy finished(s.window.runs(), &tessera::studio::RunController::finished);
    s.window.runs()->run();
    ASSERT_TRUE(finished.wait(120000));
    ASSERT_TRUE(QTest::qWaitFor([&]() { return !s.window.runs()->isMeasuringPeaks(); }, 60000));
    const auto* run = s.window.runs()->lastRun();
    ASSERT_NE(run, nullptr);
    int withFlops = 0;
    for (const auto& k : run->kernels) {
        EXPECT_GT(k.bytes, 0) << k.label.toStdString();
        if (k.flops > 0 && k.ms > 0) ++withFlops;
    }
    EXPECT_EQ(s.window.runs()->rooflinePlot()->kernelCount(), withFlops);
    EXPECT_GT(s.window.runs()->rooflinePlot()->peakGflops(), 0);
    EXPECT_GT(s.window.runs()->rooflinePlot()->bandwidth(), 0);
}

#include "app/studio/pass_pipeline_panel.h"

TEST(PassPipeline, ListsPassesAndApplyShowsBeforeAfterWithGroups) {
    Studio s;
    ASSERT_TRUE(s.ok);
    tessera::studio::PassPipelinePanel* panel = s.window.passPanel();
    QAbstractItemModelTester tester(panel->passList()->model(),
                                    QAbstractItemModelTester::FailureReportingMode::Fatal);
    QAbstractItemModel* passList = panel->passList()->model();
    ASSERT_EQ(passList->rowCount(), int(passes::all_passes().size()));
    for (int i = 0; i < passList->rowCount(); ++i)
        EXPECT_FALSE(passList->index(i, 0).data(Qt::ToolTipRole).toString().isEmpty());
    panel->setPipeline({"dead_code_elimination", "fuse_ops"});
    EXPECT_EQ(panel->pipeline(), (QStringList{"dead_code_elimination", "fuse_ops"}));
    QSignalSpy applied(panel, &tessera::studio::PassPipelinePanel::applied);
    panel->apply();
    ASSERT_TRUE(applied.wait(30000));
    ASSERT_NE(panel->result(), nullptr);
    EXPECT_EQ(panel->timings()->topLevelItemCount(), 2);
    // fuse_ops only tags nodes (fuse_group is not a change): none added or removed,
    // and the fused groups (conv+relu) are boxed in the after view.
    EXPECT_TRUE(panel->changes().removed.isEmpty());
    EXPECT_TRUE(panel->changes().added.isEmpty());
    EXPECT_GT(panel->afterView()->groupCount(), 0);
    EXPECT_EQ(panel->beforeView()->groupCount(), 0);
    EXPECT_EQ(panel->afterView()->nodeItems().size(), int(panel->result()->nodes.size()));
}

TEST(PassPipeline, CompareGraphsFindsRemovedAddedAndChangedNodes) {
    graph::Graph before = driver::load_model(exampleModel().toStdString());
    graph::Graph after = before;
    graph::delete_node(after, after.find_node("relu1"));
    graph::set_attribute(after, after.find_node("conv2"), "strides", std::vector<int64_t>{2, 2});
    graph::rename_node(after, after.find_node("fc"), "dense");
    const auto c = tessera::studio::compareGraphs(before, after);
    ASSERT_EQ(c.removed.size(), 2);  // relu1 and fc (renamed away)
    EXPECT_EQ(before.nodes[c.removed[0]].name, "relu1");
    ASSERT_EQ(c.added.size(), 1);
    EXPECT_EQ(after.nodes[c.added[0]].name, "dense");
    // conv2 changed, and relu2/gap (output types follow the new strides).
    ASSERT_GE(c.changed.size(), 1);
    EXPECT_EQ(after.nodes[c.changed[0]].name, "conv2");
}

#include <QFile>

#include "app/studio/session.h"

TEST(StudioSession, SaveAndReloadRestoresEditsPipelineAndTraces) {
    QTemporaryDir dir;
    const QString path = dir.filePath("s.tessera-session");
    std::string edited;
    std::vector<schedule::Step> steps;
    QString traced;  // the node the kernel's hand schedule is kept under
    {
        Studio s;
        ASSERT_TRUE(s.ok);
        ASSERT_TRUE(s.edit(makeEdit(graph::GraphEdit::Kind::SetAttribute, "conv1", "strides",
                                    std::vector<int64_t>{2, 2})));
        ASSERT_TRUE(s.edit(makeEdit(graph::GraphEdit::Kind::Rename, "relu2", "act2")));
        s.window.passPanel()->setPipeline({"fuse_ops"});
        ScheduleEditor* editor = tessera::gui_test::editorOn(s.window, "relu1");
        ASSERT_NE(editor, nullptr);
        schedule::Schedule probe(editor->scheduled());
        const std::string loop = probe.get_loops(probe.blocks().back()).front();
        ASSERT_TRUE(editor->addStep(makeStep("split", {loop}, {-1, 4}))) << editor->errorText().toStdString();
        steps = editor->steps();
        ASSERT_EQ(s.window.workspace()->traces().size(), 1);
        traced = s.window.workspace()->traces().firstKey();
        ASSERT_TRUE(s.window.sessions()->save(path));
        edited = graph::print(s.graph());
    }
    MainWindow window;
    window.setDialogsSuppressed(true);
    QSignalSpy restored(window.sessions(), &tessera::studio::SessionController::restored);
    window.sessions()->open(path);
    ASSERT_TRUE(restored.wait(60000));
    ASSERT_TRUE(QTest::qWaitFor([&]() { return !window.graphView()->isLayoutPending(); }, 30000));
    EXPECT_EQ(graph::print(window.document()->graph()), edited);
    EXPECT_EQ(window.undoStack()->count(), 2);  // the edits can be undone
    EXPECT_EQ(window.passPanel()->pipeline(), QStringList{"fuse_ops"});
    EXPECT_EQ(window.traceOf(traced), steps);
    ScheduleEditor* editor = tessera::gui_test::editorOn(window, "relu1");
    ASSERT_NE(editor, nullptr);
    EXPECT_EQ(editor->steps(), steps);
}

TEST(StudioSession, BadSessionFilesAreRefusedWithTheReason) {
    QTemporaryDir dir;
    tessera::studio::Session s;
    QString error;
    EXPECT_FALSE(tessera::studio::Session::fromJson("{\"format\": \"other\"}", "x.json", &s, &error));
    EXPECT_TRUE(error.contains("x.json"));
    EXPECT_FALSE(tessera::studio::Session::fromJson(
        R"({"format": "tessera-session", "edits": [{"kind": "explode", "target": "a"}]})", "y", &s, &error));
    EXPECT_TRUE(error.contains("explode"));
    EXPECT_FALSE(tessera::studio::Session::load(dir.filePath("missing"), &s, &error));
}

TEST(StudioSession, AutosaveWritesARecoverableSession) {
    QFile::remove(tessera::studio::SessionController::autosavePath());
    Studio s;
    ASSERT_TRUE(s.ok);
    ASSERT_TRUE(s.edit(makeEdit(graph::GraphEdit::Kind::DeleteNode, "relu1")));
    s.window.sessions()->autosaveNow();
    ASSERT_TRUE(QFileInfo::exists(tessera::studio::SessionController::autosavePath()));
    tessera::studio::Session recovered;
    QString error;
    ASSERT_TRUE(tessera::studio::Session::load(tessera::studio::SessionController::autosavePath(), &recovered, &error))
        << error.toStdString();
    ASSERT_EQ(recovered.edits.size(), 1u);
    EXPECT_EQ(recovered.edits[0].target, "relu1");
    EXPECT_EQ(recovered.modelSha256, tessera::studio::fileSha256(exampleModel()));
    s.window.close();  // a normal exit removes it
    EXPECT_FALSE(QFileInfo::exists(tessera::studio::SessionController::autosavePath()));
}

TEST(StudioExport, WritesAPackageWithItsMetadataInTheBackground) {
    Studio s;
    ASSERT_TRUE(s.ok);
    QTemporaryDir dir;
    const QString path = dir.filePath("model.tar");
    QSignalSpy exported(s.window.exports(), &tessera::studio::ExportController::exported);
    QSignalSpy failed(s.window.exports(), &tessera::studio::ExportController::failed);
    s.window.exports()->exportTo(path);
    ASSERT_TRUE(QTest::qWaitFor([&]() { return exported.count() + failed.count() > 0; }, 120000));
    ASSERT_EQ(failed.count(), 0) << failed.first().first().toString().toStdString();
    EXPECT_GT(QFileInfo(path).size(), 1000);
    EXPECT_TRUE(exported.first().at(1).toString().contains("llvm"));
}

TEST(ScheduleEditorWidget, DraggingABlockHighlightsLegalComputeAtTargets) {
    ScheduleEditor standalone;
    editAlone(standalone, "conv1");
    ScheduleEditor* editor = &standalone;
    tessera::studio::LoopTreeModel* model = editor->loopModel();
    const QSet<QString> legal = editor->legalComputeAtTargets("pad_temp");
    ASSERT_FALSE(legal.isEmpty());
    std::unique_ptr<QMimeData> mime(model->mimeData({model->indexOf("pad_temp")}));  // drag starts
    EXPECT_EQ(model->legalTargets(), legal);
    QString illegal;
    for (const auto& row : model->rows())
        if (!row.isBlock && !legal.contains(row.name)) illegal = row.name;
    for (const QString& loop : legal)
        EXPECT_TRUE(model->data(model->indexOf(loop), Qt::BackgroundRole).isValid());
    if (!illegal.isEmpty())
        EXPECT_FALSE(model->data(model->indexOf(illegal), Qt::BackgroundRole).isValid());
    // Dropping on a legal target applies compute_at and clears the highlight.
    const QString target = *legal.begin();
    model->dropMimeData(mime.get(), Qt::MoveAction, -1, -1, model->indexOf(target));
    ASSERT_EQ(editor->steps().size(), 1u) << editor->errorText().toStdString();
    EXPECT_EQ(editor->steps()[0].op, "compute_at");
    EXPECT_EQ(editor->errorStep(), -1);
    EXPECT_TRUE(model->legalTargets().isEmpty());
}

TEST(ScheduleEditorWidget, EveryPrimitiveCanBeAddedAndInsertedAnywhere) {
    ScheduleEditor standalone;
    editAlone(standalone, "conv1");
    ScheduleEditor* editor = &standalone;
    // The dialog offers every primitive Schedule::apply knows.
    for (const char* op :
         {"tile", "compute_inline", "reverse_compute_inline", "cache_read", "cache_write",
          "rfactor", "decompose_reduction", "annotate", "pack_operand", "transform_layout"})
        EXPECT_TRUE(tessera::studio::StepDialog::primitives().contains(op)) << op;
    schedule::Schedule probe(editor->scheduled());
    const std::vector<std::string> blocks = probe.blocks();
    ASSERT_GE(blocks.size(), 2u);  // the padding and the conv
    const std::string conv = blocks.back();
    const std::vector<std::string> loops = probe.get_loops(conv);
    auto dialogStep = [](const QString& op, std::map<QString, QString> fields) {
        tessera::studio::StepDialog dialog(fields["block"], {});
        dialog.setPrimitive(op);
        for (const auto& [field, text] : fields) dialog.setField(field, text);
        schedule::Step step;
        QString why;
        EXPECT_TRUE(dialog.step(&step, &why)) << why.toStdString();
        return step;
    };
    // Append: a split of the innermost loop, then a local accumulator.
    ASSERT_TRUE(editor->insertStep(0, dialogStep("split", {{"loops", QString::fromStdString(loops.back())},
                                                           {"ints", "-1, 4"}})))
        << editor->errorText().toStdString();
    ASSERT_TRUE(editor->insertStep(1, dialogStep("cache_write", {{"block", QString::fromStdString(conv)},
                                                                 {"ints", "0"}, {"key", "local"}})))
        << editor->errorText().toStdString();
    // Insert at the front: inline the padding into the conv.
    ASSERT_TRUE(editor->insertStep(0, dialogStep("compute_inline", {{"block", QString::fromStdString(blocks[0])}})))
        << editor->errorText().toStdString();
    ASSERT_EQ(editor->steps().size(), 3u);
    EXPECT_EQ(editor->steps()[0].op, "compute_inline");
    EXPECT_EQ(editor->steps()[1].op, "split");
    EXPECT_EQ(editor->steps()[2].op, "cache_write");
    EXPECT_EQ(editor->errorStep(), -1) << editor->errorText().toStdString();
    // The editor's function is the engine's replay of the same steps.
    schedule::Trace trace;
    trace.steps = editor->steps();
    EXPECT_TRUE(tir::structural_equal(trace.apply(editor->base()).func(), editor->scheduled()));
    // A step that does not apply where it is inserted is refused; nothing changes.
    EXPECT_FALSE(editor->insertStep(0, dialogStep("decompose_reduction", {{"block", "no_block"}, {"loops", "x"}})));
    EXPECT_FALSE(editor->errorText().isEmpty());
    EXPECT_EQ(editor->steps().size(), 3u);
    // An integer field that does not parse is said so.
    tessera::studio::StepDialog bad("", {});
    bad.setPrimitive("split");
    bad.setField("ints", "4, x");
    schedule::Step step;
    QString why;
    EXPECT_FALSE(bad.step(&step, &why));
    EXPECT_TRUE(why.contains("'x'")) << why.toStdString();
}

// Opens the session at `path` in `window`: its schedule check's count of
// traces that replay and the ones that do not (-1 and none: no check came).
static std::pair<int, QStringList> openSessionAndCheck(MainWindow& window, const QString& path) {
    window.setDialogsSuppressed(true);
    QSignalSpy checked(window.sessions(), &tessera::studio::SessionController::schedulesChecked);
    window.sessions()->open(path);
    if (!checked.wait(60000)) return {-1, {}};
    return {checked.first().at(0).toInt(), checked.first().at(1).toStringList()};
}

TEST(StudioSession, AScheduleThatNoLongerAppliesIsReportedWithItsStep) {
    QTemporaryDir dir;
    const QString path = dir.filePath("s.tessera-session");
    std::vector<schedule::Step> steps;
    {
        Studio s;
        ASSERT_TRUE(s.ok);
        ScheduleEditor* editor = tessera::gui_test::editorOn(s.window, "relu1");
        ASSERT_NE(editor, nullptr);
        // The kernel's own steps and one more that names a loop this build does not have
        // (as a session from a machine with other vector lanes or an older Tessera would).
        steps = editor->steps();
        steps.push_back(makeStep("split", {"no_such_loop"}, {-1, 4}));
        driver::BuildOptions o = s.window.workspace()->buildSettings().buildOptions();
        o.jit = false;
        auto model = driver::build(s.graph(), o);
        const QString traced =
            QString::fromStdString(model->schedules[size_t(model->kernel_of("relu1"))].anchor);
        s.window.workspace()->setTrace(traced, steps);
        ASSERT_TRUE(s.window.sessions()->save(path));
    }
    MainWindow window;
    const auto [replayed, failing] = openSessionAndCheck(window, path);
    EXPECT_EQ(replayed, 0);
    ASSERT_EQ(failing.size(), 1);
    EXPECT_TRUE(failing[0].contains("no_such_loop")) << failing[0].toStdString();
    EXPECT_TRUE(failing[0].contains(QString("schedule step %1").arg(steps.size())))  // from 1
        << failing[0].toStdString();
    // The editor opens on the kernel with the session's steps, the failing one marked.
    ScheduleEditor* editor = tessera::gui_test::editorOn(window, "relu1");
    ASSERT_NE(editor, nullptr);
    EXPECT_EQ(editor->steps(), steps);
    EXPECT_EQ(editor->errorStep(), int(steps.size()) - 1);
    EXPECT_TRUE(editor->errorText().contains("no_such_loop")) << editor->errorText().toStdString();
    // Run runs that kernel with the build's own schedule, as the editor says,
    // and warns naming the failing step (it refused to run at all).
    QSignalSpy finished(window.runs(), &tessera::studio::RunController::finished);
    QSignalSpy failed(window.runs(), &tessera::studio::RunController::failed);
    window.runs()->run();
    ASSERT_TRUE(finished.wait(120000))
        << (failed.isEmpty() ? std::string("timed out")
                             : failed.first().at(0).toString().toStdString());
    const QString log = window.messagesView()->toPlainText();
    EXPECT_TRUE(log.contains("Run used the build's own schedule for that kernel"))
        << log.toStdString();
    EXPECT_TRUE(log.contains("no_such_loop")) << log.toStdString();
    // The status bar counts the hand schedules that scheduled a kernel: none here.
    EXPECT_FALSE(window.runs()->lastRunLabel()->text().contains("hand-scheduled"))
        << window.runs()->lastRunLabel()->text().toStdString();
    // The kernel's own steps as its hand schedule apply: one.
    ASSERT_EQ(window.workspace()->traces().size(), 1);
    window.workspace()->setTrace(window.workspace()->traces().firstKey(),
                                 std::vector<schedule::Step>(steps.begin(), steps.end() - 1));
    window.runs()->run();
    ASSERT_TRUE(finished.wait(120000));
    EXPECT_TRUE(window.runs()->lastRunLabel()->text().contains("1 hand-scheduled"))
        << window.runs()->lastRunLabel()->text().toStdString();
}

// A hand schedule that fails at its first step (as one does after a pass is
// unchecked and the loops are renamed) leaves the kernel the build's own
// schedule. The loop tree shows that kernel's loops, the Loop IR pane's, not
// the serial loops of the unscheduled kernel the replay stopped at; the
// failing step stays marked. Steps that apply show their own loops again.
TEST(ScheduleEditorWidget, AHandScheduleThatDoesNotApplyShowsTheLoopsOfTheKernelThatRuns) {
    Studio s;
    ASSERT_TRUE(s.ok);
    ScheduleEditor* editor = tessera::gui_test::editorOn(s.window, "relu1");
    ASSERT_NE(editor, nullptr);
    const std::vector<schedule::Step> built = editor->steps();
    ASSERT_FALSE(built.empty());
    auto loops = [&]() {
        QStringList out;
        for (const auto& row : editor->loopModel()->rows())
            out << row.name + " " + row.kind + " " + row.extent;
        return out;
    };
    const QStringList running = loops();  // the default schedule's: what runs
    ASSERT_TRUE(running.join("\n").contains("parallel") || running.join("\n").contains("vector"))
        << running.join("\n").toStdString();
    const QStringList unscheduled = [&]() {
        QStringList out;
        for (const auto& row : tessera::studio::loopRows(editor->base()))
            out << row.name + " " + row.kind + " " + row.extent;
        return out;
    }();
    ASSERT_NE(running, unscheduled);
    // A hand schedule of the kernel (kept under its key), then one whose first step fails.
    std::vector<schedule::Step> hand = built;
    hand.insert(hand.begin(), makeStep("split", {"no_such_loop"}, {-1, 4}));
    QString key;
    {
        // The key the editor keeps this kernel's schedule under: make an edit and read it back.
        schedule::Step split;
        for (const auto& row : editor->loopModel()->rows())
            if (split.op.empty() && row.kind != "block" && row.extent.toLongLong() >= 4)
                split = makeStep("split", {row.name.toStdString()}, {-1, 2});
        ASSERT_FALSE(split.op.empty());
        ASSERT_TRUE(editor->addStep(split)) << editor->errorText().toStdString();
        ASSERT_EQ(s.window.workspace()->traces().size(), 1);
        key = s.window.workspace()->traces().firstKey();
    }
    s.window.workspace()->setTrace(key, hand);
    s.window.workspace()->noteBuildInputChanged("schedules");
    // Shown again: the build finds the hand schedule failing.
    ASSERT_NE(tessera::gui_test::editorOn(s.window, "conv2"), nullptr);
    editor = tessera::gui_test::editorOn(s.window, "relu1");
    ASSERT_NE(editor, nullptr);
    ASSERT_TRUE(QTest::qWaitFor([&]() { return editor->steps() == hand; }, 60000));
    EXPECT_EQ(editor->errorStep(), 0);
    EXPECT_TRUE(editor->errorText().contains("no_such_loop")) << editor->errorText().toStdString();
    EXPECT_TRUE(editor->traceModel()
                    ->data(editor->traceModel()->index(0, 0), Qt::ToolTipRole)
                    .toString()
                    .contains("no_such_loop"));
    // The replay stopped at the unscheduled kernel; the tree shows the one that runs.
    EXPECT_TRUE(editor->showsRunningInstead());
    EXPECT_EQ(loops().join("\n").toStdString(), running.join("\n").toStdString());
    const QString pane = s.window.codePanes()->text("Loop IR");
    for (const auto& row : editor->loopModel()->rows())
        if (row.kind != "block")
            EXPECT_TRUE(pane.contains(row.name)) << row.name.toStdString() << "\n"
                                                 << pane.toStdString();
    // Without the failing step the steps apply: their own loops (the same here).
    editor->removeStep(0);
    EXPECT_EQ(editor->errorStep(), -1);
    EXPECT_FALSE(editor->showsRunningInstead());
    EXPECT_EQ(loops().join("\n").toStdString(), running.join("\n").toStdString());
    // Undo brings the failing schedule back, and with it the kernel that runs.
    s.window.undoStack()->undo();
    EXPECT_EQ(editor->steps(), hand);
    EXPECT_TRUE(editor->showsRunningInstead());
    EXPECT_EQ(loops().join("\n").toStdString(), running.join("\n").toStdString());
}

// Run's first log line counts the hand schedules that apply and says apart
// how many do not (their kernels run the build's own schedule): known before
// the Run builds, from a check of its own or from the code views' build.
TEST(StudioRun, TheRunStartLineCountsOnlyTheHandSchedulesThatApply) {
    tessera::gui_test::OpenStudio s;
    ASSERT_TRUE(s.ok);
    // Hand schedules of two kernels: a split each.
    auto handSchedule = [&](const std::string& node) {
        ScheduleEditor* editor = tessera::gui_test::editorOn(s.window, node);
        if (!editor) return std::vector<schedule::Step>();
        const std::vector<schedule::Step> built = editor->steps();
        for (const auto& row : editor->loopModel()->rows())
            if (row.kind != "block" && row.extent.toLongLong() >= 4 &&
                editor->addStep(makeStep("split", {row.name.toStdString()}, {-1, 2})))
                break;
        return built;
    };
    const std::vector<schedule::Step> built = handSchedule("relu1");
    ASSERT_FALSE(built.empty());
    ASSERT_EQ(s.window.workspace()->traces().size(), 1);
    const QString failing = s.window.workspace()->traces().firstKey();
    ASSERT_FALSE(handSchedule("relu2").empty());
    ASSERT_EQ(s.window.workspace()->traces().size(), 2);
    // The first no longer applies: its first step names a loop the kernel does not have.
    std::vector<schedule::Step> hand = built;
    hand.insert(hand.begin(), makeStep("split", {"no_such_loop"}, {-1, 4}));
    s.window.workspace()->setTrace(failing, hand);
    auto startLines = [&]() {
        QStringList lines;
        for (const QString& line : s.window.messagesView()->toPlainText().split('\n'))
            if (line.contains("(build, time, profile)")) lines << line;
        return lines;
    };
    const QString expected =
        "1 hand schedule; 1 hand schedule does not apply: the build's own schedule runs";
    QString error;
    ASSERT_NE(s.run(&error), nullptr) << error.toStdString();  // checked before it builds
    ASSERT_EQ(startLines().size(), 1);
    EXPECT_TRUE(startLines().back().endsWith(expected)) << startLines().back().toStdString();
    EXPECT_FALSE(startLines().back().contains("2 hand schedules"));
    // Run again: the last Run's build says the same.
    ASSERT_NE(s.run(&error), nullptr) << error.toStdString();
    ASSERT_EQ(startLines().size(), 2);
    EXPECT_TRUE(startLines().back().endsWith(expected)) << startLines().back().toStdString();
    // Both apply again (Undo of nothing here: the kernel's own steps as its hand schedule).
    s.window.workspace()->setTrace(failing, built);
    s.window.workspace()->noteBuildInputChanged("schedules");
    ASSERT_NE(tessera::gui_test::editorOn(s.window, "relu1"), nullptr);  // the code views' build
    ASSERT_NE(s.run(&error), nullptr) << error.toStdString();
    ASSERT_EQ(startLines().size(), 3);
    EXPECT_TRUE(startLines().back().endsWith(", 2 hand schedules"))
        << startLines().back().toStdString();
}

// A session schedule kept under a kernel name this build does not have (a
// graph edit renumbers kernels) replays nowhere: the check says so instead
// of counting it as replayed.
TEST(StudioSession, AScheduleOfAKernelNotInTheBuildIsReported) {
    QTemporaryDir dir;
    const QString path = dir.filePath("s.tessera-session");
    {
        Studio s;
        ASSERT_TRUE(s.ok);
        ScheduleEditor* editor = tessera::gui_test::editorOn(s.window, "relu1");
        ASSERT_NE(editor, nullptr);
        s.window.workspace()->setTrace("fused_conv1_relu1_gone_99", editor->steps());
        ASSERT_TRUE(s.window.sessions()->save(path));
    }
    MainWindow window;
    const auto [replayed, failing] = openSessionAndCheck(window, path);
    EXPECT_EQ(replayed, 0);
    ASSERT_EQ(failing.size(), 1);
    EXPECT_TRUE(failing[0].startsWith("fused_conv1_relu1_gone_99: no node or kernel"))
        << failing[0].toStdString();
}

// Work that no saved session holds marks the window modified (its title's
// '*'), and quitting or opening another model asks to save it first (a
// dialog, not shown here); saving the session clears the mark.
TEST(StudioSession, AHandScheduleNotInASavedSessionMarksTheWindowModified) {
    QTemporaryDir dir;
    Studio s;
    ASSERT_TRUE(s.ok);
    EXPECT_FALSE(s.window.isWindowModified());
    EXPECT_FALSE(s.window.sessions()->hasUnsavedChanges());
    EXPECT_TRUE(s.window.windowTitle().contains("[*]")) << s.window.windowTitle().toStdString();
    ScheduleEditor* editor = tessera::gui_test::editorOn(s.window, "relu1");
    ASSERT_NE(editor, nullptr);
    const std::vector<schedule::Step> built = editor->steps();
    bool split = false;
    for (const auto& row : editor->loopModel()->rows())
        if (!split && row.kind != "block" && row.extent.toLongLong() >= 4)
            split = editor->addStep(makeStep("split", {row.name.toStdString()}, {-1, 2}));
    ASSERT_TRUE(split) << editor->errorText().toStdString();
    EXPECT_TRUE(s.window.sessions()->hasUnsavedChanges());
    EXPECT_TRUE(s.window.isWindowModified());
    const QString path = dir.filePath("s.tessera-session");
    ASSERT_TRUE(s.window.sessions()->save(path));
    EXPECT_FALSE(s.window.sessions()->hasUnsavedChanges());
    EXPECT_FALSE(s.window.isWindowModified());
    EXPECT_TRUE(s.window.windowTitle().contains("(s.tessera-session)"))
        << s.window.windowTitle().toStdString();
    // Dialogs suppressed: nothing to ask, the window may close.
    editor->setSteps(built);
    EXPECT_TRUE(s.window.sessions()->hasUnsavedChanges());  // the saved schedule was dropped
    EXPECT_TRUE(s.window.maySetAsideWork());
    // Ctrl+S saves to the session's own file, without asking where.
    ASSERT_TRUE(s.window.sessions()->saveSession());
    EXPECT_FALSE(s.window.isWindowModified());
    tessera::studio::Session saved;
    ASSERT_TRUE(tessera::studio::Session::load(path, &saved, nullptr));
    EXPECT_TRUE(saved.traces.isEmpty());
    // A model opened on its own afterwards is in no session: the title says so at once.
    QSignalSpy loaded(&s.window, &MainWindow::modelLoaded);
    s.window.openModel(exampleModel());
    ASSERT_TRUE(loaded.wait(60000));
    EXPECT_FALSE(s.window.windowTitle().contains("tessera-session"))
        << s.window.windowTitle().toStdString();
}

// A schedule edit is an Edit > Undo step like a graph edit: undo gives the
// kernel back the build's own schedule (the hand schedule dropped), redo the
// edit again; both show in the editor that shows the kernel.
TEST(ScheduleEditorWidget, ScheduleEditsUndoAndRedo) {
    Studio s;
    ASSERT_TRUE(s.ok);
    ScheduleEditor* editor = tessera::gui_test::editorOn(s.window, "relu1");
    ASSERT_NE(editor, nullptr);
    {  // a Run first: its result goes stale with the edit and fresh again with the undo
        QSignalSpy finished(s.window.runs(), &tessera::studio::RunController::finished);
        s.window.runs()->run();
        ASSERT_TRUE(finished.wait(120000));
        ASSERT_TRUE(s.window.runs()->staleReason().isEmpty());
    }
    const std::vector<schedule::Step> built = editor->steps();
    const int before = s.window.undoStack()->count();
    bool split = false;
    for (const auto& row : editor->loopModel()->rows())
        if (!split && row.kind != "block" && row.extent.toLongLong() >= 4)
            split = editor->addStep(makeStep("split", {row.name.toStdString()}, {-1, 2}));
    ASSERT_TRUE(split) << editor->errorText().toStdString();
    const std::vector<schedule::Step> edited = editor->steps();
    EXPECT_EQ(s.window.undoStack()->count(), before + 1);
    // Edit > Undo names the kernel (the fused group's name), not only a node.
    EXPECT_TRUE(s.window.undoStack()->undoText().startsWith("schedule of kernel "))
        << s.window.undoStack()->undoText().toStdString();
    ASSERT_EQ(s.window.workspace()->kernelTraces().size(), 1u);
    const QString key = QString::fromStdString(s.window.workspace()->kernelTraces().begin()->first);
    EXPECT_TRUE(s.window.runs()->staleReason().contains("schedules"))
        << s.window.runs()->staleReason().toStdString();
    s.window.undoStack()->undo();
    EXPECT_EQ(editor->steps(), built);
    EXPECT_TRUE(s.window.workspace()->kernelTraces().empty());
    EXPECT_TRUE(s.window.runs()->staleReason().isEmpty())  // back to what the Run built
        << s.window.runs()->staleReason().toStdString();
    EXPECT_FALSE(s.window.sessions()->hasUnsavedChanges());
    s.window.undoStack()->redo();
    EXPECT_EQ(editor->steps(), edited);
    EXPECT_EQ(s.window.traceOf(key), edited);
    EXPECT_EQ(s.window.undoStack()->count(), before + 1);  // undo and redo push nothing
}

TEST(ScheduleEditorWidget, DraggingAConsumerBlockOffersItsProducersLoops) {
    Studio s;
    ASSERT_TRUE(s.ok);
    ScheduleEditor* editor = tessera::gui_test::editorOn(s.window, "relu1");
    ASSERT_NE(editor, nullptr);
    editor->setSteps({});  // the fused kernel unscheduled: the conv, then its relu epilogue
    schedule::Schedule probe(editor->scheduled());
    const std::string consumer = probe.blocks().back();
    const std::vector<std::string> producers = probe.get_producers(consumer);
    ASSERT_FALSE(producers.empty());
    const std::vector<std::string> loops = probe.get_loops(producers.back());
    ASSERT_FALSE(loops.empty());
    const QSet<QString> legal = editor->legalComputeAtTargets(QString::fromStdString(consumer));
    QString target;
    for (const std::string& l : loops)
        if (legal.contains(QString::fromStdString(l))) target = QString::fromStdString(l);
    ASSERT_FALSE(target.isEmpty()) << "no loop of " << producers.back() << " offered to " << consumer;
    EXPECT_EQ(editor->placementAt(QString::fromStdString(consumer), target), "reverse_compute_at");
    tessera::studio::LoopTreeModel* model = editor->loopModel();
    std::unique_ptr<QMimeData> mime(model->mimeData({model->indexOf(QString::fromStdString(consumer))}));
    model->dropMimeData(mime.get(), Qt::MoveAction, -1, -1, model->indexOf(target));
    ASSERT_EQ(editor->steps().size(), 1u) << editor->errorText().toStdString();
    EXPECT_EQ(editor->steps()[0].op, "reverse_compute_at");
    EXPECT_EQ(editor->errorStep(), -1) << editor->errorText().toStdString();
}
// The window fits a small laptop's screen: docks that stack many controls
// (the schedule editor, the pass pipeline) scroll instead of holding the
// window at their full height (it needed 970 pixels).
TEST(StudioLayout, TheMainWindowFitsA1280By720Screen) {
    Studio s;
    ASSERT_TRUE(s.ok);
    s.select("conv1");
    ASSERT_TRUE(s.window.raiseView("schedule"));
    const QSize min = s.window.minimumSizeHint().expandedTo(s.window.minimumSize());
    EXPECT_LE(min.width(), 1280);
    EXPECT_LE(min.height(), 680);  // the screen less a taskbar and the title bar
    // Its default size shrinks to the screen it opens on (the offscreen
    // platform's is smaller than 1600 x 1000), status bar included.
    s.window.fitToScreen();
    const QRect available = s.window.screen()->availableGeometry();
    EXPECT_LE(s.window.height(), available.height()) << available.height();
    EXPECT_LE(s.window.width(), available.width()) << available.width();
    // The Code dock's tab stays short beside "Pass pipeline"; its tooltip has the whole title.
    auto* code = s.window.findChild<QDockWidget*>("CodeDock");
    ASSERT_NE(code, nullptr);
    ASSERT_TRUE(QTest::qWaitFor([&]() { return code->toolTip().startsWith("Code - kernel"); }, 30000))
        << code->toolTip().toStdString();
    EXPECT_LE(code->windowTitle().size(), 56) << code->windowTitle().toStdString();
    EXPECT_TRUE(code->toolTip().startsWith(code->windowTitle().chopped(1)))
        << code->windowTitle().toStdString();
    bool tabHasTip = false;  // the tab beside "Pass pipeline" too
    ASSERT_TRUE(QTest::qWaitFor(
        [&]() {
            for (QTabBar* bar : s.window.findChildren<QTabBar*>())
                for (int i = 0; i < bar->count(); ++i)
                    tabHasTip = tabHasTip || (bar->tabText(i) == code->windowTitle() &&
                                              bar->tabToolTip(i) == code->toolTip());
            return tabHasTip;
        },
        10000));
    // The schedule dock scrolls: a wheel turn over the unfocused trial count
    // scrolls the dock and leaves the count as it was.
    auto* trials = s.window.findChild<QSpinBox*>("tuneTrials");
    ASSERT_NE(trials, nullptr);
    const int count = trials->value();
    QWheelEvent wheel(QPointF(5, 5), QPointF(5, 5), QPoint(), QPoint(0, -120), Qt::NoButton,
                      Qt::NoModifier, Qt::NoScrollPhase, false);
    QApplication::sendEvent(trials, &wheel);
    EXPECT_EQ(trials->value(), count);
}
