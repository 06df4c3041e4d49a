// MainWindow behaviours: drop-to-open, rendering, bad files, selection, Run.
#include <gtest/gtest.h>

#include <QAction>
#include <QApplication>
#include <QDialog>
#include <QDockWidget>
#include <QFile>
#include <QFileInfo>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSettings>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTimer>
#include <QTreeView>
#include <QTreeWidget>
#include <QtTest/QTest>
#include <functional>

#include "app/studio/input_shape_dialog.h"
#include "app/studio/load_controller.h"
#include "app/studio/main_window.h"
#include "app/studio/schedule_editor.h"
#include "app/studio/window_shortcuts_first.h"
#include "tests/gui/gui_test_util.h"
#include "widgets/code_view.h"
#include "widgets/graph_view.h"
#include "widgets/perf_plot.h"

using tessera::studio::MainWindow;
using namespace tessera::gui_test;

namespace {

// A shown window with dialogs suppressed (tests must never block on a modal box).
struct Studio {
    MainWindow window;
    Studio() {
        window.setDialogsSuppressed(true);
        window.show();
    }
    /// Drops `path` on the window and waits until it is loaded and laid out.
    bool dropAndWait(const QString& path) {
        QSignalSpy loaded(&window, &MainWindow::modelLoaded);
        if (!dropFile(&window, path)) return false;
        return loaded.wait(60000);
    }
};

// The answers the input-shapes dialog remembers for `model` (keyed by its
// path), forgotten: a test starts from the proposals whatever ran before it,
// and leaves the other models' answers alone (tests run side by side).
void forgetInputAnswers(const QString& model) {
    QSettings settings;
    const QString prefix =
        "inputShapes/" + QFileInfo(model).absoluteFilePath().replace('/', '|') + "|";
    for (const QString& key : settings.allKeys())
        if (key.startsWith(prefix)) settings.remove(key);
    tessera::studio::rememberInputDir(model, "");
}

bool anyVisibleMessageBox() {
    for (QWidget* w : QApplication::topLevelWidgets())
        if (qobject_cast<QMessageBox*>(w) && w->isVisible()) return true;
    return false;
}

}  // namespace

TEST(StudioWindow, MessagesFollowTheNewestLineNearTheEndOnly) {
    // Near the end (a re-docked view sat a little above it) a new line
    // scrolls to the end; a user reading far above is left there.
    Studio studio;
    studio.window.resize(900, 600);
    QPlainTextEdit* view = studio.window.messagesView();
    for (int i = 0; i < 300; ++i) studio.window.log(QString("line %1").arg(i));
    QScrollBar* bar = view->verticalScrollBar();
    ASSERT_GT(bar->maximum(), 0);
    bar->setValue(bar->maximum() - bar->pageStep() / 2);
    studio.window.log("newest");
    EXPECT_EQ(bar->value(), bar->maximum());
    bar->setValue(0);
    studio.window.log("newer still");
    EXPECT_EQ(bar->value(), 0);
}

TEST(StudioWindow, DropOpensModelWithOneItemPerNode) {
    Studio studio;
    ASSERT_TRUE(studio.dropAndWait(exampleModel()));
    const tessera::studio::ModelDocument* doc = studio.window.document();
    ASSERT_NE(doc, nullptr);
    EXPECT_EQ(doc->path(), exampleModel());
    // Test-case folders all hold a model.onnx: the title names the folder too.
    EXPECT_TRUE(studio.window.windowTitle().startsWith("small_cnn/model.onnx"))
        << studio.window.windowTitle().toStdString();
    const auto items = studio.window.graphView()->nodeItems();
    ASSERT_EQ(items.size(), doc->nodeCount());
    ASSERT_GT(items.size(), 0);
    for (int i = 0; i < items.size(); ++i) {
        EXPECT_EQ(items[i]->nodeIndex(), i);
        EXPECT_EQ(items[i]->op().toStdString(), doc->graph().nodes[i].op);
    }
    // One edge item per producer->consumer use.
    EXPECT_EQ(studio.window.graphView()->edgeItems().size(), doc->graphViewData().edges.size());
}

