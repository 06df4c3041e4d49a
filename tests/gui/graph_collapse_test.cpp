// Collapsing the graph view: groups drawn as one box while node indices stay
// the graph's; fused kernels as the build makes them; name scopes with
// repeated blocks marked.
#include <gtest/gtest.h>

#include <QSignalSpy>
#include <QtTest/QTest>

#include "app/studio/graph_collapse.h"
#include "tests/gui/studio_fixture.h"
#include "widgets/graph_view.h"

namespace tessera::gui_test {
namespace {

using widgets::GraphView;
using widgets::GraphViewCollapse;
using widgets::GraphViewData;

// conv -> relu -> conv -> relu -> add (skip from the first relu) -> softmax
GraphViewData chain() {
    GraphViewData data;
    data.nodes = {{"nn.conv2d", "conv1", {}, "1×8"}, {"nn.relu", "relu1", {}, "1×8"},
                  {"nn.conv2d", "conv2", {}, "1×8"}, {"nn.relu", "relu2", {}, "1×8"},
                  {"add", "add", {}, "1×8"},          {"nn.softmax", "prob", {}, "1×8"}};
    data.edges = {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {1, 4}, {4, 5}};
    return data;
}

TEST(GraphCollapse, GroupsDrawAsOneBoxAndNodeIndicesStayTheGraphs) {
    GraphView view;
    QSignalSpy finished(&view, &GraphView::layoutFinished);
    view.setGraph(chain());
    ASSERT_TRUE(finished.wait(30000));
    view.setCurrentNode(3);
    view.setCollapsed({GraphViewCollapse{"fused_conv1_relu1", {0, 1}},
                       GraphViewCollapse{"fused_conv2_relu2", {2, 3}}});
    ASSERT_TRUE(finished.wait(30000));
    ASSERT_EQ(view.nodeItems().size(), 4);
    EXPECT_TRUE(view.isCollapsed());
    EXPECT_EQ(view.itemOf(0), view.itemOf(1));
    EXPECT_NE(view.itemOf(1), view.itemOf(2));
    EXPECT_EQ(view.itemOf(0)->members(), (QVector<int>{0, 1}));
    EXPECT_EQ(view.itemOf(0)->op(), "nn.conv2d + nn.relu");
    EXPECT_TRUE(view.itemOf(0)->name().startsWith("fused_conv1_relu1 (2 nodes)"));
    // Edges between boxes, once each: (0,1)->(2,3), (0,1)->add twice is one, (2,3)->add, add->prob.
    EXPECT_EQ(view.edgeItems().size(), 4);
    // The selection stays on its node, now drawn by the group's box.
    EXPECT_EQ(view.currentNode(), 3);
    EXPECT_TRUE(view.itemOf(3)->isSelected());
    // Heat: a box is as hot as its hottest member; search finds nodes inside boxes.
    view.setNodeHeat({0.1, 0.9, -1, -1, 0.2, -1});
    EXPECT_EQ(view.itemOf(0)->fillColor(), QColor::fromRgbF(1.0, 1.0 - 0.6 * 0.9, 1.0 - 0.7 * 0.9));
    EXPECT_EQ(view.findNodes("relu"), (QVector<int>{1, 3}));
    view.setHighlightedNodes({1}, Qt::red);
    EXPECT_EQ(view.itemOf(0)->highlight(), QColor(Qt::red));
    // Expanded again: one box per node.
    view.setCollapsed({});
    ASSERT_TRUE(finished.wait(30000));
    EXPECT_EQ(view.nodeItems().size(), 6);
    EXPECT_FALSE(view.isCollapsed());
    EXPECT_EQ(view.currentNode(), 3);
}

TEST(GraphCollapse, NameScopesGroupBlocksAndMarkTheRepeatedOnes) {
    graph::Graph g;
    auto node = [&](const std::string& op, const std::string& name) {
        graph::Node n;
        n.op = op;
        n.name = name;
        g.nodes.push_back(n);
    };
    node("nn.conv2d", "/conv1/Conv");
    for (const char* block : {"layer1.0", "layer1.1", "layer2.0"}) {
        node("nn.conv2d", std::string("/layer1/") + block + "/conv1/Conv");
        node("nn.relu", std::string("/layer1/") + block + "/relu/Relu");
        if (std::string(block) == "layer2.0") node("add", "/layer1/layer2.0/Add");
    }
    node("nn.softmax", "prob");
    const QVector<GraphViewCollapse> level1 = studio::nameScopeGroups(g, 1);
    ASSERT_EQ(level1.size(), 1);  // "/conv1/Conv" is alone in its scope; "prob" has none
    EXPECT_EQ(level1[0].title, "layer1");
    EXPECT_EQ(level1[0].nodes.size(), 7);
    const QVector<GraphViewCollapse> level2 = studio::nameScopeGroups(g, 2);
    ASSERT_EQ(level2.size(), 3);
    EXPECT_EQ(level2[0].title, "layer1/layer1.0 (repeated \u00d72)");
    EXPECT_EQ(level2[1].title, "layer1/layer1.1 (repeated \u00d72)");
    EXPECT_EQ(level2[2].title, "layer1/layer2.0");  // another op sequence
    EXPECT_EQ(level2[2].nodes, (QVector<int>{5, 6, 7}));
}

TEST(GraphCollapse, TheStudioCollapsesTheFusedKernelsTheBuildMakes) {
    OpenStudio s;
    ASSERT_TRUE(s.ok);
    const graph::Graph& g = s.window.document()->graph();
    const int conv1 = g.find_node("conv1"), relu1 = g.find_node("relu1");
    QString error;
    ASSERT_NE(s.run(&error), nullptr) << error.toStdString();  // heat on every node
    s.window.graphView()->setCurrentNode(relu1);
    QSignalSpy changed(&s.window, &studio::MainWindow::graphChanged);
    s.window.collapseGraph("fused");
    ASSERT_TRUE(changed.wait(60000));
    widgets::GraphView* view = s.window.graphView();
    EXPECT_TRUE(view->isCollapsed());
    EXPECT_LT(view->nodeItems().size(), s.window.document()->nodeCount());
    EXPECT_EQ(view->itemOf(conv1), view->itemOf(relu1));  // fused_conv1_relu1, as the build fuses
    EXPECT_TRUE(view->itemOf(conv1)->name().startsWith("fused_conv1_relu1"));
    EXPECT_EQ(view->currentNode(), relu1);
    // Drawing the graph differently changes nothing a build reads, and keeps the heat.
    EXPECT_TRUE(s.window.runs()->staleReason().isEmpty()) << s.window.runs()->staleReason().toStdString();
    for (const widgets::GraphNodeItem* item : view->nodeItems())
        EXPECT_NE(item->fillColor(), widgets::colorForOp(item->op())) << item->name().toStdString();
    s.window.collapseGraph("none");
    ASSERT_TRUE(changed.wait(60000));
    EXPECT_EQ(view->nodeItems().size(), s.window.document()->nodeCount());
}

}  // namespace
}  // namespace tessera::gui_test
