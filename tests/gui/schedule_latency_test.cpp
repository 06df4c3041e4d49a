// Issue #19's live-update figure: a schedule edit of a ResNet-18 stage-1
// kernel (3x3 conv, 64 channels, 56x56, + bias + relu: Winograd in NCHW[b]c at
// -O2) updates the editor's loop IR on the UI thread and the code panes'
// loop IR, LLVM IR and assembly off it; the test measures both (median of 20
// edits) and prints them. Nothing is asserted about the times.
#include <gtest/gtest.h>

#include <QElapsedTimer>
#include <QTemporaryDir>
#include <algorithm>
#include <cstdio>

#include "app/studio/schedule_editor.h"
#include "engine/frontend/onnx/onnx_importer.h"
#include "tests/engine/passes/passes_test_util.h"
#include "tests/gui/studio_fixture.h"
#include "widgets/code_panes.h"

using namespace tessera;

namespace {

double medianOf(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

TEST(ScheduleEditorLatency, EditsOfAResNetStageKernelUpdateTheCodeLive) {
    using namespace passes::testing;
    graph::Graph g;
    g.name = "resnet_stage1_conv";
    int x = input(g, "x", {1, 64, 56, 56});
    int c = node(g, "nn.conv2d", "conv",
                 {x, constant(g, "w", {64, 64, 3, 3}, 1), constant(g, "b", {64}, 2)},
                 {{"padding", std::vector<int64_t>{1, 1, 1, 1}}});
    int r = node(g, "nn.relu", "relu", {c});
    g.outputs = {r};
    QTemporaryDir dir;
    const QString path = dir.filePath("stage1.onnx");
    frontend::export_onnx_file(g, path.toStdString());

    gui_test::OpenStudio s(path);
    ASSERT_TRUE(s.ok);
    studio::ScheduleEditor* editor = gui_test::editorOn(s.window, "conv");
    ASSERT_NE(editor, nullptr);
    widgets::CodePanes* panes = s.window.codePanes();
    ASSERT_TRUE(QTest::qWaitFor([&]() { return !panes->text("Assembly").isEmpty(); }, 60000));
    ASSERT_GT(editor->steps().size(), 1u);
    const int last = int(editor->steps().size()) - 1;
    std::vector<double> editorMs, panesMs;
    for (int i = 0; i < 20; ++i) {
        const QString before = panes->text("Assembly");
        QElapsedTimer t;
        t.start();
        editor->setStepEnabled(last, i % 2 == 1);  // off, on, off, ...
        editorMs.push_back(double(t.nsecsElapsed()) * 1e-6);
        ASSERT_EQ(editor->errorStep(), -1) << editor->errorText().toStdString();
        ASSERT_TRUE(QTest::qWaitFor([&]() { return panes->text("Assembly") != before; }, 30000))
            << "edit " << i << " did not reach the code panes";
        panesMs.push_back(double(t.nsecsElapsed()) * 1e-6);
    }
    std::printf("schedule edit of %s (%zu steps): editor loop IR %.1f ms, code panes (loop IR, "
                "LLVM IR, assembly) %.1f ms, median of 20 edits\n",
                editor->base()->name.c_str(), editor->steps().size(), medianOf(editorMs),
                medianOf(panesMs));
    EXPECT_TRUE(panes->text("Loop IR").contains("def "));
}
