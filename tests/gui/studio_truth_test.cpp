// Issue 18: what the studio shows, runs, tunes and exports comes from one set
// of build settings (opt level, passes, threads, tuning records); a change
// marks the last Run stale; tuning applies where Run runs.
#include <gtest/gtest.h>
#include <qcustomplot.h>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QListView>
#include <QProcess>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QUndoStack>
#include <cstdio>
#include <map>
#include <string>

#include "app/studio/build_settings_bar.h"
#include "app/studio/layer_error_table.h"
#include "app/studio/machine_peaks.h"
#include "app/studio/pass_pipeline_panel.h"
#include "app/studio/throughput_text.h"
#include "engine/autotune/database.h"
#include "engine/driver/driver.h"
#include "tests/gui/studio_fixture.h"
#include "widgets/code_panes.h"
#include "widgets/graph_view.h"
#include "widgets/roofline_plot.h"

using namespace tessera;
using namespace tessera::gui_test;
using studio::RunResult;

namespace {

QStringList kernelNames(const RunResult& run) {
    QStringList names;
    for (const auto& k : run.kernels) names << k.kernel;
    return names;
}

int multiNodeKernels(const RunResult& run) {
    int n = 0;
    for (const auto& k : run.kernels) n += k.nodes.size() > 1 ? 1 : 0;
    return n;
}

void setPassChecked(studio::PassPipelinePanel* panel, const QString& pass, bool checked) {
    QAbstractItemModel* list = panel->passList()->model();
    const QModelIndexList items = list->match(list->index(0, 0), Qt::DisplayRole, pass, -1,
                                              Qt::MatchExactly);
    ASSERT_EQ(items.size(), 1) << pass.toStdString();
    list->setData(items.first(), checked ? Qt::Checked : Qt::Unchecked, Qt::CheckStateRole);
}

}  // namespace

TEST(StudioTruth, TheOptLevelSelectsThePassesRunBuildsWith) {
    OpenStudio s;
    ASSERT_TRUE(s.ok);
    EXPECT_EQ(s.window.buildSettings().passes, studio::defaultPasses(2));
    s.window.settingsBar()->setOptLevel(1);
    EXPECT_EQ(s.window.passPanel()->pipeline(), studio::defaultPasses(1));
    EXPECT_FALSE(s.window.passPanel()->pipeline().contains("convert_layout"));
    const RunResult* run = s.run();
    ASSERT_NE(run, nullptr);
    EXPECT_EQ(run->settings.optLevel, 1);
    EXPECT_EQ(run->settings.passes, studio::defaultPasses(1));
    // -O1 has no layout pass: no blocked-layout (NCHWc) kernel ran.
    for (const auto& k : run->kernels) EXPECT_FALSE(k.loopIr.contains("NCHWc")) << k.kernel.toStdString();
    EXPECT_EQ(s.window.sessions()->currentSession().optLevel, 1);
}

TEST(StudioTruth, UntickingAPassChangesWhatRunRunsAndMarksTheResultStale) {
    OpenStudio s;
    ASSERT_TRUE(s.ok);
    const RunResult* fused = s.run();
    ASSERT_NE(fused, nullptr);
    const QStringList before = kernelNames(*fused);  // the next Run replaces the result
    ASSERT_GT(multiNodeKernels(*fused), 0);
    EXPECT_TRUE(s.window.runs()->staleReason().isEmpty());
    EXPECT_TRUE(s.window.runs()->lastRunLabel()->text().startsWith("Last run: -O2"))
        << s.window.runs()->lastRunLabel()->text().toStdString();

    setPassChecked(s.window.passPanel(), "fuse_ops", false);
    EXPECT_EQ(s.window.runs()->staleReason(), "passes");
    EXPECT_TRUE(s.window.runs()->lastRunLabel()->text().contains("stale: passes changed"))
        << s.window.runs()->lastRunLabel()->text().toStdString();
    EXPECT_TRUE(s.window.runs()->perfLabel()->text().startsWith("Stale"));

    const RunResult* unfused = s.run();
    ASSERT_NE(unfused, nullptr);
    EXPECT_EQ(multiNodeKernels(*unfused), 0);  // one kernel per node
    EXPECT_NE(kernelNames(*unfused), before);
    EXPECT_FALSE(unfused->settings.passes.contains("fuse_ops"));
    EXPECT_TRUE(s.window.runs()->staleReason().isEmpty());
    EXPECT_FALSE(s.window.runs()->perfLabel()->text().startsWith("Stale"));

    // Ticking it again makes the shown (unfused) run stale; so does the thread count.
    setPassChecked(s.window.passPanel(), "fuse_ops", true);
    s.window.settingsBar()->setThreads(s.window.settingsBar()->threads() + 1);
    EXPECT_EQ(s.window.runs()->staleReason(), "passes, threads");
}

