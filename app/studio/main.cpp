// tessera-studio: the desktop app; with --screenshot it renders the window to
// a PNG and exits (works with QT_QPA_PLATFORM=offscreen).
#include <QApplication>
#include <QCommandLineParser>
#include <QEventLoop>
#include <QImage>
#include <QTimer>
#include <cstdio>

#include "app/studio/main_window.h"
#include "widgets/graph_view.h"

using tessera::studio::MainWindow;

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
            QObject::connect(&window, &MainWindow::runFinished, [&]() { finished = true; });
            QObject::connect(&window, &MainWindow::runFailed, [&](const QString& message) {
                std::fprintf(stderr, "warning: run failed: %s\n", qPrintable(message));
                finished = true;
            });
            window.runModel();
            if (!waitUntil([&]() { return finished; }, 120000))
                std::fprintf(stderr, "warning: run timed out\n");
        }
    }
    window.raiseView(view);
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
    QApplication app(argc, argv);
    QApplication::setApplicationName("tessera-studio");
    QApplication::setApplicationVersion("0.1.0");
    QApplication::setOrganizationName("Tessera");

    QCommandLineParser parser;
    parser.setApplicationDescription("Tessera Studio: view, lower and run deep-learning models.");
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument("model", "ONNX model to open.", "[MODEL]");
    const QCommandLineOption screenshotOption("screenshot",
                                              "Render the window to FILE.png and exit.", "FILE");
    const QCommandLineOption viewOption("view", "View to raise: graph, code or plots.", "NAME",
                                        "graph");
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
            std::fprintf(stderr, "error: unknown --view '%s' (use graph, code or plots)\n",
                         qPrintable(view));
            return kExitUserError;
        }
        window.show();
        if (screenshot) {
            return takeScreenshot(app, window, model, view, parser.value(screenshotOption));
        }
        if (!model.isEmpty()) window.openModel(model);
        return app.exec();
    } catch (const std::exception& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 3;
    }
}
