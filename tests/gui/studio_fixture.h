// A studio window with the example model open, and Run / Tune that wait for
// their result: shared by the GUI tests that drive whole jobs.
#pragma once

#include <QSignalSpy>
#include <QtTest/QTest>

#include "app/studio/main_window.h"
#include "tests/gui/gui_test_util.h"

namespace tessera::gui_test {

struct OpenStudio {
    studio::MainWindow window;
    bool ok = false;  // the model opened

    explicit OpenStudio(const QString& model = exampleModel()) {
        window.setDialogsSuppressed(true);
        window.show();
        QSignalSpy loaded(&window, &studio::MainWindow::modelLoaded);
        window.openModel(model);
        ok = loaded.wait(60000);
    }
    /// Runs the model; the result or null (with `error`) on failure.
    const studio::RunResult* run(QString* error = nullptr) {
        QSignalSpy finished(window.runs(), &tessera::studio::RunController::finished);
        QSignalSpy failed(window.runs(), &tessera::studio::RunController::failed);
        window.runs()->run();
        if (!QTest::qWaitFor([&]() { return finished.count() + failed.count() > 0; }, 60000))
            return nullptr;
        if (failed.count()) {
            if (error) *error = failed.first().first().toString();
            return nullptr;
        }
        return window.runs()->lastRun();
    }
    /// Tunes for `trials`; false (with `error`) on failure or timeout.
    bool tune(int trials, QString* error = nullptr) {
        QSignalSpy finished(window.tuning(), &tessera::studio::TuneController::finished);
        QSignalSpy failed(window.tuning(), &tessera::studio::TuneController::failed);
        window.tuning()->start(trials);
        if (!QTest::qWaitFor([&]() { return finished.count() + failed.count() > 0; }, 120000))
            return false;
        if (failed.count() && error) *error = failed.first().first().toString();
        return failed.count() == 0;
    }
};

}  // namespace tessera::gui_test