TEST(StudioTruth, TuneThenRunAppliesTheRecordsAtTheRunsThreadCountAndExportKeepsThem) {
    QTemporaryDir dir;
    OpenStudio s;
    ASSERT_TRUE(s.ok);
    const QString db = dir.filePath("tuning.jsonl");
    s.window.workspace()->setTuningDatabase(db);
    s.window.settingsBar()->setThreads(2);
    QString error;
    ASSERT_TRUE(s.tune(8, &error)) << error.toStdString();
    // Every record was measured at the thread count Run uses.
    autotune::Database records(db.toStdString(), /*read_only=*/true);
    ASSERT_FALSE(records.records().empty());
    for (const auto& r : records.records()) EXPECT_EQ(r.threads, 2);
    EXPECT_TRUE(s.window.runs()->staleReason().isEmpty());  // nothing ran yet

    const RunResult* tuned = s.run(&error);
    ASSERT_NE(tuned, nullptr) << error.toStdString();
    EXPECT_GT(tuned->recordsApplied, 0);
    EXPECT_TRUE(tuned->recordsSkipped.isEmpty()) << tuned->recordsSkipped.join("\n").toStdString();
    int flagged = 0;
    for (const auto& k : tuned->kernels) flagged += k.tuned ? 1 : 0;
    EXPECT_EQ(flagged, tuned->recordsApplied);
    EXPECT_TRUE(s.window.runs()->lastRunLabel()->text().contains(QString("%1 tuned").arg(tuned->recordsApplied)))
        << s.window.runs()->lastRunLabel()->text().toStdString();
    const int applied = tuned->recordsApplied;  // the next Run replaces the result

    // At another thread count the records are skipped, and Run says why.
    s.window.settingsBar()->setThreads(1);
    const RunResult* other = s.run(&error);
    ASSERT_NE(other, nullptr) << error.toStdString();
    EXPECT_EQ(other->recordsApplied, 0);
    ASSERT_FALSE(other->recordsSkipped.isEmpty());
    EXPECT_TRUE(other->recordsSkipped.first().contains("tuned for 2 thread(s), this build runs 1"))
        << other->recordsSkipped.first().toStdString();

    // Export builds with the same settings and names the records it used.
    s.window.settingsBar()->setThreads(2);
    QSignalSpy exported(s.window.exports(), &tessera::studio::ExportController::exported);
    QSignalSpy failed(s.window.exports(), &tessera::studio::ExportController::failed);
    s.window.exports()->exportTo(dir.filePath("model.tar"));
    ASSERT_TRUE(QTest::qWaitFor([&]() { return exported.count() + failed.count() > 0; }, 120000));
    ASSERT_EQ(failed.count(), 0) << failed.first().first().toString().toStdString();
    const QJsonObject meta =
        QJsonDocument::fromJson(exported.first().at(1).toString().toUtf8()).object();
    EXPECT_EQ(meta["records"].toString(), db);
    EXPECT_EQ(meta["threads"].toInt(), 2);
    EXPECT_EQ(meta["opt_level"].toInt(), 2);
    EXPECT_EQ(meta["tuned_kernels"].toArray().size(), applied);
}