// View > Reset layout puts every dock back in the window (a saved layout
// can leave them floating over it, or hidden).
TEST(StudioWindow, ResetLayoutDocksEveryDockAgain) {
    Studio studio;
    QList<QDockWidget*> docks = studio.window.findChildren<QDockWidget*>();
    ASSERT_GE(docks.size(), 5);
    docks[0]->setFloating(true);
    docks[1]->hide();
    QAction* reset = studio.window.findChild<QAction*>("viewResetLayout");
    ASSERT_NE(reset, nullptr);
    reset->trigger();
    QApplication::processEvents();
    for (QDockWidget* dock : docks) {
        EXPECT_FALSE(dock->isFloating()) << dock->objectName().toStdString();
        EXPECT_FALSE(dock->isHidden()) << dock->objectName().toStdString();
    }
}

// In the default layout the Schedule tab shares the right column with the
// Performance dock: shown, it grows until the editor's buttons are in view
// (they sat below the visible area, behind the dock's own scrollbar).
TEST(StudioWindow, TheScheduleTabGrowsUntilTheEditorsButtonsAreInView) {
    Studio studio;
    studio.window.resize(1600, 1000);
    studio.window.findChild<QAction*>("viewResetLayout")->trigger();
    QApplication::processEvents();
    QDockWidget* dock = studio.window.findChild<QDockWidget*>("ScheduleDock");
    ASSERT_NE(dock, nullptr);
    dock->raise();
    QTest::qWait(50);
    QApplication::processEvents();
    QPushButton* measure = nullptr;
    for (QPushButton* b : studio.window.scheduleEditor()->findChildren<QPushButton*>())
        if (b->text() == "Measure") measure = b;
    ASSERT_NE(measure, nullptr);
    auto* area = qobject_cast<QScrollArea*>(dock->widget());
    ASSERT_NE(area, nullptr);
    const QRect shown = area->viewport()->rect();
    const QRect button(measure->mapTo(area->viewport(), QPoint(0, 0)), measure->size());
    EXPECT_TRUE(shown.contains(button))
        << "button at y " << button.top() << ".." << button.bottom() << ", view height "
        << shown.height() << " editor min "
        << studio.window.scheduleEditor()->minimumSizeHint().height() << " editor h "
        << studio.window.scheduleEditor()->height() << " dock " << dock->height() << " perf "
        << studio.window.findChild<QDockWidget*>("PerformanceDock")->height();
    QDockWidget* perf = studio.window.findChild<QDockWidget*>("PerformanceDock");
    EXPECT_GE(perf->height(), 150);
}

// Model > Input files... on a static model: it reopens for the folder's
// input_N.pb files and Run says it runs on them (not random inputs); a
// folder without input_0.pb is refused and the model stays as it was.
TEST(StudioWindow, InputFilesOfAStaticModelAreWhatRunRuns) {
    Studio studio;
    ASSERT_TRUE(studio.dropAndWait(exampleModel()));
    EXPECT_TRUE(studio.window.document()->inputDir().isEmpty());
    QTemporaryDir empty;
    EXPECT_FALSE(studio.window.loads()->useInputFiles(empty.path()));
    EXPECT_TRUE(studio.window.document()->inputDir().isEmpty());
    const QString dir = QFileInfo(exampleModel()).absolutePath() + "/test_data_set_0";
    QSignalSpy loaded(&studio.window, &MainWindow::modelLoaded);
    ASSERT_TRUE(studio.window.loads()->useInputFiles(dir));
    ASSERT_TRUE(loaded.wait(60000));
    EXPECT_EQ(studio.window.document()->inputDir(), dir);
    QSignalSpy finished(studio.window.runs(), &tessera::studio::RunController::finished);
    studio.window.runs()->run();
    ASSERT_TRUE(finished.wait(120000));
    EXPECT_TRUE(
        studio.window.messagesView()->toPlainText().contains("on the input files in " + dir))
        << studio.window.messagesView()->toPlainText().toStdString();
}

TEST(StudioWindow, RendersANonBlankWindow) {
    Studio studio;
    ASSERT_TRUE(studio.dropAndWait(exampleModel()));
    QApplication::processEvents();
    const QImage image = studio.window.grab().toImage();
    ASSERT_FALSE(image.isNull());
    EXPECT_GE(image.width(), 800);
    EXPECT_GT(distinctColors(image), 50);
    // The graph area alone is not blank either (boxes and text over the background).
    const QImage graph = studio.window.graphView()->grab().toImage();
    EXPECT_GT(distinctColors(graph), 10);
}

