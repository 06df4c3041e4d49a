// Widget behaviours: Graphviz layout, GraphView items and selection, CodeView
// highlighting, PerfPlot bars.
#include <gtest/gtest.h>
#include <qcustomplot.h>

#include <QElapsedTimer>
#include <QScrollBar>
#include <QSet>
#include <QSignalSpy>
#include <QTextBlock>
#include <QTextLayout>
#include <QtTest/QTest>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>

#include "widgets/code_view.h"
#include "widgets/graph_layout.h"
#include "widgets/graph_view.h"
#include "widgets/perf_plot.h"
#include "widgets/short_labels.h"

using namespace tessera::widgets;

namespace {

// a -> b, a -> c, b -> d, c -> d
GraphViewData diamond() {
    GraphViewData data;
    data.nodes = {
        {"nn.conv2d", "a", {}}, {"nn.relu", "b", {}}, {"nn.max_pool2d", "c", {}}, {"add", "d", {}}};
    data.edges = {{0, 1}, {0, 2}, {1, 3}, {2, 3}};
    return data;
}

}  // namespace

TEST(GraphLayout, AHugeGraphIsLaidOutInLayersWithoutGraphviz) {
    // Above kHugeGraphNodes: every node below its producers, no two boxes of
    // a layer overlapping, all inside the bounding box, in well under a second
    // (dot took a minute on a 2,055-node UNet and crashed on the studio's copy).
    LayoutInput input;
    const int n = int(kHugeGraphNodes) + 500;
    for (int i = 0; i < n; ++i) input.nodes.push_back({"n", 80.0 + (i % 7) * 10, 40});
    for (int i = 1; i < n; ++i) {
        input.edges.push_back({i - 1, i});
        if (i % 5 == 0 && i >= 7) input.edges.push_back({i - 7, i});  // skip connections
    }
    const auto start = std::chrono::steady_clock::now();
    const LayoutResult r = layout_graph(input);
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 5.0);
    ASSERT_EQ(r.nodes.size(), size_t(n));
    ASSERT_EQ(r.edges.size(), input.edges.size());
    for (const LayoutEdgeSpec& e : input.edges)
        EXPECT_LT(r.nodes[size_t(e.from)].center.y, r.nodes[size_t(e.to)].center.y);
    std::map<double, std::vector<const LayoutNodeBox*>> rows;
    for (const LayoutNodeBox& b : r.nodes) {
        EXPECT_GE(b.center.x - b.width / 2, -1);
        EXPECT_LE(b.center.x + b.width / 2, r.width + 1);
        EXPECT_LE(b.center.y + b.height / 2, r.height + 1);
        rows[b.center.y].push_back(&b);
    }
    for (auto& [y, boxes] : rows) {
        std::sort(boxes.begin(), boxes.end(),
                  [](auto* a, auto* b) { return a->center.x < b->center.x; });
        for (size_t k = 1; k < boxes.size(); ++k)
            EXPECT_GE(boxes[k]->center.x - boxes[k]->width / 2,
                      boxes[k - 1]->center.x + boxes[k - 1]->width / 2);
    }
}

TEST(GraphLayout, PlacesNodesTopToBottomInsideTheBoundingBox) {
    LayoutInput input;
    for (int i = 0; i < 4; ++i) input.nodes.push_back({"n", 120, 40});
    input.edges = {{0, 1}, {0, 2}, {1, 3}, {2, 3}};
    const LayoutResult r = layout_graph(input);
    ASSERT_EQ(r.nodes.size(), 4u);
    ASSERT_EQ(r.edges.size(), 4u);
    EXPECT_LT(r.nodes[0].center.y, r.nodes[1].center.y);  // y grows downwards
    EXPECT_LT(r.nodes[1].center.y, r.nodes[3].center.y);
    EXPECT_NE(r.nodes[1].center.x, r.nodes[2].center.x);  // siblings side by side
    for (const LayoutNodeBox& b : r.nodes) {
        EXPECT_NEAR(b.width, 120, 1);
        EXPECT_NEAR(b.height, 40, 1);
        EXPECT_GE(b.center.x - b.width / 2, -1);
        EXPECT_LE(b.center.x + b.width / 2, r.width + 1);
        EXPECT_GE(b.center.y - b.height / 2, -1);
        EXPECT_LE(b.center.y + b.height / 2, r.height + 1);
    }
    for (const LayoutEdgePath& e : r.edges) {
        ASSERT_TRUE(e.is_spline);
        ASSERT_GE(e.points.size(), 4u);
        EXPECT_EQ((e.points.size() - 1) % 3, 0u);
        // The route starts at the producer's box and ends at the consumer's.
        const LayoutPoint end = e.has_arrow_tip ? e.arrow_tip : e.points.back();
        EXPECT_NEAR(e.points.front().y, r.nodes[e.from].center.y + 20, 3);
        EXPECT_NEAR(end.y, r.nodes[e.to].center.y - 20, 3);
    }
}

