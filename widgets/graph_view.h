// GraphView: a zoomable, pannable view of an operator graph laid out by
// Graphviz dot (off the UI thread), with one selectable box per node.
#pragma once

#include <QGraphicsItem>
#include <QGraphicsPathItem>
#include <QGraphicsView>
#include <QWheelEvent>
#include <QList>
#include <QString>
#include <QVector>

namespace tessera::widgets {

struct LayoutResult;

/// What the view shows of one graph node (plain data, no engine pointers).
struct GraphViewNode {
    QString op;       // op type, drawn bold
    QString name;     // node name, drawn below
    QString toolTip;  // e.g. output types
    QString shape;    // output shape, e.g. "1×8×32×32", drawn last (may be empty)
    /// The node's work (FLOPs): of several nodes of the searched name (an
    /// ONNX op imported as several), a new search lands on the heaviest.
    double weight = 0;
};

/// A box drawn around a group of nodes (a fused kernel), with a caption.
struct GraphViewGroup {
    QString label;
    QVector<int> nodes;
};

/// Nodes the view draws as one box while collapsed (a fused kernel, a name
/// scope such as a repeated block): the box shows the members' ops and `title`.
struct GraphViewCollapse {
    QString title;
    QVector<int> nodes;
};

/// A graph to show: nodes plus directed edges between node indices.
struct GraphViewData {
    QVector<GraphViewNode> nodes;
    QVector<QPair<int, int>> edges;
    QVector<GraphViewGroup> groups;  // optional boxes around node groups
};

/// The fill colour of an op type's family (conv, matmul, pool, activation, ...).
QColor colorForOp(const QString& op);

/// The box of one graph node.
class GraphNodeItem : public QGraphicsItem {
public:
    enum { Type = QGraphicsItem::UserType + 1 };
    GraphNodeItem(int nodeIndex, const GraphViewNode& node, QSizeF size);
    /// A box standing for several nodes (collapsed); nodeIndex() is the first.
    GraphNodeItem(const QVector<int>& members, const GraphViewNode& node, QSizeF size);

    int type() const override { return Type; }
    int nodeIndex() const { return m_index; }
    /// The graph nodes this box stands for (one unless collapsed).
    const QVector<int>& members() const { return m_members; }
    QString op() const { return m_node.op; }
    QString name() const { return m_node.name; }
    QString shapeText() const { return m_node.shape; }
    /// Fill colour override (e.g. a heat colour for time spent); invalid = by op.
    void setFillColor(const QColor& color);
    QColor fillColor() const;
    /// Outline colour for a highlight (search match, changed by a pass); invalid = none.
    void setHighlight(const QColor& color);
    QColor highlight() const { return m_highlight; }

    QRectF boundingRect() const override;
    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;
    /// Screen pixel height of the op label drawn at level of detail `lod`
    /// (scene to screen scale) in a box `boxHeight` scene units tall; 0 when
    /// the box is too small on screen for a readable label.
    static double opLabelPixels(double lod, double boxHeight);
    double boxHeight() const { return m_size.height(); }

private:
    int m_index;
    QVector<int> m_members;
    GraphViewNode m_node;
    QSizeF m_size;
    QColor m_fill;
    QColor m_highlight;
};

/// An edge drawn along the layout's spline, with an arrow head.
class GraphEdgeItem : public QGraphicsPathItem {
public:
    enum { Type = QGraphicsItem::UserType + 2 };
    GraphEdgeItem(int from, int to, const QPainterPath& path, const QPolygonF& arrowHead);

    int type() const override { return Type; }
    int from() const { return m_from; }
    int to() const { return m_to; }
    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

private:
    int m_from, m_to;
    QPolygonF m_arrowHead;
};

class GraphOverview;

class GraphView : public QGraphicsView {
    Q_OBJECT
public:
    explicit GraphView(QWidget* parent = nullptr);
    /// Disconnects the scene first: deleting its items emits selectionChanged,
    /// which must not reach a half-destroyed view.
    ~GraphView() override;

    /// Shows a new graph. Layout runs on a worker thread; the scene is filled
    /// when it finishes (layoutFinished). A newer call supersedes an older one.
    void setGraph(const GraphViewData& data);
    /// Removes everything (and drops a pending layout).
    void clearGraph();