TEST(StudioWindow, NonOnnxDropIsRefused) {
    Studio studio;
    EXPECT_FALSE(dropFile(&studio.window, QString(TESSERA_SOURCE_DIR) + "/CMakeLists.txt"));
    EXPECT_EQ(studio.window.document(), nullptr);
}

// A test-case folder (model.onnx and test_data_set_0/), as the command line
// takes it, opens its model (it said "no such file").
TEST(StudioWindow, ATestCaseFolderOpensItsModel) {
    Studio studio;
    QSignalSpy loaded(&studio.window, &MainWindow::modelLoaded);
    studio.window.openModel(QFileInfo(exampleModel()).absolutePath());
    ASSERT_TRUE(loaded.wait(60000));
    EXPECT_EQ(studio.window.document()->path(), exampleModel());
}

TEST(StudioWindow, BadFileKeepsPreviousModelAndLogsError) {
    Studio studio;
    ASSERT_TRUE(studio.dropAndWait(exampleModel()));
    const int nodes = studio.window.document()->nodeCount();

    QTemporaryDir dir;
    ASSERT_TRUE(dir.isValid());
    const QString bad = dir.filePath("broken.onnx");
    QFile file(bad);
    ASSERT_TRUE(file.open(QIODevice::WriteOnly));
    file.write("this is not a protobuf \x01\x02\x03 at all");
    file.close();

    QSignalSpy failed(&studio.window, &MainWindow::loadFailed);
    EXPECT_TRUE(dropFile(&studio.window, bad));
    ASSERT_TRUE(failed.count() > 0 || failed.wait(30000));
    const QString message = failed.first().first().toString();
    EXPECT_FALSE(message.isEmpty());
    EXPECT_EQ(message.count('\n'), 0) << message.toStdString();

    EXPECT_EQ(studio.window.document()->path(), exampleModel());
    EXPECT_EQ(studio.window.graphView()->nodeItems().size(), nodes);
    const QString log = studio.window.messagesView()->toPlainText();
    EXPECT_TRUE(log.contains("error")) << log.toStdString();
    EXPECT_TRUE(log.contains(message)) << log.toStdString();
    EXPECT_FALSE(anyVisibleMessageBox());
}

// Opening a file never runs code from it: a compiled package renamed
// model.onnx is refused by the ONNX parser, and no lib.so is mapped.
TEST(StudioWindow, APackageRenamedOnnxIsRefusedAndItsCodeNeverLoaded) {
    Studio studio;
    QTemporaryDir dir;
    ASSERT_TRUE(dir.isValid());
    const QString disguised = dir.filePath("model.onnx");
    ASSERT_TRUE(QFile::copy(QString(TESSERA_SOURCE_DIR) + "/fuzz/corpus/package_load/relu.tar", disguised));
    auto mapped_package_libs = [] {
        QFile maps("/proc/self/maps");
        if (!maps.open(QIODevice::ReadOnly)) return -1;
        const QString text = QString::fromLatin1(maps.readAll());
        return int(text.count("tessera-package-lib") + text.count("tessera-lib-"));
    };
    const int before = mapped_package_libs();
    QSignalSpy failed(&studio.window, &MainWindow::loadFailed);
    EXPECT_TRUE(dropFile(&studio.window, disguised));
    ASSERT_TRUE(failed.count() > 0 || failed.wait(30000));
    EXPECT_TRUE(failed.first().first().toString().contains("model.onnx"));
    EXPECT_EQ(studio.window.document(), nullptr);
    EXPECT_EQ(mapped_package_libs(), before);
    EXPECT_FALSE(anyVisibleMessageBox());
}

TEST(StudioWindow, MissingFileIsAnErrorToo) {
    Studio studio;
    QSignalSpy failed(&studio.window, &MainWindow::loadFailed);
    studio.window.openModel("/nonexistent/model.onnx");
    ASSERT_TRUE(failed.count() > 0 || failed.wait(10000));
    EXPECT_EQ(studio.window.document(), nullptr);
    EXPECT_TRUE(studio.window.messagesView()->toPlainText().contains("/nonexistent/model.onnx"));
}

