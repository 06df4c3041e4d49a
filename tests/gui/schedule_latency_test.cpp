// Issue #19's live-update figure: a schedule edit of a ResNet-18 kernel (a
// stage-1 3x3 conv, Winograd in NCHW[b]c at -O2, and the 7x7 stem) updates
// the editor's loop IR on the UI thread and the code panes' loop IR, LLVM IR
// and assembly off it; the test measures both (median of 20 edits) and
// prints them. Nothing is asserted about the times.
#include <gtest/gtest.h>

#include <QElapsedTimer>
#include <QTemporaryDir>
#include <algorithm>
#include <cstdio>

#include "app/studio/schedule_editor.h"
#include "engine/frontend/onnx/onnx_importer.h"
#include "tests/engine/graph/passes/passes_test_util.h"
#include "tests/gui/studio_fixture.h"
#include "widgets/code_panes.h"

using namespace tessera;

namespace {

double medianOf(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

/// Opens a one-conv model (+ bias + relu) in the studio, makes 20 edits of its
/// kernel (the last step off, on, ...) and prints the medians.
void measureEdits(const std::string& what, std::vector<int64_t> in, std::vector<int64_t> w,
                  std::vector<int64_t> pads, std::vector<int64_t> strides) {
    using namespace passes::testing;
    graph::Graph g;
    g.name = "resnet_conv";
    int x = input(g, "x", in);
    int c = node(g, "nn.conv2d", "conv", {x, constant(g, "w", w, 1), constant(g, "b", {w[0]}, 2)},
                 {{"padding", pads}, {"strides", strides}});
    int r = node(g, "nn.relu", "relu", {c});
    g.outputs = {r};
    QTemporaryDir dir;
    const QString path = dir.filePath("conv.onnx");
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
        // The panes are set together; the loop IR changes with every edit
        // (the assembly may not: LLVM vectorizes a loop the step left serial).
        const QString before = panes->text("Loop IR");
        QElapsedTimer t;
        t.start();
        editor->setStepEnabled(last, i % 2 == 1);  // off, on, off, ...
        editorMs.push_back(double(t.nsecsElapsed()) * 1e-6);
        ASSERT_EQ(editor->errorStep(), -1) << editor->errorText().toStdString();
        ASSERT_TRUE(QTest::qWaitFor([&]() { return panes->text("Loop IR") != before; }, 30000))
            << "edit " << i << " did not reach the code panes";
        panesMs.push_back(double(t.nsecsElapsed()) * 1e-6);
    }
    std::printf("schedule edit of %s, kernel %s (%zu steps): editor loop IR %.1f ms, code panes "
                "(loop IR, LLVM IR, assembly) %.1f ms, median of 20 edits\n",
                what.c_str(), editor->base()->name.c_str(), editor->steps().size(),
                medianOf(editorMs), medianOf(panesMs));
    EXPECT_TRUE(panes->text("Loop IR").contains("def "));
    EXPECT_FALSE(panes->text("Assembly").isEmpty());
}

TEST(ScheduleEditorLatency, EditsOfResNetKernelsUpdateTheCodeLive) {
    // A stage-1 3x3 conv (Winograd at -O2) and the 7x7 stride-2 stem (ResNet-18's
    // slowest kernel, direct in NCHW[b]c).
    measureEdits("ResNet-18 stage-1 3x3 conv 64->64 56x56", {1, 64, 56, 56}, {64, 64, 3, 3},
                 {1, 1, 1, 1}, {1, 1});
    measureEdits("ResNet-18 stem 7x7/2 conv 3->64 224x224", {1, 3, 224, 224}, {64, 3, 7, 7},
                 {3, 3, 3, 3}, {2, 2});
}
