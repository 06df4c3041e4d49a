// The studio's list models stay consistent (QAbstractItemModelTester, fatal)
// while the studio edits them, and show what their lists showed: the pass
// pipeline (PassListModel: reorder, enable, disable) and the schedule trace
// (ScheduleTraceModel: add, insert, disable, move, edit, remove steps).
#include <gtest/gtest.h>

#include <QAbstractItemModelTester>
#include <QListView>
#include <QSignalSpy>

#include "app/studio/build_settings.h"
#include "app/studio/build_settings_bar.h"
#include "app/studio/pass_list_model.h"
#include "app/studio/pass_pipeline_panel.h"
#include "app/studio/schedule_trace_model.h"
#include "engine/graph/passes/pass_manager.h"
#include "engine/schedule/schedule.h"
#include "tests/gui/studio_fixture.h"

using namespace tessera;
using tessera::gui_test::OpenStudio;
using tessera::studio::makeStep;
using tessera::studio::PassListModel;
using tessera::studio::PassPipelinePanel;
using tessera::studio::ScheduleEditor;
using tessera::studio::ScheduleTraceModel;

namespace {

QStringList shownRows(const QAbstractItemModel* model) {
    QStringList rows;
    for (int i = 0; i < model->rowCount(); ++i) rows << model->index(i, 0).data().toString();
    return rows;
}

QStringList checkedRows(const QAbstractItemModel* model) {
    QStringList rows;
    for (int i = 0; i < model->rowCount(); ++i)
        if (model->index(i, 0).data(Qt::CheckStateRole).value<Qt::CheckState>() == Qt::Checked)
            rows << model->index(i, 0).data().toString();
    return rows;
}

}  // namespace