TEST(StudioWindow, SelectingANodeShowsLoopIrAndProperties) {
    Studio studio;
    ASSERT_TRUE(studio.dropAndWait(exampleModel()));
    const auto* doc = studio.window.document();
    // After loading, the first conv (or first node) is selected already.
    EXPECT_EQ(studio.window.graphView()->currentNode(), doc->preferredNode());
    for (int node = 0; node < doc->nodeCount(); ++node) {
        QSignalSpy shown(&studio.window, &MainWindow::kernelCodeShown);
        studio.window.graphView()->setCurrentNode(node);
        // The code of the kernel that runs the node, built in a job.
        ASSERT_TRUE(shown.wait(30000)) << "node " << node;
        EXPECT_FALSE(shown.last().first().toString().isEmpty()) << "node " << node;
        const QString code = studio.window.codeView()->toPlainText();
        EXPECT_TRUE(code.contains("T.block")) << "node " << node << ":\n" << code.toStdString();
        const QAbstractItemModel* props = studio.window.propertiesView()->model();
        ASSERT_GE(props->rowCount(), 2);
        EXPECT_EQ(props->index(0, 1).data().toString().toStdString(), doc->graph().nodes[node].op);
        EXPECT_EQ(props->index(1, 1).data().toString().toStdString(), doc->graph().nodes[node].name);
    }
}

// The arrow keys in the graph move the selection to a consumer (Down) or a
// producer (Up), and the panels follow as for a click: the properties and
// the code of the kernel that runs the node.
TEST(StudioWindow, ArrowKeysInTheGraphSelectNodesAndThePanelsFollow) {
    Studio studio;
    ASSERT_TRUE(studio.dropAndWait(exampleModel()));
    const auto* doc = studio.window.document();
    const int conv1 = doc->graph().find_node("conv1"), relu1 = doc->graph().find_node("relu1");
    ASSERT_GE(conv1, 0);
    ASSERT_GE(relu1, 0);
    tessera::widgets::GraphView* view = studio.window.graphView();
    view->setCurrentNode(conv1);
    view->setFocus();
    const QAbstractItemModel* props = studio.window.propertiesView()->model();
    auto shownName = [&]() { return props->index(1, 1).data().toString().toStdString(); };
    for (const auto& [key, node] : {std::pair{Qt::Key_Down, relu1}, std::pair{Qt::Key_Up, conv1}}) {
        QSignalSpy shown(&studio.window, &MainWindow::kernelCodeShown);
        QTest::keyClick(view, key);
        ASSERT_EQ(view->currentNode(), node);
        EXPECT_EQ(shownName(), doc->graph().nodes[size_t(node)].name);
        ASSERT_TRUE(shown.wait(30000));
        // conv1 and relu1 run in one fused kernel, which the code panes name.
        EXPECT_TRUE(shown.last().first().toString().contains("relu1"))
            << shown.last().first().toString().toStdString();
    }
}

TEST(StudioWindow, RunShowsOneBarPerKernel) {
    Studio studio;
    ASSERT_TRUE(studio.dropAndWait(exampleModel()));
    QSignalSpy finished(studio.window.runs(), &tessera::studio::RunController::finished);
    QSignalSpy failed(studio.window.runs(), &tessera::studio::RunController::failed);
    studio.window.runs()->run();
    EXPECT_TRUE(studio.window.runs()->isRunning());  // the UI thread did not wait
    ASSERT_TRUE(QTest::qWaitFor([&]() { return finished.count() + failed.count() > 0; }, 180000));
    ASSERT_EQ(failed.count(), 0) << failed.first().first().toString().toStdString();
    const tessera::studio::RunResult* run = studio.window.runs()->lastRun();
    ASSERT_NE(run, nullptr);
    ASSERT_GT(run->kernels.size(), 0);
    EXPECT_EQ(studio.window.runs()->perfPlot()->barCount(), run->kernels.size());
    EXPECT_GT(run->medianMs, 0);
    EXPECT_GT(run->gflops, 0);
    EXPECT_TRUE(studio.window.runs()->perfLabel()->text().contains("GFLOP/s"));
    // The kernels' cold-cache times and their sum, which exceeds the latency, are said so.
    EXPECT_TRUE(studio.window.runs()->perfLabel()->text().contains("kernels timed with cold caches"));
    // The summary wraps: one long line would widen its dock and squeeze the graph.
    EXPECT_LT(studio.window.runs()->perfLabel()->minimumSizeHint().width(), 400);
    EXPECT_TRUE(studio.window.runs()->kernelTable()->horizontalHeaderItem(1)->toolTip().contains(
        "more than the latency"));
    EXPECT_FALSE(studio.window.runs()->isRunning());
}