TEST(GraphLayout, BigChainWithSkipsStaysFast) {
    LayoutInput input;
    const int n = 600;
    for (int i = 0; i < n; ++i) input.nodes.push_back({"n", 100, 36});
    for (int i = 0; i + 1 < n; ++i) input.edges.push_back({i, i + 1});
    for (int i = 0; i + 3 < n; i += 3) input.edges.push_back({i, i + 3});  // residual-style skips
    QElapsedTimer timer;
    timer.start();
    const LayoutResult r = layout_graph(input);
    EXPECT_LT(timer.elapsed(), 30000);
    ASSERT_EQ(r.nodes.size(), size_t(n));
    for (int i = 0; i + 1 < n; ++i) EXPECT_LT(r.nodes[i].center.y, r.nodes[i + 1].center.y);
}

TEST(GraphLayout, RejectsEdgesToMissingNodes) {
    LayoutInput input;
    input.nodes.push_back({"n", 100, 36});
    input.edges.push_back({0, 5});
    EXPECT_THROW(layout_graph(input), std::runtime_error);
}

TEST(GraphView, LaysOutOffTheUiThreadAndBuildsOneItemPerNode) {
    GraphView view;
    view.resize(800, 600);
    view.show();
    QSignalSpy finished(&view, &GraphView::layoutFinished);
    view.setGraph(diamond());
    EXPECT_TRUE(view.isLayoutPending());
    ASSERT_TRUE(finished.count() > 0 || finished.wait(30000));
    EXPECT_FALSE(view.isLayoutPending());
    ASSERT_EQ(view.nodeItems().size(), 4);
    ASSERT_EQ(view.edgeItems().size(), 4);
    EXPECT_EQ(view.nodeItems()[0]->op(), "nn.conv2d");
    EXPECT_LT(view.nodeItems()[0]->pos().y(), view.nodeItems()[3]->pos().y());
    for (GraphEdgeItem* e : view.edgeItems()) {
        // Edge paths end at the target's box (within the arrow head).
        const QRectF target = view.nodeItems()[e->to()]->sceneBoundingRect().adjusted(-3, -3, 3, 3);
        EXPECT_TRUE(target.contains(e->path().currentPosition()));
    }
}

TEST(GraphView, NewerGraphSupersedesAPendingLayout) {
    GraphView view;
    QSignalSpy finished(&view, &GraphView::layoutFinished);
    view.setGraph(diamond());
    GraphViewData single;
    single.nodes = {{"nn.relu", "only", {}}};
    view.setGraph(single);
    ASSERT_TRUE(finished.wait(30000));
    QTest::qWait(100);  // let the stale layout's result arrive, if it comes late
    EXPECT_EQ(finished.count(), 1);
    ASSERT_EQ(view.nodeItems().size(), 1);
    EXPECT_EQ(view.nodeItems()[0]->name(), "only");
}

TEST(GraphView, SelectionIsReportedAndSettable) {
    GraphView view;
    QSignalSpy finished(&view, &GraphView::layoutFinished);
    view.setGraph(diamond());
    ASSERT_TRUE(finished.wait(30000));
    QSignalSpy changed(&view, &GraphView::currentNodeChanged);
    view.setCurrentNode(2);
    ASSERT_EQ(changed.count(), 1);
    EXPECT_EQ(changed.first().first().toInt(), 2);
    EXPECT_TRUE(view.nodeItems()[2]->isSelected());
    // Selecting through the scene (as a mouse click does) is reported too.
    view.nodeItems()[2]->setSelected(false);
    view.nodeItems()[1]->setSelected(true);
    EXPECT_EQ(view.currentNode(), 1);
    EXPECT_EQ(changed.last().first().toInt(), 1);
}