namespace {

// Per kernel (task name): the default schedule's time over the best record's,
// as the tuner measured them (the baseline record and the best confirmed one).
std::map<std::string, double> tunedGains(const autotune::Database& db) {
    std::map<std::string, double> defaults, gains;
    for (const auto& r : db.records())
        if (r.baseline && r.ok()) defaults[r.task] = r.median_ms();
    for (const auto& r : db.records()) {
        const autotune::TuningRecord* best = db.best(r.workload, "llvm", r.opt_level, r.threads);
        if (best && defaults.count(r.task)) gains[r.task] = defaults[r.task] / best->median_ms();
    }
    return gains;
}

double kernelMs(const RunResult& run, const QString& kernel) {
    for (const auto& k : run.kernels)
        if (k.kernel == kernel) return k.ms;
    return -1;
}

}  // namespace

// The done-when's "tune -> Run -> the tuned kernels' times drop", timed: at -O1
// the tuner finds schedules well ahead of some default ones (the NCHW max pool
// on AVX-512 machines), and the Run after tuning runs those kernels faster than
// the Run before.
TEST(StudioTruth, TuneThenRunTheTunedKernelsRunFasterThanBefore) {
    QTemporaryDir dir;
    OpenStudio s;
    ASSERT_TRUE(s.ok);
    s.window.workspace()->setTuningDatabase(dir.filePath("tuning.jsonl"));
    s.window.settingsBar()->setOptLevel(1);
    s.window.settingsBar()->setThreads(1);
    QString error;
    const RunResult* first = s.run(&error);
    ASSERT_NE(first, nullptr) << error.toStdString();
    EXPECT_EQ(first->recordsApplied, 0);
    const RunResult before = *first;  // the next Run replaces it

    ASSERT_TRUE(s.tune(48, &error)) << error.toStdString();
    const RunResult* after = s.run(&error);
    ASSERT_NE(after, nullptr) << error.toStdString();
    ASSERT_GT(after->recordsApplied, 0);
    EXPECT_TRUE(s.window.runs()->lastRunLabel()->text().contains(QString("%1 tuned").arg(after->recordsApplied)));

    const std::map<std::string, double> gains =
        tunedGains(autotune::Database(dir.filePath("tuning.jsonl").toStdString(), true));
    double tunedBefore = 0, tunedAfter = 0;
    int clearWins = 0;
    for (const auto& k : after->kernels) {
        if (!k.tuned) continue;
        const double was = kernelMs(before, k.kernel);
        ASSERT_GT(was, 0) << k.kernel.toStdString() << " did not run before tuning";
        tunedBefore += was;
        tunedAfter += k.ms;
        auto gain = gains.find(k.kernel.toStdString());
        std::printf("  %s: %.4f -> %.4f ms (tuner: %.2fx)\n", qPrintable(k.kernel), was, k.ms,
                    gain == gains.end() ? 0.0 : gain->second);
        if (gain != gains.end() && gain->second >= 2.0) {  // a clear win by the tuner's clock
            ++clearWins;
            EXPECT_LT(k.ms, was) << k.kernel.toStdString() << ": tuned " << gain->second
                                 << "x faster, but Run did not get faster";
        }
    }
    std::printf("  tuned kernels in all: %.4f -> %.4f ms (%d clear wins)\n", tunedBefore, tunedAfter,
                clearWins);
    // Where the tuner won clearly (the 16-lane AVX-512 machines: the max pool
    // 2-3x), Run is faster; a 1.5x win on a 2 us kernel (the global pool on a
    // Zen 4, by the tuner 1.33-1.51x from run to run) is within what a Run's
    // timing of it swings when ctest runs another test beside it. Where the defaults are already the best it finds (an
    // AVX2 Zen 3: every kernel within 1.1x, mostly the default's own trace
    // confirmed), these 5-20 us kernels swing by up to 35 % between two Runs on
    // a 2-vCPU machine, so only a gross slowdown fails.
    if (clearWins > 0)
        EXPECT_LT(tunedAfter, tunedBefore);
    else
        EXPECT_LT(tunedAfter, tunedBefore * 1.5);
}

