// tessera-studio: the desktop app; with --screenshot it renders the window to
// a PNG and exits (works with QT_QPA_PLATFORM=offscreen).
#include <QApplication>
#include <QCommandLineParser>
#include <QEventLoop>
#include <QFileInfo>
#include <QIcon>
#include <QImage>
#include <QMessageBox>
#include <QTemporaryDir>
#include <QTimer>
#include <cstdio>

#include "app/studio/main_window.h"
#include "app/studio/pass_pipeline_panel.h"
#include "app/studio/schedule_editor.h"
#include "engine/schedule/schedule.h"
#include "widgets/code_panes.h"
#include "widgets/graph_view.h"

using tessera::studio::MainWindow;
using tessera::studio::RunController;
using tessera::studio::SessionController;
using tessera::studio::TuneController;

namespace {

constexpr int kExitUserError = 2;
// In screenshot mode a Run is done only for small models (a few seconds at most).
constexpr int kCheapRunMaxNodes = 40;
constexpr double kCheapRunMaxFlops = 2e9;

// Spins the event loop until `signal`-like condition `done()` holds or the timeout.
template <typename Done>
bool waitUntil(Done done, int timeoutMs) {
    QEventLoop loop;
    QTimer poll;
    QTimer deadline;
    deadline.setSingleShot(true);
    QObject::connect(&poll, &QTimer::timeout, &loop, [&]() {
        if (done()) loop.quit();
    });
    QObject::connect(&deadline, &QTimer::timeout, &loop, &QEventLoop::quit);
    poll.start(20);
    deadline.start(timeoutMs);
    if (!done()) loop.exec();
    return done();
}

// For the schedule view's screenshot: a few steps on the selected operator's
// biggest loop nest (parallel outer loop, split inner loop) and one measurement.
void showExampleSchedule(MainWindow& window) {
    tessera::studio::ScheduleEditor* editor = window.scheduleEditor();
    if (!editor->scheduled().defined()) return;
    try {
        tessera::schedule::Schedule s(editor->scheduled());
        std::vector<std::string> loops;
        for (const std::string& block : s.blocks())
            if (s.get_loops(block).size() > loops.size()) loops = s.get_loops(block);
        if (loops.size() < 4) return;
        editor->addStep(tessera::studio::makeStep("parallel", {loops[1]}));
        editor->addStep(tessera::studio::makeStep("split", {loops[3]}, {-1, 8}));
    } catch (const std::exception&) {
        return;  // nothing to show
    }
    bool done = false;
    QObject::connect(editor, &tessera::studio::ScheduleEditor::measured, [&]() { done = true; });
    QObject::connect(editor, &tessera::studio::ScheduleEditor::measureFailed,
                     [&]() { done = true; });
    editor->measure();
    waitUntil([&]() { return done; }, 60000);
    window.codePanes()->setDiffEnabled(true);
}

int takeScreenshot(QApplication& app, MainWindow& window, const QString& model, const QString& view,
                   const QString& file) {
    if (!model.isEmpty()) {
        QString error;
        bool loaded = false;
        QObject::connect(&window, &MainWindow::modelLoaded, [&]() { loaded = true; });
        QObject::connect(&window, &MainWindow::loadFailed,
                         [&](const QString& message) { error = message; });
        window.openModel(model);
        if (!waitUntil([&]() { return loaded || !error.isEmpty(); }, 300000) || !error.isEmpty()) {
            std::fprintf(stderr, "error: %s\n",
                         qPrintable(error.isEmpty() ? "timed out loading " + model : error));
            return kExitUserError;
        }
        const tessera::studio::ModelDocument* doc = window.document();
        if (doc && doc->nodeCount() <= kCheapRunMaxNodes &&
            doc->totalFlops() <= kCheapRunMaxFlops) {
            bool finished = false;
            QObject::connect(window.runs(), &RunController::finished, [&]() { finished = true; });
            QObject::connect(window.runs(), &RunController::failed, [&](const QString& message) {
                std::fprintf(stderr, "warning: run failed: %s\n", qPrintable(message));
                finished = true;
            });
            window.runs()->run();
            if (!waitUntil([&]() { return finished; }, 120000))
                std::fprintf(stderr, "warning: run timed out\n");
        }
    }
    if (view == "schedule") showExampleSchedule(window);
    if (view == "passes") {
        bool done = false;
        auto* panel = window.passPanel();
        QObject::connect(panel, &tessera::studio::PassPipelinePanel::applied,
                         [&]() { done = true; });
        QObject::connect(panel, &tessera::studio::PassPipelinePanel::applyFailed,
                         [&]() { done = true; });
        panel->apply();
        waitUntil([&]() { return done; }, 60000);
    }
    QTemporaryDir tuningDir;  // the screenshot's tuning database is thrown away
    if (view == "tuning" && window.document()) {
        bool done = false;
        window.workspace()->setTuningDatabase(tuningDir.filePath("tuning.jsonl"));
        QObject::connect(window.tuning(), &TuneController::finished, [&]() { done = true; });
        QObject::connect(window.tuning(), &TuneController::failed, [&](const QString& message) {
            std::fprintf(stderr, "warning: tuning failed: %s\n", qPrintable(message));
            done = true;
        });
        window.tuning()->start(48);
        waitUntil([&]() { return done; }, 120000);
    }
    if (view == "plots") {
        waitUntil([&]() { return !window.runs()->isMeasuringPeaks(); }, 60000);
        window.showPlot("roofline");
    }
    window.raiseView(view);
    // The code panes fill in from a background compile: wait for it.
    waitUntil([&]() { return !window.isCompilingCode(); }, 60000);
    app.processEvents();
    const QImage image = window.grab().toImage();
    if (!image.save(file, "PNG")) {
        std::fprintf(stderr, "error: cannot write screenshot %s\n", qPrintable(file));
        return kExitUserError;
    }
    std::printf("wrote %s (%dx%d)\n", qPrintable(file), image.width(), image.height());
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    // Without a display, --screenshot, --help and --version still work (offscreen).
    bool headlessOk = false;
    for (int i = 1; i < argc; ++i) {
        const QByteArray arg(argv[i]);
        if (arg == "--screenshot" || arg.startsWith("--screenshot=") || arg == "--help" ||
            arg == "-h" || arg == "--version" || arg == "-v")
            headlessOk = true;
    }
    if (headlessOk && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM") &&
        qEnvironmentVariableIsEmpty("DISPLAY") && qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    QApplication::setApplicationName("tessera-studio");
    QApplication::setApplicationVersion("0.1.0");
    QApplication::setOrganizationName("Tessera");
    QApplication::setWindowIcon(QIcon(":/icons/tessera-studio.svg"));

    QCommandLineParser parser;
    parser.setApplicationDescription("Tessera Studio: view, lower and run deep-learning models.");
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument("model", "ONNX model (or .tessera-session) to open.", "[MODEL]");
    const QCommandLineOption screenshotOption(
        "screenshot", "Render the window to FILE (a PNG image) and exit.", "FILE");
    const QCommandLineOption viewOption(
        "view", "View to raise: graph, schedule, code, passes, plots or tuning.", "NAME", "graph");
    parser.addOption(screenshotOption);
    parser.addOption(viewOption);
    parser.process(app);

    const QStringList positional = parser.positionalArguments();
    if (positional.size() > 1) {
        std::fprintf(stderr, "error: expected at most one MODEL, got %lld\n",
                     (long long)positional.size());
        return kExitUserError;
    }
    const QString model = positional.value(0);
    const QString view = parser.value(viewOption);
    const bool screenshot = parser.isSet(screenshotOption);

    try {
        MainWindow window;
        window.setDialogsSuppressed(screenshot);
        if (!window.raiseView(view)) {
            std::fprintf(
                stderr,
                "error: unknown --view '%s' (use graph, schedule, code, passes, plots or tuning)\n",
                qPrintable(view));
            return kExitUserError;
        }
        if (!screenshot) window.fitToScreen();  // a screenshot keeps the full default size
        window.show();
        if (screenshot) {
            return takeScreenshot(app, window, model, view, parser.value(screenshotOption));
        }
        if (model.endsWith(".tessera-session"))
            window.sessions()->open(model);
        else if (!model.isEmpty())
            window.openModel(model);
        else if (QFileInfo::exists(SessionController::autosavePath()) &&
                 QMessageBox::question(&window, "Recover session",
                                       "Tessera Studio did not exit normally. Recover the last "
                                       "session (model, edits and schedules)?") == QMessageBox::Yes)
            window.sessions()->open(SessionController::autosavePath());
        return app.exec();
    } catch (const std::exception& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 3;
    }
}
