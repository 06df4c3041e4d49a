// Widget behaviours added for issue 9: graph search, export, overview, group
// boxes, line diff, code panes (find, diff), series plot and plot export.
#include <gtest/gtest.h>
#include <qcustomplot.h>

#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest/QTest>
#include <cmath>
#include <functional>

#include "tests/gui/gui_test_util.h"
#include "widgets/code_panes.h"
#include "widgets/code_view.h"
#include "widgets/graph_view.h"
#include "widgets/series_plot.h"
#include "widgets/text_diff.h"

using namespace tessera::widgets;

namespace {

GraphViewData chain(int n) {
    GraphViewData data;
    for (int i = 0; i < n; ++i)
        data.nodes.append({i % 2 ? "nn.relu" : "nn.conv2d", QString("layer%1").arg(i), {}, "1×8×8×8"});
    for (int i = 0; i + 1 < n; ++i) data.edges.append({i, i + 1});
    return data;
}

bool layOut(GraphView& view, const GraphViewData& data) {
    QSignalSpy finished(&view, &GraphView::layoutFinished);
    view.setGraph(data);
    return finished.wait(30000);
}

}  // namespace

TEST(GraphViewSearch, FindsByNameOrOpAndSelectsMatchesInTurn) {
    GraphView view;
    ASSERT_TRUE(layOut(view, chain(6)));
    EXPECT_EQ(view.findNodes("RELU"), (QVector<int>{1, 3, 5}));
    EXPECT_EQ(view.findNodes("layer4"), (QVector<int>{4}));
    EXPECT_TRUE(view.findNodes("nothing").isEmpty());
    view.setCurrentNode(0);
    EXPECT_EQ(view.search("relu"), 3);
    EXPECT_EQ(view.currentNode(), 1);
    EXPECT_TRUE(view.nodeItems()[3]->highlight().isValid());
    EXPECT_FALSE(view.nodeItems()[0]->highlight().isValid());
    view.search("relu");
    EXPECT_EQ(view.currentNode(), 3);
    view.search("relu");
    view.search("relu");
    EXPECT_EQ(view.currentNode(), 1);  // wrapped around
}

// Several nodes of one name (an ONNX conv imported as its windows, its GEMM
// and their sums): a new search lands on the heaviest, Enter again goes on
// in order.
TEST(GraphViewSearch, ANewSearchLandsOnTheHeaviestNodeOfThatName) {
    GraphViewData data;
    for (const auto& [op, weight] : std::vector<std::pair<QString, double>>{{"nn.im2col_int8x4", 0},
                                                                            {"nn.matmul_i8u8", 2e8},
                                                                            {"reduce_sum", 1e4},
                                                                            {"nn.relu", 1e3}})
        data.nodes.append({op, op == "nn.relu" ? "relu" : "conv_18", {}, {}, weight});
    for (int i = 0; i + 1 < data.nodes.size(); ++i) data.edges.append({i, i + 1});
    GraphView view;
    ASSERT_TRUE(layOut(view, data));
    EXPECT_EQ(view.search("conv_18"), 3);
    EXPECT_EQ(view.currentNode(), 1);  // the GEMM, not the windows
    view.search("conv_18");
    EXPECT_EQ(view.currentNode(), 2);
    view.search("conv");  // no node is named exactly so: the first match
    EXPECT_EQ(view.currentNode(), 0);
}

TEST(GraphViewNodes, ShowShapeAndColourByOpFamily) {
    GraphView view;
    ASSERT_TRUE(layOut(view, chain(2)));
    EXPECT_EQ(view.nodeItems()[0]->shapeText(), "1×8×8×8");
    EXPECT_NE(view.nodeItems()[0]->fillColor(), view.nodeItems()[1]->fillColor());
    EXPECT_EQ(colorForOp("nn.conv2d"), colorForOp("nn.conv2d_transpose"));
}

TEST(GraphViewExport, WritesSvgAndPng) {
    GraphView view;
    ASSERT_TRUE(layOut(view, chain(5)));
    QTemporaryDir dir;
    const QString svg = dir.filePath("g.svg"), png = dir.filePath("g.png");
    ASSERT_TRUE(view.exportImage(svg));
    ASSERT_TRUE(view.exportImage(png));
    QFile file(svg);
    ASSERT_TRUE(file.open(QIODevice::ReadOnly));
    const QByteArray text = file.readAll();
    EXPECT_TRUE(text.contains("<svg"));
    EXPECT_TRUE(text.contains("layer3"));  // labels are text, not pixels
    const QImage image(png);
    ASSERT_FALSE(image.isNull());
    EXPECT_GT(tessera::gui_test::distinctColors(image), 10);
}

