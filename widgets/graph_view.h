// GraphView: a zoomable, pannable view of an operator graph laid out by
// Graphviz dot (off the UI thread), with one selectable box per node.
#pragma once

#include <QGraphicsItem>
#include <QGraphicsPathItem>
#include <QGraphicsView>
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
};

/// A graph to show: nodes plus directed edges between node indices.
struct GraphViewData {
    QVector<GraphViewNode> nodes;
    QVector<QPair<int, int>> edges;
};

/// The box of one graph node.
class GraphNodeItem : public QGraphicsItem {
public:
    enum { Type = QGraphicsItem::UserType + 1 };
    GraphNodeItem(int nodeIndex, const GraphViewNode& node, QSizeF size);

    int type() const override { return Type; }
    int nodeIndex() const { return m_index; }
    QString op() const { return m_node.op; }
    QString name() const { return m_node.name; }
    /// Fill colour override (e.g. a heat colour for time spent); invalid = by op.
    void setFillColor(const QColor& color);

    QRectF boundingRect() const override;
    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

private:
    int m_index;
    GraphViewNode m_node;
    QSizeF m_size;
    QColor m_fill;
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

class GraphView : public QGraphicsView {
    Q_OBJECT
public:
    explicit GraphView(QWidget* parent = nullptr);

    /// Shows a new graph. Layout runs on a worker thread; the scene is filled
    /// when it finishes (layoutFinished). A newer call supersedes an older one.
    void setGraph(const GraphViewData& data);
    /// Removes everything (and drops a pending layout).
    void clearGraph();

    bool isLayoutPending() const { return m_pending; }
    QList<GraphNodeItem*> nodeItems() const { return m_nodeItems; }
    QList<GraphEdgeItem*> edgeItems() const { return m_edgeItems; }
    /// The selected node index, or -1.
    int currentNode() const { return m_current; }
    /// Selects a node (or none with -1) and scrolls it into view.
    void setCurrentNode(int index);
    /// Colours nodes by a value in [0, 1] (e.g. share of run time); empty resets.
    void setNodeHeat(const QVector<double>& heat);

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

private:
    void buildScene(const LayoutResult& layout, const GraphViewData& data);
    void onSceneSelectionChanged();
    void zoomBy(double factor);

    QGraphicsScene* m_scene;
    QList<GraphNodeItem*> m_nodeItems;
    QList<GraphEdgeItem*> m_edgeItems;
    int m_generation = 0;
    bool m_pending = false;
    int m_current = -1;
};

}  // namespace tessera::widgets