TEST(StudioWindow, OpeningAnotherModelDropsTheRunningJob) {
    Studio studio;
    ASSERT_TRUE(studio.dropAndWait(exampleModel()));
    QSignalSpy finished(studio.window.runs(), &tessera::studio::RunController::finished);
    studio.window.runs()->run();
    ASSERT_TRUE(studio.dropAndWait(otherModel()));
    EXPECT_FALSE(studio.window.runs()->isRunning());
    // Whatever the old job returns later must not show up.
    QTest::qWait(200);
    EXPECT_EQ(studio.window.runs()->lastRun(), nullptr);
    EXPECT_EQ(studio.window.runs()->perfPlot()->barCount(), 0);
    EXPECT_EQ(studio.window.document()->path(), otherModel());
}

// A model with a symbolic dim (x: batch×3) opens: the shapes are asked for
// (here, dialogs suppressed, the proposal: batch = 1), the log says which
// were used, and the answer is remembered for the next opening of that file.
TEST(StudioWindow, TheViewMenuNamesDocksWhateverTheirTitle) {
    Studio studio;
    QDockWidget* code = studio.window.findChild<QDockWidget*>("CodeDock");
    ASSERT_NE(code, nullptr);
    code->setWindowTitle("Code \u2014 fused_conv1_relu1");  // as the schedule editor titles it
    QAction* toggle = studio.window.findChild<QAction*>("viewCodeDock");
    ASSERT_NE(toggle, nullptr);
    EXPECT_EQ(toggle->text(), "Code");
    toggle->trigger();
    EXPECT_EQ(code->isVisible(), toggle->isChecked());
    toggle->trigger();
    EXPECT_TRUE(code->isVisible());
    EXPECT_TRUE(toggle->isChecked());
}

// A line edit as X11's key bindings make it: Ctrl+E and Ctrl+A are its
// cursor moves, taken before the window's shortcuts (offscreen tests run
// with the Windows key scheme, where they are not).
class X11LineEdit : public QLineEdit {
protected:
    bool event(QEvent* e) override {
        if (e->type() == QEvent::ShortcutOverride) {
            auto* k = static_cast<QKeyEvent*>(e);
            if (k->modifiers() == Qt::ControlModifier &&
                (k->key() == Qt::Key_E || k->key() == Qt::Key_A)) {
                k->accept();
                return true;
            }
        }
        return QLineEdit::event(e);
    }
};

// A window shortcut reaches its action from a field that would take the key
// as a cursor move (Ctrl+E: Export package, from the node search on X11);
// the field keeps its editing keys.
TEST(StudioWindow, WindowShortcutsPassAFieldThatWouldTakeThemAsCursorMoves) {
    for (const bool pass : {false, true}) {
        QWidget window;
        auto* field = new X11LineEdit;
        field->setParent(&window);
        auto* exportAction = new QAction("Export", &window);
        exportAction->setShortcut(Qt::CTRL | Qt::Key_E);
        window.addAction(exportAction);
        auto* copyAction = new QAction("Copy", &window);
        copyAction->setShortcut(QKeySequence::Copy);
        window.addAction(copyAction);
        if (pass) tessera::studio::letWindowShortcutsPass(field, &window);
        window.show();
        QApplication::setActiveWindow(&window);
        ASSERT_TRUE(QTest::qWaitForWindowActive(&window));
        field->setFocus();
        QSignalSpy exported(exportAction, &QAction::triggered),
            copied(copyAction, &QAction::triggered);
        QTest::keyClick(field, Qt::Key_E, Qt::ControlModifier);
        EXPECT_EQ(exported.count(), pass ? 1 : 0) << (pass ? "with" : "without");
        field->setText("conv");
        field->selectAll();
        QTest::keyClick(field, Qt::Key_C, Qt::ControlModifier);  // the field's copy
        EXPECT_EQ(copied.count(), 0);
    }
}