namespace {

// What `tessera inspect MODEL ARGS...` prints (stdout), or "" with `error` set.
QString inspect(const QStringList& args, QString* error) {
    QProcess cli;
    cli.start(TESSERA_CLI, QStringList{"inspect", exampleModel()} + args);
    if (!cli.waitForFinished(120000) || cli.exitCode() != 0) {
        *error = QString::fromUtf8(cli.readAllStandardError());
        return {};
    }
    return QString::fromUtf8(cli.readAllStandardOutput());
}

// Selects `node` and waits until the code panes show its kernel.
QString selectAndWaitForKernel(OpenStudio& s, const char* node) {
    QSignalSpy shown(&s.window, &studio::MainWindow::kernelCodeShown);
    s.window.graphView()->setCurrentNode(s.window.document()->graph().find_node(node));
    if (!QTest::qWaitFor([&]() { return shown.count() > 0; }, 60000)) return "(timeout)";
    return shown.last().first().toString();
}

}  // namespace

TEST(StudioTruth, TheCodePanesShowTheKernelThatRunsAsInspectPrintsIt) {
    OpenStudio s;
    ASSERT_TRUE(s.ok);
    const QString threads = QString::number(s.window.settingsBar()->threads());
    EXPECT_EQ(selectAndWaitForKernel(s, "conv1"), "fused_conv1_relu1");
    widgets::CodePanes* panes = s.window.codePanes();
    QString error;
    for (const auto& [kind, print] : {std::pair{"Loop IR", "loop"}, {"LLVM IR", "llvm"}, {"Assembly", "asm"}}) {
        const QString cli = inspect({"--opt-level", "2", "--threads", threads, "--op", "conv1",
                                     "--print", print},
                                    &error);
        ASSERT_FALSE(cli.isEmpty()) << error.toStdString();
        EXPECT_EQ(panes->text(kind).trimmed().toStdString(), cli.trimmed().toStdString()) << kind;
    }
    const QString cuda = inspect({"--target", "cuda", "--op", "conv1", "--print", "cuda"}, &error);
    ASSERT_FALSE(cuda.isEmpty()) << error.toStdString();
    EXPECT_EQ(panes->text("CUDA C").trimmed().toStdString(), cuda.trimmed().toStdString());
    EXPECT_TRUE(panes->text("CUDA C").contains("__global__"));
    // The kernel's nodes are highlighted in the graph.
    const int relu = s.window.document()->graph().find_node("relu1");
    EXPECT_TRUE(s.window.graphView()->nodeItems()[relu]->highlight().isValid());

    // Another opt level builds another kernel, and the panes follow it.
    s.window.settingsBar()->setOptLevel(1);
    ASSERT_TRUE(QTest::qWaitFor([&]() { return !s.window.isCompilingCode(); }, 60000));
    QTest::qWait(50);
    ASSERT_TRUE(QTest::qWaitFor([&]() { return !s.window.isCompilingCode(); }, 60000));
    const QString o1 = inspect({"--opt-level", "1", "--threads", threads, "--op", "conv1",
                                "--print", "loop"},
                               &error);
    ASSERT_FALSE(o1.isEmpty()) << error.toStdString();
    EXPECT_EQ(panes->text("Loop IR").trimmed().toStdString(), o1.trimmed().toStdString());
}

// Honest numbers: no kernel of the example models plots above the roofline
// (the Winograd kernels plot the work they execute, not their effective
// FLOPs), and the ceilings say how they were measured.
// Waits until the machine's ceilings are measured and no kernel plots above
// them by more than `slack`, measuring both again (the kernels by another Run,
// the ceilings keeping the best of each) up to three times: on a busy machine
// (a parallel ctest, other builds) one measurement of either may meet a load
// the other did not. A kernel above the roof in every round still fails.
static QStringList kernelsAboveAfterRemeasuring(OpenStudio& s, double slack) {
    const widgets::RooflinePlot* roofline = s.window.runs()->rooflinePlot();
    auto settled = [&]() {
        return QTest::qWaitFor([&]() {
            return s.window.runs()->machinePeaks() != nullptr && !s.window.runs()->isMeasuringPeaks();
        }, 60000);
    };
    if (!settled()) return {"the machine's ceilings were not measured"};
    for (int again = 0; again < 3 && !roofline->kernelsAbove(slack).isEmpty(); ++again) {
        if (!s.run()) return {"the Run measuring again failed"};
        s.window.runs()->measurePeaks();
        if (!settled()) return {"the machine's ceilings were not measured again"};
    }
    return roofline->kernelsAbove(slack);
}