TEST(GraphViewOverview, ShownOnlyWhenTheGraphDoesNotFit) {
    GraphView view;
    view.resize(500, 400);
    view.show();
    ASSERT_TRUE(layOut(view, chain(3)));
    EXPECT_FALSE(view.overview()->isVisible());
    ASSERT_TRUE(layOut(view, chain(300)));
    EXPECT_TRUE(view.overview()->isVisible());
    // Clicking in the overview moves the main view there.
    const QRectF before = view.overview()->visibleArea();
    const QPoint bottom(view.overview()->width() / 2, view.overview()->height() - 3);
    QTest::mouseClick(view.overview()->viewport(), Qt::LeftButton, {}, bottom);
    EXPECT_GT(view.overview()->visibleArea().center().y(), before.center().y());
    // Zoomed far out the view paints boxes only (level of detail) and still renders.
    for (int i = 0; i < 20; ++i) view.zoomOut();
    EXPECT_GT(tessera::gui_test::distinctColors(view.grab().toImage()), 2);
    // A view too small to spare a corner shows no overview over the graph.
    for (int i = 0; i < 20; ++i) view.zoomIn();
    view.resize(380, 240);
    QTest::qWait(20);
    EXPECT_FALSE(view.overview()->isVisible());
}

TEST(GraphViewGroups, DrawsABoxPerGroup) {
    GraphView view;
    GraphViewData data = chain(4);
    data.groups.append({"fused_0", {0, 1}});
    data.groups.append({"fused_1", {2, 3}});
    ASSERT_TRUE(layOut(view, data));
    EXPECT_EQ(view.groupCount(), 4);  // a box and a caption each
}

TEST(TextDiff, MarksRemovedAndAddedLines) {
    const QString diff = lineDiff("a\nb\nc\nd", "a\nx\nc\nd\ne");
    EXPECT_EQ(diff, "  a\n- b\n+ x\n  c\n  d\n+ e");
    const DiffStats s = diffStats(diff);
    EXPECT_EQ(s.removed, 1);
    EXPECT_EQ(s.added, 2);
    EXPECT_EQ(diffStats(lineDiff("same\ntext", "same\ntext")).added, 0);
}

TEST(CodePanes, ShowKindsSideBySideFindAndDiff) {
    CodePanes panes;
    panes.resize(800, 400);
    panes.show();
    panes.setText("Loop IR", "for i in range(8):\n    x = 1");
    panes.setText("LLVM IR", "define void @f(ptr %0) {\n  ret void\n}");
    EXPECT_EQ(panes.view(0)->toPlainText(), "for i in range(8):\n    x = 1");
    EXPECT_EQ(panes.view(1)->language(), CodeLanguage::LlvmIr);
    EXPECT_TRUE(panes.view(1)->toPlainText().contains("define void"));
    EXPECT_EQ(panes.find("void"), 2);  // both in the right pane
    EXPECT_EQ(panes.find("range"), 1);
    EXPECT_EQ(panes.find("nowhere"), 0);
    panes.setPrevious("Loop IR", "for i in range(4):\n    x = 1");
    panes.setDiffEnabled(true);
    EXPECT_EQ(panes.view(0)->language(), CodeLanguage::Diff);
    EXPECT_TRUE(panes.view(0)->toPlainText().contains("- for i in range(4):"));
    EXPECT_TRUE(panes.view(0)->toPlainText().contains("+ for i in range(8):"));
    panes.setDiffEnabled(false);
    EXPECT_EQ(panes.view(0)->toPlainText(), "for i in range(8):\n    x = 1");
    // The find box's count follows the code shown (another kernel's).
    panes.findBox()->setText("void");
    EXPECT_EQ(panes.findStatus(), "2 found");
    panes.setText("LLVM IR", "define i32 @g() {\n  ret i32 0\n}");
    EXPECT_EQ(panes.findStatus(), "0 found");
}

