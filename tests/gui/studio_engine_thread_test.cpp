// "No engine work on the UI thread": the studio forbids it on the thread that
// makes its window (engine/core/thread_guard.h), and its main flows (open,
// Run, Tune, Export, Save as ONNX, a node's kernel and its schedule edits, Measure, a pass
// change, the fused-kernel collapse) leave the guard's count at zero; a
// guarded call on the forbidden thread is counted, or thrown in strict mode.
#include <gtest/gtest.h>

#include <QSignalSpy>
#include <QTemporaryDir>
#include <thread>

#include "app/studio/pass_list_model.h"
#include "app/studio/pass_pipeline_panel.h"
#include "engine/core/error.h"
#include "engine/core/thread_guard.h"
#include "engine/driver/driver.h"
#include "engine/schedule/schedule.h"
#include "tests/gui/studio_fixture.h"

using namespace tessera;
using tessera::gui_test::OpenStudio;
using tessera::studio::MainWindow;
using tessera::studio::makeStep;
using tessera::studio::ScheduleEditor;

namespace {

std::string violations() {
    const EngineWorkViolations v = engine_work_violations();
    return std::to_string(v.count) + " violation(s), the first: " + v.first;
}

// Keeps this thread's guard state and the strict mode as they were.
struct GuardState {
    bool forbidden = engine_work_forbidden_on_this_thread();
    ~GuardState() {
        forbid_engine_work_on_this_thread(forbidden);
        set_engine_work_strict(false);
        reset_engine_work_violations();
    }
};

}  // namespace

TEST(EngineThreadGuard, AGuardedCallOnTheForbiddenThreadIsCounted) {
    GuardState keep;
    const std::string model = gui_test::exampleModel().toStdString();
    forbid_engine_work_on_this_thread(true);
    reset_engine_work_violations();
    driver::load_model(model);
    EXPECT_EQ(engine_work_violations().count, 1);
    EXPECT_EQ(engine_work_violations().first, "driver::load_model");

    // Strict: the call throws and names itself; nothing ran.
    set_engine_work_strict(true);
    try {
        driver::build(driver::load_model(model));
        ADD_FAILURE() << "no InternalError";
    } catch (const InternalError& e) {
        EXPECT_NE(std::string(e.what()).find("driver::load_model"), std::string::npos) << e.what();
    }
    EXPECT_EQ(engine_work_violations().count, 2);
    EXPECT_EQ(engine_work_violations().first, "driver::load_model");  // the first is kept

    // Other threads may work.
    std::thread worker([&]() { driver::build(driver::load_model(model)); });
    worker.join();
    EXPECT_EQ(engine_work_violations().count, 2);
    forbid_engine_work_on_this_thread(false);
    EXPECT_NO_THROW(driver::load_model(model));
    EXPECT_EQ(engine_work_violations().count, 2);
}

TEST(EngineThreadGuard, TheStudiosMainFlowsRunNoEngineWorkOnTheUiThread) {
    GuardState keep;
    QTemporaryDir dir;
    ASSERT_TRUE(dir.isValid());
    reset_engine_work_violations();
    set_engine_work_strict(false);  // counted, so the test reports every flow
    OpenStudio s;                   // open: the load job
    ASSERT_TRUE(s.ok);
    EXPECT_TRUE(engine_work_forbidden_on_this_thread());  // the window forbade it
    EXPECT_EQ(engine_work_violations().count, 0) << "open: " << violations();

    QString error;
    ASSERT_NE(s.run(&error), nullptr) << error.toStdString();
    EXPECT_EQ(engine_work_violations().count, 0) << "Run: " << violations();

    s.window.workspace()->setTuningDatabase(dir.filePath("tuning.jsonl"));
    ASSERT_TRUE(s.tune(2, &error)) << error.toStdString();
    EXPECT_EQ(engine_work_violations().count, 0) << "Tune: " << violations();

    QSignalSpy exported(s.window.exports(), &studio::ExportController::exported);
    QSignalSpy exportFailed(s.window.exports(), &studio::ExportController::failed);
    s.window.exports()->exportTo(dir.filePath("model.tar"));
    ASSERT_TRUE(
        QTest::qWaitFor([&]() { return exported.count() + exportFailed.count() > 0; }, 120000));
    EXPECT_EQ(exportFailed.count(), 0);
    EXPECT_EQ(engine_work_violations().count, 0) << "Export: " << violations();

    QSignalSpy saved(s.window.edits(), &studio::EditController::saved);
    ASSERT_TRUE(s.window.edits()->saveOnnx(dir.filePath("model.onnx")));
    ASSERT_TRUE(saved.count() > 0 || saved.wait(60000));
    EXPECT_EQ(engine_work_violations().count, 0) << "Save as ONNX: " << violations();

    // A node: the kernel that runs it is built, its schedule edited (the
    // kernel rebuilt), and measured in the model.
    ScheduleEditor* editor = gui_test::editorOn(s.window, "conv2");
    ASSERT_NE(editor, nullptr);
    ASSERT_TRUE(QTest::qWaitFor([&]() { return !s.window.isCompilingCode(); }, 60000));
    schedule::Schedule probe(editor->scheduled());
    const std::string loop = probe.get_loops(probe.blocks().back()).front();
    QSignalSpy shown(&s.window, &MainWindow::kernelCodeShown);
    ASSERT_TRUE(editor->addStep(makeStep("split", {loop}, {-1, 2})))
        << editor->errorText().toStdString();
    ASSERT_TRUE(shown.count() > 0 || shown.wait(60000));
    QSignalSpy measured(editor, &ScheduleEditor::measured);
    editor->measure();
    ASSERT_TRUE(measured.wait(60000));
    EXPECT_EQ(engine_work_violations().count, 0) << "schedule editor: " << violations();

    // A pass change: the code panes show what the new pipeline builds.
    studio::PassListModel* passes = s.window.passPanel()->passModel();
    const int fuse = passes->rowOf("fuse_ops");
    ASSERT_GE(fuse, 0);
    shown.clear();
    passes->setData(passes->index(fuse), Qt::Unchecked, Qt::CheckStateRole);
    ASSERT_TRUE(shown.wait(60000));
    EXPECT_EQ(engine_work_violations().count, 0) << "pass change: " << violations();

    s.window.collapseGraph("fused");
    ASSERT_TRUE(QTest::qWaitFor(
        [&]() { return !s.window.isCollapsing() && !s.window.graphView()->isLayoutPending(); },
        60000));
    EXPECT_EQ(engine_work_violations().count, 0) << "collapse: " << violations();
}