TEST(StudioTruth, NoKernelOfTheExampleModelsPlotsAboveTheRoofline) {
    for (const QString& model :
         {exampleModel(), QString(TESSERA_SOURCE_DIR) + "/tests/data/onnx_models/winograd_convs.onnx"}) {
        SCOPED_TRACE(model.toStdString());
        OpenStudio s(model);
        ASSERT_TRUE(s.ok);
        QString error;
        ASSERT_NE(s.run(&error), nullptr) << error.toStdString();
        const QStringList above = kernelsAboveAfterRemeasuring(s, 0.15);
        EXPECT_TRUE(above.isEmpty()) << above.join("\n").toStdString();
        const RunResult* run = s.window.runs()->lastRun();
        ASSERT_NE(run, nullptr);
        const widgets::RooflinePlot* roofline = s.window.runs()->rooflinePlot();
        EXPECT_GT(roofline->kernelCount(), 0);
        EXPECT_GT(roofline->peakGflops(), 0);
        EXPECT_TRUE(roofline->plot()->toolTip().contains("FMA")) << roofline->plot()->toolTip().toStdString();
        // The whole model's FLOPs are the ops' definitions: what the document counts.
        double flops = 0;
        for (const auto& k : run->kernels) flops += k.flops;
        EXPECT_NEAR(flops, s.window.document()->totalFlops(), 1e-6 * flops);
        // Legible results: a sortable kernel table and a heat map on the model's nodes.
        EXPECT_EQ(s.window.runs()->kernelTable()->rowCount(), run->kernels.size());
        int heated = 0;
        for (const widgets::GraphNodeItem* item : s.window.graphView()->nodeItems())
            heated += item->fillColor() != widgets::colorForOp(item->op()) ? 1 : 0;
        EXPECT_EQ(heated, s.window.document()->nodeCount());  // every node ran in some kernel
        const studio::MachinePeaks* peaks = s.window.runs()->machinePeaks();
        EXPECT_LE(peaks->gflopsOneCore, peaks->gflops);  // one core never beats them all
        // The threads ran together: not a sum of separate runs (which gave 1.75x here);
        // the slack covers a test beside this one slowing one of the measurements.
        EXPECT_LE(peaks->gflops, peaks->gflopsOneCore * peaks->cores * 1.5);
    }
}

// An integer GEMM (vpdpbusd) runs above the float FMA peak (int8_dense: about
// 800 GOP/s against 270 GFLOP/s on one thread here): it plots under the
// measured integer ceiling. The ceilings are measured again (best of each)
// while a point is above them: a measurement beside a busy parallel test
// can come out low, but no number of them lifts a float roof above an
// integer kernel.
// The roofline's memory roofs run from L1 to DRAM, and an L3 that measures
// no faster than memory (a VM's share of the host's L3: half of it read at
// DRAM speed) is left out rather than drawn at or under the DRAM roof. (The
// order of the others is not checked: a test beside this one on the other
// core can slow any single measurement.)
TEST(StudioTruth, NoL3RoofAtOrUnderTheMemoryRoof) {
    const studio::MachinePeaks peaks = studio::measureMachinePeaks();
    ASSERT_GE(peaks.roofs.size(), 3);
    EXPECT_EQ(peaks.roofs.front().name, "L1");
    EXPECT_EQ(peaks.roofs.back().name, "DRAM");
    for (const auto& roof : peaks.roofs)
        if (roof.name == "L3")
            EXPECT_GT(roof.gbps, peaks.roofs.back().gbps) << peaks.method().toStdString();
}