// With a node selected the arrow keys walk the graph: Up to a producer,
// Down to a consumer, Left / Right along a rank; Tab / Shift+Tab go through
// the nodes in graph order. Each move is reported as a click's is, and the
// view scrolls to keep the node visible.
TEST(GraphView, ArrowKeysAndTabMoveTheSelectionAlongTheGraph) {
    GraphView view;
    view.resize(400, 300);
    view.show();
    ASSERT_TRUE(QTest::qWaitForWindowExposed(&view));
    GraphViewData data = diamond();  // a -> b, a -> c, b -> d, c -> d, then d -> e
    data.nodes.append({"nn.softmax", "e", {}});
    data.edges.append({3, 4});
    QSignalSpy finished(&view, &GraphView::layoutFinished);
    view.setGraph(data);
    ASSERT_TRUE(finished.wait(30000));
    view.setFocus();
    QSignalSpy changed(&view, &GraphView::currentNodeChanged);
    auto press = [&](Qt::Key key, Qt::KeyboardModifiers modifiers = Qt::NoModifier) {
        QTest::keyClick(&view, key, modifiers);
        return view.currentNode();
    };
    // Nothing selected: the arrows do not select; Tab selects the first node.
    EXPECT_EQ(press(Qt::Key_Down), -1);
    EXPECT_EQ(press(Qt::Key_Tab), 0);
    EXPECT_EQ(changed.count(), 1);
    const int down = press(Qt::Key_Down);
    EXPECT_TRUE(down == 1 || down == 2) << down;  // a consumer of a
    EXPECT_EQ(changed.last().first().toInt(), down);
    // Along the rank: b and c side by side.
    const int left = view.nodeItems()[1]->pos().x() < view.nodeItems()[2]->pos().x() ? 1 : 2;
    const int right = 3 - left;
    view.setCurrentNode(left);
    EXPECT_EQ(press(Qt::Key_Right), right);
    EXPECT_EQ(press(Qt::Key_Right), right);  // the rank's end: the selection stays
    view.setCurrentNode(right);
    EXPECT_EQ(press(Qt::Key_Left), left);
    EXPECT_EQ(press(Qt::Key_Left), left);
    view.setCurrentNode(0);
    EXPECT_EQ(press(Qt::Key_Left), 0);  // alone on its rank: no jump to another rank
    EXPECT_EQ(press(Qt::Key_Right), 0);
    view.setCurrentNode(left);
    EXPECT_EQ(press(Qt::Key_Down), 3);
    EXPECT_EQ(press(Qt::Key_Down), 4);
    EXPECT_EQ(press(Qt::Key_Down), 4);  // e consumes nothing: the selection stays
    EXPECT_EQ(press(Qt::Key_Up), 3);
    const int up = press(Qt::Key_Up);
    EXPECT_TRUE(up == 1 || up == 2) << up;  // a producer of d
    EXPECT_EQ(press(Qt::Key_Up), 0);
    // Tab and Shift+Tab: graph order, wrapping.
    EXPECT_EQ(press(Qt::Key_Tab), 1);
    EXPECT_EQ(press(Qt::Key_Tab, Qt::ShiftModifier), 0);
    EXPECT_EQ(press(Qt::Key_Tab, Qt::ShiftModifier), 4);
    EXPECT_EQ(press(Qt::Key_Tab), 0);
    EXPECT_TRUE(view.hasFocus());  // Tab stayed in the graph
    // Zoomed in, the node a key moves to is scrolled into view.
    auto onScreen = [&](int node) {
        return view.mapFromScene(view.nodeItems()[node]->sceneBoundingRect()).boundingRect();
    };
    for (int i = 0; i < 12 && view.viewport()->rect().intersects(onScreen(4)); ++i) {
        view.zoomIn();
        view.setCurrentNode(0);
    }
    ASSERT_FALSE(view.viewport()->rect().intersects(onScreen(4)));
    for (int i = 0; i < 3; ++i) press(Qt::Key_Down);
    ASSERT_EQ(view.currentNode(), 4);
    const QRect shown = onScreen(4);
    EXPECT_TRUE(view.viewport()->rect().contains(shown))
        << shown.x() << "," << shown.y() << " in " << view.viewport()->width() << "x"
        << view.viewport()->height();
}