    bool isLayoutPending() const { return m_pending; }
    /// Draws each group as one box (lays the graph out again; layoutFinished
    /// follows); an empty list expands everything. Node indices everywhere
    /// stay the graph's: a collapsed box answers for each of its members.
    /// setGraph expands.
    void setCollapsed(const QVector<GraphViewCollapse>& groups);
    bool isCollapsed() const { return !m_collapse.isEmpty(); }
    /// The boxes drawn, in graph order (one per node unless collapsed).
    QList<GraphNodeItem*> nodeItems() const { return m_nodeItems; }
    /// The box that draws `node` (its own, or its collapsed group's); null if none.
    GraphNodeItem* itemOf(int node) const { return node >= 0 && node < m_itemOf.size() ? m_itemOf[node] : nullptr; }
    QList<GraphEdgeItem*> edgeItems() const { return m_edgeItems; }
    /// The selected node index, or -1.
    int currentNode() const { return m_current; }
    /// Selects a node (or none with -1) and scrolls it into view.
    void setCurrentNode(int index);
    /// Where a navigation key moves the selection from `node` (the node a
    /// box answers for), or -1 for nowhere: Up a producer of its box, Down a
    /// consumer (of several, the nearest across), Left / Right the nearest
    /// box that way on the same rank, else the nearest box that way; Tab /
    /// Backtab the next / previous box in graph (topological) order, wrapping.
    int nodeToward(int node, int key) const;
    /// Colours nodes by a value in [0, 1] (e.g. share of run time); empty resets.
    void setNodeHeat(const QVector<double>& heat);
    /// Outlines the given nodes in `color` (others lose their highlight).
    void setHighlightedNodes(const QVector<int>& nodes, const QColor& color);

    /// The node drawn at a viewport position, or -1.
    int nodeAt(const QPoint& viewportPos) const;
    /// Nodes whose name or op type contains `text` (case-insensitive), in order.
    QVector<int> findNodes(const QString& text) const;
    /// Highlights all matches of `text` and selects the next one after the
    /// current node (wrapping). Returns the number of matches.
    int search(const QString& text);

    /// Writes the whole graph as .svg or .png (by the file suffix). False on failure.
    bool exportImage(const QString& path);
    /// The overview (minimap) in the corner; shown when the graph does not fit.
    GraphOverview* overview() const { return m_overview; }
    /// Group boxes currently drawn.
    int groupCount() const { return m_groupItems.size(); }

public slots:
    /// Fits the whole graph, within a readable zoom range.
    void fitAll();
    void zoomIn();
    void zoomOut();

signals:
    void layoutFinished();
    void layoutFailed(const QString& message);
    void currentNodeChanged(int index);

protected:
    void wheelEvent(QWheelEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    /// Follows the palette (light or dark canvas, edges, captions).
    void changeEvent(QEvent* event) override;
    void scrollContentsBy(int dx, int dy) override;
    /// With a node selected, the arrow keys and Tab / Shift+Tab move the
    /// selection (nodeToward); it scrolls into view and currentNodeChanged
    /// follows, as for a click.
    void keyPressEvent(QKeyEvent* event) override;
    bool event(QEvent* event) override;

private:
    void layOut(const GraphViewData& shown, const QVector<QVector<int>>& members);
    void buildScene(const LayoutResult& layout, const GraphViewData& shown,
                    const QVector<QVector<int>>& members);
    void onSceneSelectionChanged();
    /// Moves the selection for a navigation key; false when `key` is none.
    bool navigate(int key);
    void zoomBy(double factor);
    void updateOverview();
    void applyTheme();

    QGraphicsScene* m_scene;
    QList<GraphNodeItem*> m_nodeItems;
    QVector<GraphNodeItem*> m_itemOf;  // graph node -> the box drawing it
    GraphViewData m_data;              // the graph as given (expanded)
    QString m_lastSearch;              // search(): Enter again goes to the next match
    QVector<GraphViewCollapse> m_collapse;
    QList<GraphEdgeItem*> m_edgeItems;
    QList<QGraphicsItem*> m_groupItems;
    GraphOverview* m_overview;
    int m_generation = 0;
    bool m_pending = false;
    int m_current = -1;
    int m_restoreCurrent = -1;  // selected again once a collapse's layout is drawn
    QVector<double> m_heat;     // setNodeHeat's, drawn again after a collapse
};

/// A small view of the whole scene with the main view's visible area as a
/// rectangle; clicking or dragging in it moves the main view there.
class GraphOverview : public QGraphicsView {
    Q_OBJECT
public:
    explicit GraphOverview(GraphView* main);
    /// Refits the scene and redraws the viewport rectangle.
    void refresh();
    /// The main view's visible area in scene coordinates.
    QRectF visibleArea() const;

protected:
    void drawForeground(QPainter* painter, const QRectF& rect) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void wheelEvent(QWheelEvent* event) override { event->ignore(); }

private:
    GraphView* m_main;
};

}  // namespace tessera::widgets