// How the editor's Measure and the log word a kernel's throughput: int8
// dot products as GOP/s, a Winograd kernel's direct-conv FLOPs as
// "effective" with the work it executes.
TEST(StudioTruth, ThroughputTextSaysWhatTheNumberCounts) {
    EXPECT_EQ(studio::throughputText(391.54, 0, true).toStdString(), "391.54 GOP/s (int8)");
    EXPECT_EQ(studio::throughputText(391.54, 180.2, false).toStdString(),
              "391.54 GFLOP/s effective (executes 180.20 GFLOP/s)");
    EXPECT_EQ(studio::throughputText(12.5, 0, false).toStdString(), "12.50 GFLOP/s");
    // A model with a Winograd conv: its figure counts direct FLOPs and may
    // exceed the float peak (malvizv1's ResNet-18 read 308 against 257).
    EXPECT_EQ(studio::modelThroughputUnit(false, true).toStdString(),
              "GFLOP/s effective (Winograd convs counted as direct ones)");
    EXPECT_EQ(studio::modelThroughputUnit(true).toStdString(), "GOP/s (int8 and float operations)");
}

TEST(StudioTruth, AFartherMemoryLevelIsNeverFasterThanACloserOne) {
    // Two cores: the private L1 and L2 halve for one thread, the shared L3
    // and DRAM do not; one thread's L3 read faster than its L2 (124 against
    // 98 GB/s in a GUI test). Each level is capped by the closer one.
    studio::MachinePeaks peaks;
    peaks.cores = 2;
    peaks.roofs = {{"L1", 386, true}, {"L2", 196, true}, {"L3", 124, false}, {"DRAM", 37, false}};
    EXPECT_DOUBLE_EQ(peaks.gbpsFor(peaks.roofs[0], 1), 193);
    EXPECT_DOUBLE_EQ(peaks.gbpsFor(peaks.roofs[1], 1), 98);
    EXPECT_DOUBLE_EQ(peaks.gbpsFor(peaks.roofs[2], 1), 98);
    EXPECT_DOUBLE_EQ(peaks.gbpsFor(peaks.roofs[3], 1), 37);
    EXPECT_DOUBLE_EQ(peaks.gbpsFor(peaks.roofs[2], 2), 124);  // all cores: as measured
}

TEST(StudioTruth, IntegerGemmsPlotUnderTheIntegerCeiling) {
    OpenStudio s(QString(TESSERA_SOURCE_DIR) + "/tests/data/onnx_models/int8_dense.onnx");
    ASSERT_TRUE(s.ok);
    // One thread: its ceiling is one core's, which a test running beside
    // this one on the other core does not lower (the all-core ceiling it
    // does, while the kernel may be timed when that core is free).
    s.window.settingsBar()->setThreads(1);
    QString error;
    const RunResult* run = s.run(&error);
    ASSERT_NE(run, nullptr) << error.toStdString();
    ASSERT_TRUE(std::any_of(run->kernels.begin(), run->kernels.end(),
                            [](const studio::KernelTime& k) { return k.integer; }));
    const QStringList above = kernelsAboveAfterRemeasuring(s, 0.15);
    const widgets::RooflinePlot* roofline = s.window.runs()->rooflinePlot();
    EXPECT_TRUE(above.isEmpty()) << above.join("\n").toStdString();
    if (roofline->integerPeak() > 0)  // AVX-512 VNNI or AVX-VNNI
        EXPECT_TRUE(roofline->plot()->toolTip().contains("vpdpbusd"))
            << roofline->plot()->toolTip().toStdString();
    // Its throughput reads as int8 operations, not as GFLOP/s against the
    // float peak: the headline, and the integer kernels' notes.
    const QString headline = s.window.runs()->perfLabel()->text();
    EXPECT_TRUE(headline.contains("GOP/s (int8 and float operations)")) << headline.toStdString();
    EXPECT_FALSE(headline.contains("GFLOP/s")) << headline.toStdString();
    const QTableWidget* table = s.window.runs()->kernelTable();
    int noted = 0;
    for (int row = 0; row < table->rowCount(); ++row)
        noted += table->item(row, 5) && table->item(row, 5)->text().contains("int8 GOP/s");
    EXPECT_EQ(noted, int(std::count_if(run->kernels.begin(), run->kernels.end(),
                                       [](const studio::KernelTime& k) { return k.integer; })));
    EXPECT_EQ(table->horizontalHeaderItem(3)->text().toStdString(), "GFLOP/s | GOP/s");
    EXPECT_TRUE(roofline->plot()->yAxis->label().contains("GOP/s"))
        << roofline->plot()->yAxis->label().toStdString();
    s.window.runs()->clearResult();  // as another model opens
    EXPECT_EQ(table->horizontalHeaderItem(3)->text().toStdString(), "GFLOP/s");
}