// Ctrl+E (Export package) works while the node search has focus. No model is
// open, so the action runs and shows no dialog.
TEST(StudioWindow, ExportShortcutWorksWhileTheSearchBoxHasFocus) {
    Studio studio;
    // Export needs a model (greyed out before one is open).
    QAction* save = studio.window.findChild<QAction*>("fileSaveSession");
    ASSERT_NE(save, nullptr);
    EXPECT_FALSE(save->isEnabled());
    ASSERT_TRUE(studio.dropAndWait(exampleModel()));
    EXPECT_TRUE(save->isEnabled());
    QApplication::setActiveWindow(&studio.window);
    ASSERT_TRUE(QTest::qWaitForWindowActive(&studio.window));
    QAction* exportAction = nullptr;
    for (QAction* a : studio.window.findChildren<QAction*>())
        if (a->shortcut() == QKeySequence(Qt::CTRL | Qt::Key_E)) exportAction = a;
    ASSERT_NE(exportAction, nullptr);
    // Only whether the shortcut reaches the action: not its file dialog.
    QObject::disconnect(exportAction, &QAction::triggered, nullptr, nullptr);
    QSignalSpy exported(exportAction, &QAction::triggered);
    QLineEdit* search = studio.window.searchBox();
    search->setFocus();
    search->setText("conv");
    search->setCursorPosition(0);
    QTest::keyClick(search, Qt::Key_E, Qt::ControlModifier);
    EXPECT_EQ(exported.count(), 1);
    // The End key still moves the cursor.
    QTest::keyClick(search, Qt::Key_End);
    EXPECT_EQ(search->cursorPosition(), 4);
}

// When the shapes the studio proposed itself (every symbolic dim 1) do not
// open the model, the dialog says so, instead of blaming an answer the user
// never gave; a user's failed answer is named as theirs.
TEST(StudioWindow, TheShapeDialogSaysWhoseShapesFailed) {
    const QString model =
        QString(TESSERA_SOURCE_DIR) + "/tests/data/onnx_models/symbolic_batch/model.onnx";
    tessera::studio::InputShapeRequest request = tessera::studio::inputShapeRequest(model);
    request.error = "window of extent 2 does not fit the padded input extent 1";
    for (const bool proposal : {true, false}) {
        request.proposalFailed = proposal;
        QString shown;
        QTimer::singleShot(0, [&]() {
            QWidget* dialog = QApplication::activeModalWidget();
            ASSERT_NE(dialog, nullptr);
            if (auto* why = dialog->findChild<QLabel*>("inputShapeError")) shown = why->text();
            static_cast<QDialog*>(dialog)->reject();
        });
        QString error;
        EXPECT_FALSE(tessera::studio::askInputShapes(nullptr, request, false, &error));
        EXPECT_TRUE(error.isEmpty()) << error.toStdString();  // a cancel, not an error
        EXPECT_EQ(shown.toStdString(), (proposal ? "The proposed shapes do not fit the model: "
                                                 : "Not opened with the last answer: ") +
                                           request.error.toStdString());
    }
    // The studio's own proposal (no dialog) is not remembered as an answer.
    forgetInputAnswers(model);
    request.error.clear();
    QString error;
    ASSERT_TRUE(tessera::studio::askInputShapes(nullptr, request, true, &error));
    const QString key =
        "inputShapes/" + QFileInfo(model).absoluteFilePath().replace('/', '|') + "|x";
    EXPECT_FALSE(QSettings().contains(key));
}

