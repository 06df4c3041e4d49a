// The studio's CUDA target: the toolbar's target selector builds the whole
// model through driver::build for "cuda" (NVRTC), the code panes show the
// GPU kernel's loop IR, CUDA C and PTX as `tessera inspect --target cuda`
// prints them, Run says why it cannot run without a GPU, and Export writes
// the CUDA package `tessera compile --target cuda` writes (same PTX).
#include <gtest/gtest.h>

#include <QComboBox>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <fstream>
#include <sstream>

#include "app/studio/build_settings_bar.h"
#include "app/studio/schedule_editor.h"
#include "engine/codegen/cuda/nvrtc_library.h"
#include "engine/package/package_cuda.h"
#include "engine/package/tar.h"
#include "engine/runtime/cuda_driver.h"
#include "tests/gui/studio_fixture.h"
#include "widgets/code_panes.h"
#include "widgets/series_plot.h"

namespace tessera::gui_test {
namespace {

// The bytes of `member` in the package (tar) at `path`; empty when missing.
std::string packageMember(const QString& path, const std::string& member) {
    std::ifstream in(path.toStdString(), std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    for (const package::TarMember& m : package::read_tar(bytes.str(), path.toStdString()))
        if (m.name == member) return m.data;
    return {};
}

// Runs `tessera ARGS...`; its stdout, or "" with `error` set.
QString cli(const QStringList& args, QString* error) {
    QProcess p;
    p.start(TESSERA_CLI, args);
    if (!p.waitForFinished(120000) || p.exitCode() != 0) {
        *error = QString::fromUtf8(p.readAllStandardError());
        return {};
    }
    return QString::fromUtf8(p.readAllStandardOutput());
}

TEST(StudioCuda, CompilesTheModelForCudaAndExportsThePtxTheCliBuilds) {
    if (!codegen::nvrtc_available()) GTEST_SKIP() << codegen::nvrtc_unavailable_reason();
    QTemporaryDir dir;
    OpenStudio s;
    ASSERT_TRUE(s.ok);
    auto* target = s.window.settingsBar()->findChild<QComboBox*>("targetBox");
    ASSERT_NE(target, nullptr);
    target->setCurrentIndex(target->findData("cuda"));  // as the user picks it
    EXPECT_EQ(s.window.buildSettings().target, "cuda");
    EXPECT_TRUE(s.window.buildSettings().describe().startsWith("CUDA"));
    EXPECT_FALSE(s.window.buildSettings().describe().contains("thread"));  // the grid runs GPU kernels
    EXPECT_EQ(s.window.codePanes()->shownKind(1), "CUDA C");

    // The code panes show the GPU kernel of the selected node, as inspect prints it.
    QSignalSpy shown(&s.window, &studio::MainWindow::kernelCodeShown);
    s.window.graphView()->setCurrentNode(s.window.document()->graph().find_node("conv1"));
    ASSERT_TRUE(QTest::qWaitFor([&]() { return shown.count() > 0; }, 60000));
    widgets::CodePanes* panes = s.window.codePanes();
    QString error;
    for (const auto& [kind, print] :
         {std::pair{"Loop IR", "loop"}, {"CUDA C", "cuda"}, {"PTX", "ptx"}}) {
        const QString text = cli({"inspect", exampleModel(), "--target", "cuda", "--op", "conv1",
                                  "--print", print},
                                 &error);
        ASSERT_FALSE(text.isEmpty()) << error.toStdString();
        EXPECT_EQ(panes->text(kind).trimmed().toStdString(), text.trimmed().toStdString()) << kind;
    }
    EXPECT_TRUE(panes->text("Loop IR").contains("blockIdx.x"));
    EXPECT_TRUE(panes->text("PTX").contains(".entry"));
    // The editor's Measure times on the CPU: with Target CUDA it says so
    // rather than show a CPU time as the GPU kernel's.
    studio::ScheduleEditor* editor = s.window.scheduleEditor();
    ASSERT_TRUE(QTest::qWaitFor([&]() { return editor->base().defined(); }, 60000));
    QSignalSpy refused(editor, &studio::ScheduleEditor::measureFailed);
    editor->measure();
    ASSERT_TRUE(refused.wait(60000));
    EXPECT_TRUE(refused.first().at(0).toString().contains("Measure times kernels on the CPU"))
        << refused.first().at(0).toString().toStdString();
    EXPECT_EQ(editor->measurePlot()->pointCount(), 0);

    // Run: on a GPU it runs; without one it says what it compiled and why it cannot run.
    const studio::RunResult* run = s.run(&error);
    if (runtime::cuda::available()) {
        ASSERT_NE(run, nullptr) << error.toStdString();
        EXPECT_GT(run->medianMs, 0.0);
    } else {
        EXPECT_EQ(run, nullptr);
        EXPECT_TRUE(error.contains("kernels for CUDA")) << error.toStdString();
        EXPECT_TRUE(error.contains("no CUDA device")) << error.toStdString();
    }

    // Export writes the CUDA package; its PTX is `tessera compile --target cuda`'s.
    QSignalSpy exported(s.window.exports(), &tessera::studio::ExportController::exported);
    QSignalSpy failed(s.window.exports(), &tessera::studio::ExportController::failed);
    const QString studioPackage = dir.filePath("studio.tar");
    s.window.exports()->exportTo(studioPackage);
    ASSERT_TRUE(QTest::qWaitFor([&]() { return exported.count() + failed.count() > 0; }, 120000));
    ASSERT_EQ(failed.count(), 0) << failed.first().first().toString().toStdString();
    const QJsonObject meta =
        QJsonDocument::fromJson(exported.first().at(1).toString().toUtf8()).object();
    EXPECT_EQ(meta["target"].toString(), "cuda");
    const QString cliPackage = dir.filePath("cli.tar");
    ASSERT_FALSE(cli({"compile", exampleModel(), "--target", "cuda", "-o", cliPackage}, &error)
                     .isEmpty())
        << error.toStdString();
    const std::string ptx = packageMember(studioPackage, package::kPtxMember);
    ASSERT_FALSE(ptx.empty());
    EXPECT_EQ(ptx, packageMember(cliPackage, package::kPtxMember));
}

}  // namespace
}  // namespace tessera::gui_test
