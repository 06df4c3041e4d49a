// A studio window with the example model open, and Run / Tune that wait for
// their result: shared by the GUI tests that drive whole jobs.
#pragma once

#include <QSignalSpy>
#include <QtTest/QTest>

#include "app/studio/main_window.h"
#include "app/studio/schedule_editor.h"
#include "widgets/graph_view.h"
#include "tests/gui/gui_test_util.h"

namespace tessera::gui_test {

/// Selects `node` and waits until the schedule editor shows the kernel that
/// runs it (built in a job); null on timeout.
inline studio::ScheduleEditor* editorOn(studio::MainWindow& window, const std::string& node) {
    window.graphView()->setCurrentNode(window.document()->graph().find_node(node));
    studio::ScheduleEditor* editor = window.scheduleEditor();
    if (!QTest::qWaitFor([&]() { return editor->base().defined(); }, 60000)) return nullptr;
    return editor;
}

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