TEST(StudioWindow, AMissingWeightsFileIsAnErrorNotAShapeQuestion) {
    // A model with a symbolic batch whose initializer lies in weights.bin,
    // absent: the error names the file (no input-shapes dialog, which no
    // shape can satisfy), and the model open before stays open.
    const QString model =
        QString(TESSERA_SOURCE_DIR) + "/tests/data/onnx_models/external_data_missing/model.onnx";
    Studio studio;
    ASSERT_TRUE(studio.dropAndWait(exampleModel()));
    const auto before = studio.window.document();
    QSignalSpy failed(&studio.window, &MainWindow::loadFailed);
    // Dialogs shown as a user sees them: the error's message box is closed,
    // any other dialog (the input-shapes one) counted and cancelled.
    studio.window.setDialogsSuppressed(false);
    bool dialog = false;
    QTimer poll;
    QObject::connect(&poll, &QTimer::timeout, [&]() {
        if (QWidget* w = QApplication::activeModalWidget()) {
            if (!qobject_cast<QMessageBox*>(w)) dialog = true;
            static_cast<QDialog*>(w)->reject();
        }
    });
    poll.start(20);
    ASSERT_TRUE(dropFile(&studio.window, model));
    ASSERT_TRUE(failed.wait(60000));
    EXPECT_FALSE(dialog);
    const QString message = failed.at(0).at(0).toString();
    EXPECT_TRUE(message.contains("its data file 'weights.bin' is missing beside the model"))
        << message.toStdString();
    EXPECT_FALSE(message.contains("shape", Qt::CaseInsensitive)) << message.toStdString();
    EXPECT_EQ(studio.window.document(), before);
}

TEST(StudioWindow, SymbolicInputDimsAreAskedForAndRemembered) {
    const QString model =
        QString(TESSERA_SOURCE_DIR) + "/tests/data/onnx_models/symbolic_batch/model.onnx";
    const tessera::studio::InputShapeRequest request = tessera::studio::inputShapeRequest(model);
    ASSERT_EQ(request.names, std::vector<std::string>{"x"});
    EXPECT_EQ(tessera::studio::declaredShape(request.names[0], request.dims[0]),
              QString("x: batch") + QChar(0x00d7) + "3");
    forgetInputAnswers(model);  // this model's answers only: other tests may run meanwhile
    const QString key =
        "inputShapes/" + QFileInfo(model).absoluteFilePath().replace('/', '|') + "|x";
    EXPECT_EQ(tessera::studio::proposedShape(model, "x", request.dims[0]), "1x3");
    {
        Studio studio;
        ASSERT_TRUE(studio.dropAndWait(model));
        const auto& g = studio.window.document()->graph();
        EXPECT_EQ(g.values[size_t(g.inputs[0])].type.shape, (std::vector<int64_t>{1, 3}));
        EXPECT_TRUE(studio.window.messagesView()->toPlainText().contains("Input shapes x:1"));
    }
    // A shape given once (the dialog writes what the user typed) is proposed next time.
    QSettings().setValue(key, "5x3");
    EXPECT_EQ(tessera::studio::proposedShape(model, "x", request.dims[0]), "5x3");
    Studio studio;
    ASSERT_TRUE(studio.dropAndWait(model));
    const auto& g = studio.window.document()->graph();
    EXPECT_EQ(g.values[size_t(g.inputs[0])].type.shape, (std::vector<int64_t>{5, 3}));
    // The symbolic dim keeps its name beside the size given: "batch=5".
    EXPECT_EQ(g.values[size_t(g.inputs[0])].dim_names, (std::vector<std::string>{"batch", ""}));
    std::function<bool(const QVector<tessera::studio::PropertyRow>&)> names_batch =
        [&](const QVector<tessera::studio::PropertyRow>& rows) {
            for (const auto& row : rows)
                if (row.value.contains("batch=5, 3") || names_batch(row.children)) return true;
            return false;
        };
    EXPECT_TRUE(names_batch(studio.window.document()->properties(0)));
    // A remembered answer of the wrong rank is not proposed.
    QSettings().setValue(key, "5x3x7");
    EXPECT_EQ(tessera::studio::proposedShape(model, "x", request.dims[0]), "1x3");
    forgetInputAnswers(model);
}