TEST(SeriesPlot, KeepsPointsAndRunningBestAndExports) {
    SeriesPlot plot;
    plot.addPoint(3);
    plot.addPoint(5);
    plot.addPoint(4);
    EXPECT_EQ(plot.pointCount(), 3);
    EXPECT_EQ(plot.best(), 5);
    EXPECT_EQ(plot.plot()->graph(1)->data()->at(2)->value, 5);
    QTemporaryDir dir;
    for (const char* name : {"p.png", "p.svg", "p.pdf"}) {
        const QString path = dir.filePath(name);
        ASSERT_TRUE(exportPlot(plot.plot(), path, 400, 300)) << name;
        EXPECT_GT(QFileInfo(path).size(), 500) << name;
    }
    plot.clear();
    EXPECT_EQ(plot.pointCount(), 0);
}

// A whole-model tune measures one kernel after another: the best-so-far
// line is each kernel's own, broken between kernels, never joining them.
TEST(SeriesPlot, TheBestSoFarLineIsPerSeriesAndJoinsNoTwoSeries) {
    SeriesPlot plot;
    const std::vector<std::pair<QString, double>> points = {{"a", 10}, {"a", 20}, {"b", 5},
                                                            {"b", 8},  {"a", 15}, {"a", 30}};
    for (const auto& [series, value] : points) plot.addPoint(value, series, series);
    const std::vector<double> expected = {10, 20, 5, 8, 20, 30};
    for (int i = 0; i < int(points.size()); ++i)
        EXPECT_EQ(plot.bestAt(i), expected[size_t(i)]) << i;
    EXPECT_EQ(plot.best(), 30);
    // The line: no segment between points of two series.
    const auto line = plot.plot()->graph(1)->data();
    int gaps = 0;
    for (int i = 0; i + 1 < line->size(); ++i) {
        const double a = line->at(i)->value, b = line->at(i + 1)->value;
        if (std::isnan(a) || std::isnan(b)) {
            gaps += std::isnan(b);
            continue;
        }
        EXPECT_EQ(plot.seriesAt(int(line->at(i)->key) - 1),
                  plot.seriesAt(int(line->at(i + 1)->key) - 1))
            << "the line joins points " << line->at(i)->key << " and " << line->at(i + 1)->key;
    }
    EXPECT_EQ(gaps, 2);
    EXPECT_EQ(plot.plot()->graph(1)->name(), "best so far, per kernel");
    plot.clear();
    plot.addPoint(3);
    EXPECT_EQ(plot.bestAt(0), 3);
    EXPECT_EQ(plot.plot()->graph(1)->name(), "best so far");
}

#include "widgets/roofline_plot.h"

TEST(RooflinePlot, RoofIsTheMinimumOfPeakAndBandwidthTimesIntensity) {
    RooflinePlot plot;
    plot.setPeaks(100, 20);
    EXPECT_DOUBLE_EQ(plot.attainable(1), 20);
    EXPECT_DOUBLE_EQ(plot.attainable(5), 100);
    EXPECT_DOUBLE_EQ(plot.attainable(50), 100);
    plot.setKernels({"conv", "relu", "empty"}, {10, 0.25, 0}, {40, 2, 0});
    EXPECT_EQ(plot.kernelCount(), 2);  // no point without flops
    EXPECT_GT(plot.plot()->graph(0)->data()->size(), 10);
    QTemporaryDir dir;
    EXPECT_TRUE(exportPlot(plot.plot(), dir.filePath("roof.svg"), 400, 300));
}

// An integer GEMM (vpdpbusd) runs above the float FMA peak: its roof is the
// integer peak, a float kernel's stays the FMA peak.
TEST(RooflinePlot, IntegerKernelsHaveTheIntegerPeakAsTheirRoof) {
    RooflinePlot plot;
    plot.setPeaks(100, 20);
    plot.setKernels({"int8 gemm", "float gemm"}, {50, 50}, {300, 300}, {true, false});
    EXPECT_EQ(plot.kernelsAbove(0).size(), 2);  // no integer peak measured yet
    plot.setIntegerPeak(400);
    EXPECT_DOUBLE_EQ(plot.attainable(50, true), 400);
    EXPECT_DOUBLE_EQ(plot.attainable(50, false), 100);
    EXPECT_DOUBLE_EQ(plot.attainable(1, true), 20);  // memory bound all the same
    const QStringList above = plot.kernelsAbove(0);
    ASSERT_EQ(above.size(), 1);
    EXPECT_TRUE(above[0].startsWith("float gemm")) << above[0].toStdString();
    bool labelled = false;
    for (int i = 0; i < plot.plot()->itemCount(); ++i)
        if (auto* text = qobject_cast<QCPItemText*>(plot.plot()->item(i)))
            labelled = labelled || text->text().contains("int8 dot-product peak 400");
    EXPECT_TRUE(labelled);
}