TEST(GraphView, WheelZoomsAndFitKeepsAReadableScale) {
    GraphView view;
    view.resize(600, 400);
    view.show();
    QSignalSpy finished(&view, &GraphView::layoutFinished);
    view.setGraph(diamond());
    ASSERT_TRUE(finished.wait(30000));
    const double fitted = view.transform().m11();
    EXPECT_GE(fitted, 0.35 - 1e-9);
    EXPECT_LE(fitted, 1.5 + 1e-9);
    view.zoomIn();
    EXPECT_GT(view.transform().m11(), fitted);
    view.fitAll();
    EXPECT_NEAR(view.transform().m11(), fitted, 1e-6);
}

namespace {

// A model-like graph of `n` nodes: a chain with residual skips every third
// node and a side branch every tenth, ops cycling through common families.
GraphViewData bigModel(int n) {
    const char* ops[] = {"nn.conv2d", "nn.batch_norm", "nn.relu", "add", "nn.max_pool2d", "nn.matmul"};
    GraphViewData data;
    for (int i = 0; i < n; ++i)
        data.nodes.push_back({ops[i % 6], QString("node_%1").arg(i), {}, QString("1×64×56×56")});
    for (int i = 0; i + 1 < n; ++i) data.edges.append({i, i + 1});
    for (int i = 0; i + 3 < n; i += 3) data.edges.append({i, i + 3});
    for (int i = 0; i + 2 < n; i += 10) data.edges.append({i, i + 2});
    return data;
}

// Shows bigModel(n) in `view` (w x h) and waits for its layout.
bool showLaidOut(GraphView& view, int n, int w, int h) {
    view.resize(w, h);
    view.show();
    QSignalSpy finished(&view, &GraphView::layoutFinished);
    view.setGraph(bigModel(n));
    return finished.wait(120000);
}

}  // namespace

// Legible at model size: at the fit zoom of a 300-node model every op label
// is drawn at least 7 screen pixels tall (details fade, op names stay).
TEST(GraphViewScale, OpLabelsStayReadableAtTheFitZoomOfA300NodeModel) {
    GraphView view;
    ASSERT_TRUE(showLaidOut(view, 300, 1200, 800));
    view.fitAll();
    const double lod = view.transform().m11();
    ASSERT_EQ(view.nodeItems().size(), 300);
    for (GraphNodeItem* item : view.nodeItems())
        EXPECT_GE(GraphNodeItem::opLabelPixels(lod, item->boxHeight()), 7.0) << "lod " << lod;
    // Zoomed far out the labels go (noise), the boxes stay.
    EXPECT_EQ(GraphNodeItem::opLabelPixels(0.02, view.nodeItems()[0]->boxHeight()), 0.0);
}

// Pan and zoom of a 1,000-node graph redraw in under 30 ms (median frame).
TEST(GraphViewScale, PanAndZoomOfAThousandNodesRedrawUnder30Milliseconds) {
    GraphView view;
    ASSERT_TRUE(showLaidOut(view, 1000, 1400, 900));
    view.fitAll();
    QApplication::processEvents();
    std::vector<double> frames;
    QElapsedTimer timer;
    for (int i = 0; i < 24; ++i) {
        if (i % 3 == 0) view.zoomIn();
        else if (i % 3 == 1) view.zoomOut();
        else view.verticalScrollBar()->setValue(view.verticalScrollBar()->value() + 120);
        timer.start();
        view.viewport()->repaint();
        frames.push_back(double(timer.nsecsElapsed()) / 1e6);
    }
    std::nth_element(frames.begin(), frames.begin() + frames.size() / 2, frames.end());
    const double median = frames[frames.size() / 2];
    std::printf("1000-node graph: median frame %.2f ms over %zu pan/zoom steps\n", median, frames.size());
#if defined(__SANITIZE_ADDRESS__)
    // The budget is an optimized build's: under ASan (the sanitize preset)
    // every paint runs instrumented (36 ms measured), so there the frames are
    // drawn and checked for memory errors but not held to 30 ms.
    GTEST_SKIP() << "frame time not checked under AddressSanitizer (median " << median << " ms)";
#endif
    EXPECT_LT(median, 30.0);
}