// A model with symbolic dims opens with the proposed shapes without asking;
// Run (as Tune and Export) asks first, keeps them when the answer does, and
// reopens the model with other ones when it does not (here the remembered
// answer changes between the two, as a user's typing would), then runs.
TEST(StudioWindow, SymbolicDimsAreConfirmedWhenTheModelIsFirstBuilt) {
    // A copy of its own: the remembered answers are keyed by the model's path
    // and shared with the other tests, which may run at the same time.
    QTemporaryDir dir;
    ASSERT_TRUE(dir.isValid());
    const QString model = dir.filePath("symbolic_batch.onnx");
    ASSERT_TRUE(QFile::copy(
        QString(TESSERA_SOURCE_DIR) + "/tests/data/onnx_models/symbolic_batch/model.onnx", model));
    forgetInputAnswers(model);
    const QString key =
        "inputShapes/" + QFileInfo(model).absoluteFilePath().replace('/', '|') + "|x";
    Studio studio;
    ASSERT_TRUE(studio.dropAndWait(model));
    ASSERT_TRUE(studio.window.document()->provisionalShapes().has_value());
    EXPECT_TRUE(studio.window.messagesView()->toPlainText().contains(
        "proposed for the symbolic input dims"));
    QSignalSpy finished(studio.window.runs(), &tessera::studio::RunController::finished);
    studio.window.runs()->run();
    ASSERT_TRUE(finished.count() > 0 || finished.wait(120000));
    EXPECT_FALSE(studio.window.document()->provisionalShapes().has_value());  // confirmed

    Studio again;
    ASSERT_TRUE(again.dropAndWait(model));
    ASSERT_TRUE(again.window.document()->provisionalShapes().has_value());
    QSettings().setValue(key, "5x3");
    ASSERT_EQ(tessera::studio::proposedShape(model, "x", {"batch", "3"}), "5x3");
    QSignalSpy reloaded(&again.window, &MainWindow::modelLoaded);
    QSignalSpy ran(again.window.runs(), &tessera::studio::RunController::finished);
    again.window.runs()->run();  // the answer differs: the model reopens, then runs
    ASSERT_TRUE(reloaded.count() > 0 || reloaded.wait(60000));
    ASSERT_TRUE(ran.count() > 0 || ran.wait(120000));
    EXPECT_EQ(ran.count(), 1);
    const auto& g = again.window.document()->graph();
    EXPECT_EQ(g.values[size_t(g.inputs[0])].type.shape, (std::vector<int64_t>{5, 3}));
    EXPECT_FALSE(again.window.document()->provisionalShapes().has_value());  // given, not proposed
    forgetInputAnswers(model);
}

// A model whose graph depends on an input's value (an If on a sample rate,
// as silero_vad's) does not open with shapes alone: the dialog takes a folder
// of input files instead, the import freezes the value it needs from them,
// and Run runs on those files.
TEST(StudioWindow, AModelThatNeedsAnInputsValueOpensForInputFiles) {
    const QString folder = QString(TESSERA_SOURCE_DIR) + "/tests/data/onnx_models/if_on_sample_rate";
    const QString model = folder + "/model.onnx";
    forgetInputAnswers(model);
    {
        Studio studio;  // the proposed shapes alone (n = 1): a branch does not reshape
        QSignalSpy failed(&studio.window, &MainWindow::loadFailed);
        studio.window.openModel(model);
        ASSERT_TRUE(failed.count() > 0 || failed.wait(60000));
        EXPECT_TRUE(failed.first().first().toString().contains("cannot reshape"))
            << failed.first().first().toString().toStdString();
    }
    tessera::studio::rememberInputDir(model, folder + "/test_data_set_0");
    Studio studio;
    ASSERT_TRUE(studio.dropAndWait(model));
    EXPECT_EQ(studio.window.document()->inputDir(), folder + "/test_data_set_0");
    const auto& g = studio.window.document()->graph();
    ASSERT_EQ(g.inputs.size(), 1u);  // sr frozen into the graph
    EXPECT_EQ(g.values[size_t(g.inputs[0])].type.shape, (std::vector<int64_t>{1, 8}));
    // Run runs on the folder's files (a random x would do too; a random sr would not).
    QSignalSpy finished(studio.window.runs(), &tessera::studio::RunController::finished);
    QSignalSpy failed(studio.window.runs(), &tessera::studio::RunController::failed);
    studio.window.runs()->run();
    ASSERT_TRUE(QTest::qWaitFor([&]() { return finished.count() + failed.count() > 0; }, 120000));
    EXPECT_EQ(failed.count(), 0) << failed.first().first().toString().toStdString();
    forgetInputAnswers(model);
}