// Shown at w x h with a 100 GFLOP/s peak and a 20 GB/s roof.
void showWithPeaks(RooflinePlot& plot, int w, int h) {
    plot.resize(w, h);
    plot.show();
    plot.setPeaks(100, 20);
}

TEST(RooflinePlot, LabelsStayInsideThePlot) {
    RooflinePlot plot;
    showWithPeaks(plot, 420, 300);
    const QString longName = "fused__model_albert_encoder_albert_layer_groups_0_attention_MatMul";
    plot.setKernels({longName, "relu", longName + "_1"}, {800, 0.02, 3.0}, {90, 0.3, 50});
    plot.plot()->replot();
    const QRect area = plot.plot()->axisRect()->rect();
    int labels = 0;
    for (int i = 0; i < plot.plot()->itemCount(); ++i) {
        auto* text = qobject_cast<QCPItemText*>(plot.plot()->item(i));
        if (!text || !text->text().contains("fused")) continue;
        ++labels;
        EXPECT_LE(text->text().trimmed().size(), RooflinePlot::kMaxLabelChars);
        EXPECT_GE(text->topLeft->pixelPosition().x(), area.left() - 1) << text->text().toStdString();
        EXPECT_LE(text->bottomRight->pixelPosition().x(), area.right() + 1) << text->text().toStdString();
    }
    EXPECT_EQ(labels, 2);
}

// `count` kernels named by `name(i)` at intensity a + b i, c + d i GFLOP/s.
void setCrowdedKernels(RooflinePlot& plot, int count, const std::function<QString(int)>& name,
                       double a, double b, double c, double d) {
    QStringList names;
    QVector<double> intensity, gflops;
    for (int i = 0; i < count; ++i) {
        names << name(i);
        intensity << a + b * i;
        gflops << c + d * i;
    }
    plot.setKernels(names, intensity, gflops);
}

// The visible labels' rectangles (pixels), checking that no two overlap.
QVector<QRectF> visibleLabelRects(const RooflinePlot& plot) {
    QVector<QRectF> shown;
    for (int i = 0; i < plot.plot()->itemCount(); ++i) {
        auto* text = qobject_cast<QCPItemText*>(plot.plot()->item(i));
        if (text && text->visible())
            shown << QRectF(text->topLeft->pixelPosition(), text->bottomRight->pixelPosition())
                         .normalized();
    }
    for (int a = 0; a < shown.size(); ++a)
        for (int b = a + 1; b < shown.size(); ++b)
            EXPECT_FALSE(shown[a].intersects(shown[b])) << a << " " << b << " at " << plot.width();
    return shown;
}

// Kernels crowded near the peak (ResNet-18's convs): a label that would
// cover the peaks' legend or a label drawn before it is hidden; the points
// stay. No two visible labels overlap.
TEST(RooflinePlot, VisibleLabelsCoverNeitherEachOtherNorThePeaks) {
    RooflinePlot plot;
    showWithPeaks(plot, 420, 300);
    setCrowdedKernels(
        plot, 10, [](int i) { return QString("fused_conv_%1_relu").arg(i); }, 20, 1, 70, 1);
    plot.plot()->replot();
    visibleLabelRects(plot);
    EXPECT_GE(plot.visibleKernelLabels(), 1);
    EXPECT_LT(plot.visibleKernelLabels(), 10);
}