TEST(PassListModel, StaysConsistentWhileTheStudioReordersEnablesAndDisablesPasses) {
    OpenStudio s;
    ASSERT_TRUE(s.ok);
    PassPipelinePanel* panel = s.window.passPanel();
    PassListModel* model = panel->passModel();
    ASSERT_EQ(panel->passList()->model(), model);  // the view shows the model
    QAbstractItemModelTester tester(model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    QSignalSpy changed(panel, &PassPipelinePanel::pipelineChanged);

    // Every registered pass, named, with its description as the tool tip.
    ASSERT_EQ(model->rowCount(), int(passes::all_passes().size()));
    for (int i = 0; i < model->rowCount(); ++i)
        EXPECT_EQ(model->index(i).data(Qt::ToolTipRole).toString().toStdString(),
                  passes::find_pass(model->index(i).data().toString().toStdString())->description);
    EXPECT_EQ(checkedRows(model), panel->pipeline());

    // Reorder: the named passes checked, in this order; every other pass
    // unchecked right after the checked pass that precedes it in the
    // registry's (an opt level's) order, so that checking it again runs it
    // there: the passes before dead_code_elimination come first, winograd
    // among them, before convert_layout's successors.
    panel->setPipeline({"fuse_ops", "dead_code_elimination"});
    EXPECT_EQ(panel->pipeline(), (QStringList{"fuse_ops", "dead_code_elimination"}));
    EXPECT_EQ(shownRows(model).first(), QString::fromStdString(passes::all_passes().front().name));
    EXPECT_LT(model->rowOf("convert_layout"), model->rowOf("winograd"));
    EXPECT_LT(model->rowOf("winograd"), model->rowOf("fuse_ops"));
    EXPECT_EQ(changed.count(), 1);

    // Enable and disable by the check box.
    const int dce = model->rowOf("dead_code_elimination");
    const int fold = model->rowOf("fold_constants");
    ASSERT_GE(fold, 0);
    EXPECT_TRUE(model->setData(model->index(fold), Qt::Checked, Qt::CheckStateRole));
    EXPECT_TRUE(model->setData(model->index(dce), Qt::Unchecked, Qt::CheckStateRole));
    EXPECT_EQ(panel->pipeline(), (QStringList{"fold_constants", "fuse_ops"}));
    EXPECT_EQ(changed.count(), 3);

    // A drag in the list view moves one row (QListView calls moveRow):
    // fold_constants to the end, then back to the top.
    EXPECT_TRUE(model->moveRow({}, model->rowOf("fold_constants"), {}, model->rowCount()));
    EXPECT_EQ(shownRows(model).last(), "fold_constants");
    EXPECT_EQ(panel->pipeline(), (QStringList{"fuse_ops", "fold_constants"}));
    EXPECT_TRUE(model->moveRow({}, model->rowCount() - 1, {}, 0));
    EXPECT_EQ(panel->pipeline(), (QStringList{"fold_constants", "fuse_ops"}));
    EXPECT_EQ(changed.count(), 5);
    EXPECT_EQ(s.window.buildSettings().passes, panel->pipeline());  // what builds use

    // The opt level selects its pipeline again; nothing is lost or duplicated.
    s.window.settingsBar()->setOptLevel(1);
    EXPECT_EQ(panel->pipeline(), studio::defaultPasses(1));
    EXPECT_EQ(checkedRows(model), studio::defaultPasses(1));
    QStringList sorted = shownRows(model);
    sorted.sort();
    QStringList all;
    for (const passes::PassInfo& p : passes::all_passes()) all << QString::fromStdString(p.name);
    all.sort();
    EXPECT_EQ(sorted, all);
}

TEST(ScheduleTraceModel, StaysConsistentWhileTheStudioAddsRemovesAndEditsSteps) {
    OpenStudio s;
    ASSERT_TRUE(s.ok);
    ScheduleEditor* editor = tessera::gui_test::editorOn(s.window, "relu1");
    ASSERT_NE(editor, nullptr);
    ScheduleTraceModel* model = editor->traceModel();
    ASSERT_EQ(editor->traceList()->model(), model);
    QAbstractItemModelTester tester(model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    // Each row is "N. step" of the editor's steps, checked when enabled.
    auto showsTheSteps = [&]() {
        if (model->rowCount() != int(editor->steps().size())) return false;
        for (int i = 0; i < model->rowCount(); ++i) {
            const schedule::Step& step = editor->steps()[size_t(i)];
            const QModelIndex index = model->index(i);
            if (index.data().toString() !=
                QString("%1. %2").arg(i + 1).arg(ScheduleTraceModel::describeStep(step)))
                return false;
            if ((index.data(Qt::CheckStateRole).value<Qt::CheckState>() == Qt::Checked) !=
                step.enabled)
                return false;
        }
        return true;
    };
    EXPECT_TRUE(showsTheSteps());
    const size_t built = editor->steps().size();  // the build's own trace

    schedule::Schedule probe(editor->scheduled());
    const std::vector<std::string> loops = probe.get_loops(probe.blocks().back());
    ASSERT_FALSE(loops.empty());
    // Add: a split, then a parallel on its outer loop.
    ASSERT_TRUE(editor->addStep(makeStep("split", {loops.front()}, {-1, 2})))
        << editor->errorText().toStdString();
    const std::vector<std::string> outer = editor->steps().back().outputs;
    ASSERT_EQ(outer.size(), 2u);
    ASSERT_TRUE(editor->addStep(makeStep("parallel", {outer[0]})));
    EXPECT_EQ(editor->steps().size(), built + 2);
    EXPECT_TRUE(showsTheSteps());

    // Disable the split by its check box: the parallel step fails, marked in red.
    const int split = int(built);
    EXPECT_TRUE(model->setData(model->index(split), Qt::Unchecked, Qt::CheckStateRole));
    EXPECT_FALSE(editor->steps()[size_t(split)].enabled);
    EXPECT_EQ(editor->errorStep(), split + 1);
    EXPECT_TRUE(model->index(split + 1).data(Qt::ForegroundRole).isValid());
    EXPECT_EQ(model->index(split + 1).data(Qt::ToolTipRole).toString(), editor->errorText());
    EXPECT_TRUE(showsTheSteps());
    editor->setStepEnabled(split, true);
    EXPECT_EQ(editor->errorStep(), -1);
    EXPECT_FALSE(model->index(split + 1).data(Qt::ForegroundRole).isValid());

    // A drag moves a row (QListView calls moveRow): the parallel before the split fails.
    EXPECT_TRUE(model->moveRow({}, split + 1, {}, split));
    EXPECT_EQ(editor->steps()[size_t(split)].op, "parallel");
    EXPECT_EQ(editor->errorStep(), split);
    EXPECT_TRUE(showsTheSteps());
    editor->moveStep(split, split + 1);  // back
    EXPECT_EQ(editor->errorStep(), -1);

    // Edit the split's factors (what double-clicking it does), insert a step, remove them.
    std::vector<schedule::Step> steps = editor->steps();
    steps[size_t(split)].ints = {-1, 4};
    editor->setSteps(steps);
    EXPECT_TRUE(model->index(split).data().toString().contains("[-1, 4]"));
    ASSERT_TRUE(editor->insertStep(split + 1, makeStep("unroll", {outer[1]})))
        << editor->errorText().toStdString();
    EXPECT_TRUE(model->index(split + 1).data().toString().contains("unroll"));
    EXPECT_TRUE(showsTheSteps());
    editor->removeStep(split + 2);
    editor->removeStep(split + 1);
    editor->removeStep(split);
    EXPECT_EQ(editor->steps().size(), built);
    EXPECT_TRUE(showsTheSteps());

    // Another node: the trace of its kernel replaces this one.
    ASSERT_NE(tessera::gui_test::editorOn(s.window, "conv2"), nullptr);
    EXPECT_TRUE(QTest::qWaitFor([&]() { return showsTheSteps(); }, 10000));
}