TEST(CodeView, HighlightsLoopIrKeywordsAndNumbersLines) {
    CodeView view;
    view.resize(500, 300);
    view.show();
    view.setCode("for i in range(16):\n    with T.block(\"C\"):\n        x = 1  # done\n");
    QApplication::processEvents();
    EXPECT_TRUE(view.isReadOnly());
    EXPECT_GT(view.lineNumberAreaWidth(), 0);
    const QTextBlock second = view.document()->findBlockByNumber(1);
    const auto formats = second.layout()->formats();
    bool blockHighlighted = false;
    for (const QTextLayout::FormatRange& f : formats)
        if (second.text().mid(f.start, f.length).startsWith("T.block")) blockHighlighted = true;
    EXPECT_TRUE(blockHighlighted);
    const QTextBlock third = view.document()->findBlockByNumber(2);
    bool commentItalic = false;
    for (const QTextLayout::FormatRange& f : third.layout()->formats())
        if (third.text().mid(f.start, f.length) == "# done" && f.format.fontItalic())
            commentItalic = true;
    EXPECT_TRUE(commentItalic);
}

TEST(PerfPlot, ShowsOneBarPerValue) {
    PerfPlot plot;
    EXPECT_EQ(plot.barCount(), 0);
    plot.setBars({"conv", "relu", "pool"}, {1.5, 0.2, 0.4});
    EXPECT_EQ(plot.barCount(), 3);
    plot.clearBars();
    EXPECT_EQ(plot.barCount(), 0);
}

// Fused kernels' names share a long start and differ after it (a BERT
// reranker's: fused__bert_encoder_layer_2_intermediate_dense_MatMul_quant_...
// and ..._layer_9_output_...): the time chart's ticks and the roofline's
// labels show the part after the shared start, so no two read the same (they
// all read fused_b...ant_and_6); names with nothing in common stay.
TEST(ShortLabels, ShowWhereTheKernelNamesDiffer) {
    QStringList names;
    for (const char* part :
         {"2_intermediate_dense", "9_intermediate_dense", "2_output_dense", "4_attention_self"})
        names << QString(
                     "fused__bert_encoder_layer_%1_MatMul_quant_scales_mul__bert_encoder_layer_"
                     "x_MatMul_quant_and_6")
                     .arg(part);
    const int shared = sharedLabelStart(names);
    EXPECT_EQ(names[0].left(shared), "fused__bert_encoder_layer_");
    QSet<QString> ticks;
    for (const QString& n : names) {
        const QString t = shortLabel(n, shared, 18);
        EXPECT_LE(t.size(), 19) << t.toStdString();
        ticks << t;
    }
    EXPECT_EQ(ticks.size(), names.size());
    EXPECT_EQ(shortLabel(names[2], shared, 18),
              QString(QChar(0x2026)) + "2_output_dense_Ma" + QChar(0x2026));
    EXPECT_EQ(sharedLabelStart({"conv1", "conv2", "pool"}), 0);
    EXPECT_EQ(sharedLabelStart({"fused_conv1_relu1", "fused_conv2_relu2"}), 6);
    EXPECT_EQ(sharedLabelStart({"a_b", "a_"}), 0);  // "a_" would keep nothing
    EXPECT_EQ(shortLabel("conv1", 0, 18), "conv1");
}

// 166 kernels are noise as bars: the slowest first, the rest as one bar, and
// a tooltip per bar.
TEST(PerfPlot, ShowsTheSlowestKernelsAndGroupsTheRest) {
    PerfPlot plot;
    plot.resize(800, 300);
    plot.show();
    QStringList labels;
    QVector<double> ms;
    for (int i = 0; i < 166; ++i) {
        labels << QString("kernel_%1").arg(i);
        ms << 0.01 * ((i * 37) % 166 + 1);  // a permutation of 0.01 .. 1.66 ms
    }
    const QString slowest = labels[int(std::max_element(ms.begin(), ms.end()) - ms.begin())];
    plot.setBars(labels, ms);
    EXPECT_EQ(plot.barCount(), PerfPlot::kMaxBars);
    plot.plot()->replot();
    const QCPAxis* x = plot.plot()->xAxis;
    const QPoint first(int(x->coordToPixel(1)), 100), last(int(x->coordToPixel(PerfPlot::kMaxBars)), 100);
    EXPECT_TRUE(plot.toolTipAt(first).startsWith(slowest + "\n1.6600 ms")) << plot.toolTipAt(first).toStdString();
    EXPECT_TRUE(plot.toolTipAt(last).startsWith("143 faster kernels together")) << plot.toolTipAt(last).toStdString();
}