// The labels are checked again at every size: docked (small), labels that
// would cover the peaks' text or each other hide; floating (large) again,
// they come back. Each label reads the part of its name the others do not
// share.
TEST(RooflinePlot, LabelsHideAndReturnAsThePlotIsResized) {
    RooflinePlot plot;
    showWithPeaks(plot, 1400, 900);
    setCrowdedKernels(
        plot, 8,
        [](int i) { return QString("fused__bert_encoder_layer_%1_output_dense_MatMul").arg(i); }, 1,
        3, 10, 10);
    auto resizeTo = [&](int w, int h) {
        plot.resize(w, h);
        QApplication::processEvents();
        plot.plot()->replot();
    };
    resizeTo(1400, 900);
    const int large = plot.visibleKernelLabels();
    visibleLabelRects(plot);
    resizeTo(360, 240);
    const int small = plot.visibleKernelLabels();
    visibleLabelRects(plot);
    EXPECT_LT(small, large);
    resizeTo(1400, 900);
    EXPECT_EQ(plot.visibleKernelLabels(), large);
    for (int i = 0; i < plot.plot()->itemCount(); ++i)
        if (auto* text = qobject_cast<QCPItemText*>(plot.plot()->item(i));
            text && text->text().contains("output_dense"))
            EXPECT_FALSE(text->text().contains("bert_encoder")) << text->text().toStdString();
}

TEST(GraphViewBig, ThousandNodesLayOutOffThreadAndRenderAtEveryZoom) {
    GraphView view;
    view.resize(900, 700);
    view.show();
    GraphViewData data = chain(1000);
    for (int i = 0; i + 4 < 1000; i += 4) data.edges.append({i, i + 4});  // residual-style skips
    ASSERT_TRUE(layOut(view, data));
    ASSERT_EQ(view.nodeItems().size(), 1000);
    EXPECT_TRUE(view.overview()->isVisible());
    view.fitAll();
    EXPECT_GT(tessera::gui_test::distinctColors(view.grab().toImage()), 2);
    for (int i = 0; i < 30; ++i) view.zoomOut();  // level of detail: boxes only
    EXPECT_GT(tessera::gui_test::distinctColors(view.grab().toImage()), 2);
    EXPECT_EQ(view.search("layer999"), 1);
    EXPECT_EQ(view.currentNode(), 999);
}

#include <QTextCharFormat>

#include "widgets/perf_plot.h"
#include "widgets/theme.h"

namespace {

QPalette darkPalette() {
    QPalette p;
    p.setColor(QPalette::Window, QColor(0x20, 0x20, 0x24));
    p.setColor(QPalette::WindowText, QColor(0xe0, 0xe0, 0xe0));
    p.setColor(QPalette::Base, QColor(0x1a, 0x1a, 0x1e));
    p.setColor(QPalette::Text, QColor(0xe0, 0xe0, 0xe0));
    return p;
}

}  // namespace

TEST(Theme, CodeGraphAndPlotsFollowADarkPalette) {
    using namespace tessera::widgets;
    EXPECT_TRUE(isDark(darkPalette()));
    EXPECT_FALSE(isDark(QPalette(QColor(0xf0, 0xf0, 0xf0))));

    CodeView code;
    code.setPalette(QPalette(QColor(0xf0, 0xf0, 0xf0)));
    code.setCode("for i in range(4):\n    pass");
    const int lightKeyword = code.findChildren<LoopIrHighlighter*>()
                                 .value(0)
                                 ->keywordFormat()
                                 .foreground()
                                 .color()
                                 .lightness();
    code.setPalette(darkPalette());
    auto* highlighter = code.findChildren<LoopIrHighlighter*>().value(0);
    ASSERT_NE(highlighter, nullptr);
    EXPECT_TRUE(highlighter->dark());
    // Keywords get brighter on a dark background.
    EXPECT_GT(highlighter->keywordFormat().foreground().color().lightness(), lightKeyword);
    EXPECT_GT(highlighter->keywordFormat().foreground().color().lightness(), 128);

    GraphView graph;
    graph.setPalette(darkPalette());
    EXPECT_LT(graph.backgroundBrush().color().lightness(), 64);
    graph.setPalette(QPalette(QColor(0xf0, 0xf0, 0xf0)));
    EXPECT_GT(graph.backgroundBrush().color().lightness(), 200);

    PerfPlot plot;
    plot.setPalette(darkPalette());
    QCoreApplication::processEvents();
    const QImage image = plot.plot()->toPixmap(200, 150).toImage();
    EXPECT_LT(QColor(image.pixel(2, 2)).lightness(), 64);
    EXPECT_GT(plot.plot()->xAxis->tickLabelColor().lightness(), 128);
}