// A QDQ model's quantized tensors show their scale and zero point in the
// properties of the nodes that make or read them.
TEST(StudioTruth, QuantizedTensorsShowTheirScaleAndZeroPoint) {
    OpenStudio s(QString(TESSERA_SOURCE_DIR) + "/tests/data/onnx_models/qdq_matmul/model.onnx");
    ASSERT_TRUE(s.ok);
    const graph::Graph& g = s.window.document()->graph();
    int producer = -1;
    for (size_t i = 0; i < g.nodes.size(); ++i)
        for (int o : g.nodes[i].outputs)
            if (g.values[size_t(o)].name == "xa_q") producer = int(i);
    ASSERT_GE(producer, 0);
    QString shown;
    for (const auto& row : s.window.document()->properties(producer))
        for (const auto& child : row.children)
            for (const auto& grandchild : child.children)
                if (grandchild.key == "quantization") shown = grandchild.value;
    EXPECT_EQ(shown.toStdString(), "uint8, scale 0.01569, zero point 128");
    // The QuantizeLinear imports as several nodes of its name (divide, round,
    // ...): its first one, the one the graph shows first, names the mapping too.
    int first = -1;
    for (size_t i = 0; i < g.nodes.size() && first < 0; ++i)
        if (g.nodes[i].name == g.nodes[size_t(producer)].name) first = int(i);
    ASSERT_NE(first, producer);
    QString mapped;
    for (const auto& row : s.window.document()->properties(first))
        if (row.key == "quantized tensor") {
            EXPECT_EQ(row.value, "%xa_q");
            for (const auto& child : row.children)
                for (const auto& grandchild : child.children)
                    if (grandchild.key == "quantization") mapped = grandchild.value;
        }
    EXPECT_EQ(mapped, shown);
}

// Graph editing that finishes the job: insert a node (one with a standard
// ONNX form and one without), save as ONNX, reopen: the same graph.
TEST(StudioTruth, InsertedNodesSaveAsOnnxAndReopenAsTheSameGraph) {
    QTemporaryDir dir;
    OpenStudio s;
    ASSERT_TRUE(s.ok);
    QSignalSpy changed(&s.window, &studio::MainWindow::graphChanged);
    const int relu = s.window.document()->graph().find_node("relu1");
    ASSERT_TRUE(s.window.edits()->insertNodeAfter(relu, "sigmoid", "gate"));
    ASSERT_TRUE(changed.wait(30000));
    const int gate = s.window.document()->graph().find_node("gate");
    ASSERT_GE(gate, 0);
    EXPECT_EQ(s.window.graphView()->currentNode(), gate);  // the new node is selected
    ASSERT_TRUE(s.window.edits()->insertNodeAfter(gate, "nn.hard_sigmoid", "hard", {{"alpha", 0.3}, {"beta", 0.4}}));
    ASSERT_TRUE(changed.wait(30000));
    // Refused: the op does not take the input; nothing changes.
    const int nodes = s.window.document()->nodeCount();
    EXPECT_FALSE(s.window.edits()->insertNodeAfter(gate, "nn.conv2d", "bad"));
    EXPECT_EQ(s.window.document()->nodeCount(), nodes);

    const QString path = dir.filePath("edited.onnx");
    QSignalSpy saved(s.window.edits(), &studio::EditController::saved);
    ASSERT_TRUE(s.window.edits()->saveOnnx(path));  // written by a job, off the UI thread
    ASSERT_TRUE(saved.count() > 0 || saved.wait(30000));
    const graph::Graph reopened = driver::load_model(path.toStdString());
    EXPECT_EQ(graph::print(reopened), graph::print(s.window.document()->graph()));
    // The session file keeps the insertions (op, name, attributes) for replay.
    studio::Session session;
    QString error;
    ASSERT_TRUE(studio::Session::fromJson(s.window.sessions()->currentSession().toJson(), "s", &session, &error))
        << error.toStdString();
    ASSERT_EQ(session.edits.size(), 2u);
    EXPECT_EQ(session.edits[1].kind, graph::GraphEdit::Kind::InsertAfter);
    EXPECT_EQ(session.edits[1].key, "nn.hard_sigmoid");
    EXPECT_EQ(session.edits[1].name, "hard");
    EXPECT_EQ(std::get<double>(session.edits[1].attrs.at("beta")), 0.4);
    // Undo takes both insertions back.
    s.window.undoStack()->undo();
    s.window.undoStack()->undo();
    EXPECT_LT(s.window.document()->graph().find_node("gate"), 0);
}

// Runs of one document share its compiled kernels: Run again compiles none,
// another thread count (other code) compiles them again, and going back
// finds the first ones; the performance line says how many were compiled.
TEST(StudioTruth, ARunCompilesOnlyTheKernelsThatChanged) {
    OpenStudio s;
    ASSERT_TRUE(s.ok);
    s.window.settingsBar()->setThreads(1);
    const RunResult* first = s.run();
    ASSERT_NE(first, nullptr);
    const int kernels = first->kernelCount;
    ASSERT_GT(kernels, 0);
    EXPECT_GT(first->kernelsCompiled, 0);
    EXPECT_LE(first->kernelsCompiled, kernels);
    const RunResult* again = s.run();
    ASSERT_NE(again, nullptr);
    EXPECT_EQ(again->kernelsCompiled, 0);
    EXPECT_TRUE(s.window.runs()->perfLabel()->text().contains(
        QString("(0 of %1 kernels compiled").arg(kernels)))
        << s.window.runs()->perfLabel()->text().toStdString();
    s.window.settingsBar()->setThreads(2);
    const RunResult* two = s.run();
    ASSERT_NE(two, nullptr);
    EXPECT_GT(two->kernelsCompiled, 0);
    s.window.settingsBar()->setThreads(1);
    const RunResult* back = s.run();
    ASSERT_NE(back, nullptr);
    EXPECT_EQ(back->kernelsCompiled, 0);
}

// After a Run of a QDQ model, the Performance dock's "Int8 error" tab lists
// each layer's error against the model's float reading; a float model's Run
// leaves it empty.
TEST(StudioTruth, AQuantizedModelsRunShowsTheInt8ErrorPerLayer) {
    OpenStudio s(QString(TESSERA_SOURCE_DIR) + "/tests/data/onnx_models/qdq_conv/model.onnx");
    ASSERT_TRUE(s.ok);
    const RunResult* run = s.run();
    ASSERT_NE(run, nullptr);
    ASSERT_FALSE(run->layerErrors.isEmpty()) << run->layerErrorNote.toStdString();
    bool conv = false;
    for (const studio::LayerErrorRow& e : run->layerErrors) {
        EXPECT_GE(e.relRms, 0.0) << e.tensor.toStdString();
        if (e.tensor == "c0") {
            conv = true;
            EXPECT_GT(e.maxAbs, 0.0);
            EXPECT_LT(e.relRms, 0.1);
        }
    }
    EXPECT_TRUE(conv);
    const QTableWidget* table = s.window.runs()->layerErrorTable();
    EXPECT_EQ(table->rowCount(), run->layerErrors.size());

    OpenStudio f;  // the example model: float
    ASSERT_TRUE(f.ok);
    const RunResult* plain = f.run();
    ASSERT_NE(plain, nullptr);
    EXPECT_TRUE(plain->layerErrors.isEmpty());
    // No error rows: one line saying what the tab compares and why there is
    // nothing here (float, or quantized dynamically).
    const QTableWidget* none = f.window.runs()->layerErrorTable();
    ASSERT_EQ(none->rowCount(), 1);
    EXPECT_TRUE(none->item(0, 0)->text().contains("QuantizeLinear -> DequantizeLinear"));
    EXPECT_TRUE(none->item(0, 0)->text().contains("dynamically"));
}
