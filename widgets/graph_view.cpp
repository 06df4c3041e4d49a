// GraphView: Graphviz layout on a worker thread, scene built on the UI thread.
#include "widgets/graph_view.h"

#include <QFontMetricsF>
#include <QFutureWatcher>
#include <QPainter>
#include <QPromise>
#include <QStyleOptionGraphicsItem>
#include <QThreadPool>
#include <QWheelEvent>
#include <QtMath>
#include <memory>

#include "widgets/graph_layout.h"

namespace tessera::widgets {
namespace {

constexpr double kPadX = 14, kPadY = 8, kMinWidth = 90, kMaxNameChars = 32;

QFont opFont() {
    QFont f;
    f.setPointSizeF(10);
    f.setBold(true);
    return f;
}

QFont nameFont() {
    QFont f;
    f.setPointSizeF(8.5);
    return f;
}

QString shownName(const QString& name) {
    return name.size() > kMaxNameChars ? name.left(kMaxNameChars - 1) + QChar(0x2026) : name;
}

// A pastel colour per op family so the structure reads at a glance.
QColor colorForOp(const QString& op) {
    if (op.contains("conv")) return QColor(0xc6, 0xdb, 0xf5);
    if (op.contains("matmul") || op.contains("gemm") || op.contains("dense"))
        return QColor(0xdc, 0xcf, 0xf2);
    if (op.contains("pool")) return QColor(0xf8, 0xd9, 0xb5);
    if (op.contains("relu") || op.contains("sigmoid") || op.contains("tanh"))
        return QColor(0xf7, 0xef, 0xb0);
    if (op.contains("softmax")) return QColor(0xf5, 0xc6, 0xd6);
    if (op == "reshape" || op.contains("transpose")) return QColor(0xe2, 0xe2, 0xe2);
    return QColor(0xcf, 0xec, 0xcf);  // elementwise and the rest
}

struct LayoutOutcome {
    LayoutResult result;
    QString error;
};

QPointF toQPoint(const LayoutPoint& p) { return QPointF(p.x, p.y); }

// Where the segment from `inside` (a box centre) towards `outside` leaves `box`.
QPointF boxExit(const QRectF& box, QPointF inside, QPointF outside) {
    QLineF ray(inside, outside);
    const QLineF sides[4] = {
        QLineF(box.topLeft(), box.topRight()), QLineF(box.topRight(), box.bottomRight()),
        QLineF(box.bottomRight(), box.bottomLeft()), QLineF(box.bottomLeft(), box.topLeft())};
    for (const QLineF& side : sides) {
        QPointF hit;
        if (ray.intersects(side, &hit) == QLineF::BoundedIntersection) return hit;
    }
    return inside;
}

QPolygonF arrowHead(QPointF from, QPointF tip) {
    QLineF line(from, tip);
    if (line.length() < 1e-6) return {};
    const double length = qMin(10.0, qMax(6.0, line.length()));
    QPointF dir = (tip - from) / line.length();
    QPointF normal(-dir.y(), dir.x());
    QPointF base = tip - dir * length;
    return QPolygonF({tip, base + normal * 4.0, base - normal * 4.0});
}

}  // namespace

// ---- GraphNodeItem

GraphNodeItem::GraphNodeItem(int nodeIndex, const GraphViewNode& node, QSizeF size)
    : m_index(nodeIndex), m_node(node), m_size(size) {
    setFlag(ItemIsSelectable);
    setAcceptHoverEvents(true);
    setToolTip(node.toolTip.isEmpty() ? node.op + "\n" + node.name : node.toolTip);
    setZValue(1);
}

void GraphNodeItem::setFillColor(const QColor& color) {
    m_fill = color;
    update();
}

QRectF GraphNodeItem::boundingRect() const {
    return QRectF(-m_size.width() / 2 - 2, -m_size.height() / 2 - 2, m_size.width() + 4,
                  m_size.height() + 4);
}

void GraphNodeItem::paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget*) {
    const QRectF box(-m_size.width() / 2, -m_size.height() / 2, m_size.width(), m_size.height());
    painter->setRenderHint(QPainter::Antialiasing);
    const bool selected = isSelected();
    painter->setPen(
        QPen(selected ? QColor(0x10, 0x5c, 0xd8) : QColor(0x50, 0x5a, 0x68), selected ? 3.0 : 1.0));
    painter->setBrush(m_fill.isValid() ? m_fill : colorForOp(m_node.op));
    painter->drawRoundedRect(box, 5, 5);

    painter->setPen(Qt::black);
    const QRectF top(box.left(), box.top() + kPadY / 2, box.width(), box.height() / 2 - kPadY / 4);
    const QRectF bottom(box.left(), box.center().y(), box.width(), box.height() / 2 - kPadY / 2);
    painter->setFont(opFont());
    painter->drawText(top, Qt::AlignHCenter | Qt::AlignVCenter, m_node.op);
    painter->setFont(nameFont());
    painter->setPen(QColor(0x30, 0x30, 0x30));
    painter->drawText(bottom, Qt::AlignHCenter | Qt::AlignVCenter, shownName(m_node.name));
}

// ---- GraphEdgeItem

GraphEdgeItem::GraphEdgeItem(int from, int to, const QPainterPath& path, const QPolygonF& arrow)
    : QGraphicsPathItem(path), m_from(from), m_to(to), m_arrowHead(arrow) {
    setPen(QPen(QColor(0x55, 0x55, 0x55), 1.2));
    setZValue(0);
}

void GraphEdgeItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option,
                          QWidget* widget) {
    painter->setRenderHint(QPainter::Antialiasing);
    painter->setPen(pen());
    painter->setBrush(Qt::NoBrush);
    painter->drawPath(path());
    if (!m_arrowHead.isEmpty()) {
        painter->setBrush(pen().color());
        painter->drawPolygon(m_arrowHead);
    }
}

// ---- GraphView

GraphView::GraphView(QWidget* parent) : QGraphicsView(parent), m_scene(new QGraphicsScene(this)) {
    setScene(m_scene);
    setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
    setDragMode(QGraphicsView::ScrollHandDrag);  // drag on empty space pans
    setTransformationAnchor(QGraphicsView::AnchorUnderMouse);
    setResizeAnchor(QGraphicsView::AnchorViewCenter);
    setBackgroundBrush(QColor(0xfa, 0xfa, 0xf7));
    setAcceptDrops(false);  // let file drops reach the window
    connect(m_scene, &QGraphicsScene::selectionChanged, this, &GraphView::onSceneSelectionChanged);
}

void GraphView::clearGraph() {
    ++m_generation;  // a pending layout is now stale
    m_pending = false;
    const bool hadSelection = m_current != -1;
    m_current = -1;
    m_nodeItems.clear();
    m_edgeItems.clear();
    {
        const QSignalBlocker blocker(m_scene);
        m_scene->clear();
    }
    m_scene->setSceneRect(QRectF());
    if (hadSelection) emit currentNodeChanged(-1);
}

void GraphView::setGraph(const GraphViewData& data) {
    clearGraph();
    const int generation = m_generation;
    m_pending = true;

    // Box sizes need font metrics: measure here, on the UI thread.
    LayoutInput input;
    const QFontMetricsF opMetrics(opFont()), nameMetrics(nameFont());
    for (const GraphViewNode& node : data.nodes) {
        LayoutNodeSpec spec;
        spec.label = node.op.toStdString();
        spec.width = qMax(kMinWidth, qMax(opMetrics.horizontalAdvance(node.op),
                                          nameMetrics.horizontalAdvance(shownName(node.name))) +
                                         2 * kPadX);
        spec.height = opMetrics.height() + nameMetrics.height() + 2 * kPadY;
        input.nodes.push_back(spec);
    }
    for (const auto& [from, to] : data.edges) input.edges.push_back({from, to});

    auto promise = std::make_shared<QPromise<LayoutOutcome>>();
    QFuture<LayoutOutcome> future = promise->future();
    promise->start();
    QThreadPool::globalInstance()->start([promise, input]() {
        LayoutOutcome outcome;
        try {
            outcome.result = layout_graph(input);
        } catch (const std::exception& e) {
            outcome.error = QString::fromStdString(e.what());
        }
        promise->addResult(outcome);
        promise->finish();
    });

    auto* watcher = new QFutureWatcher<LayoutOutcome>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, generation, data]() {
        watcher->deleteLater();
        if (generation != m_generation) return;  // superseded by a newer graph
        m_pending = false;
        const LayoutOutcome outcome = watcher->result();
        if (!outcome.error.isEmpty()) {
            emit layoutFailed(outcome.error);
            return;
        }
        buildScene(outcome.result, data);
        emit layoutFinished();
    });
    watcher->setFuture(future);
}

void GraphView::buildScene(const LayoutResult& layout, const GraphViewData& data) {
    QVector<QRectF> boxes;
    for (int i = 0; i < data.nodes.size(); ++i) {
        const LayoutNodeBox& box = layout.nodes[i];
        auto* item = new GraphNodeItem(i, data.nodes[i], QSizeF(box.width, box.height));
        item->setPos(toQPoint(box.center));
        m_scene->addItem(item);
        m_nodeItems.append(item);
        boxes.append(QRectF(box.center.x - box.width / 2, box.center.y - box.height / 2, box.width,
                            box.height));
    }
    for (const LayoutEdgePath& edge : layout.edges) {
        QPainterPath path;
        QPolygonF arrow;
        if (edge.is_spline && edge.points.size() >= 4) {
            path.moveTo(toQPoint(edge.points[0]));
            for (size_t k = 1; k + 2 < edge.points.size(); k += 3)
                path.cubicTo(toQPoint(edge.points[k]), toQPoint(edge.points[k + 1]),
                             toQPoint(edge.points[k + 2]));
            const QPointF last = toQPoint(edge.points.back());
            if (edge.has_arrow_tip) {
                path.lineTo(toQPoint(edge.arrow_tip));
                arrow = arrowHead(last, toQPoint(edge.arrow_tip));
            } else {
                arrow = arrowHead(toQPoint(edge.points[edge.points.size() - 2]), last);
            }
        } else {
            const QPointF a = boxes[edge.from].center(), b = boxes[edge.to].center();
            const QPointF start = boxExit(boxes[edge.from], a, b),
                          end = boxExit(boxes[edge.to], b, a);
            path.moveTo(start);
            path.lineTo(end);
            arrow = arrowHead(start, end);
        }
        auto* item = new GraphEdgeItem(edge.from, edge.to, path, arrow);
        m_scene->addItem(item);
        m_edgeItems.append(item);
    }
    const double margin = 30;
    m_scene->setSceneRect(
        QRectF(-margin, -margin, layout.width + 2 * margin, layout.height + 2 * margin));
    fitAll();
}

void GraphView::setCurrentNode(int index) {
    if (index < -1 || index >= m_nodeItems.size()) index = -1;
    {
        const QSignalBlocker blocker(m_scene);
        m_scene->clearSelection();
        if (index >= 0) m_nodeItems[index]->setSelected(true);
    }
    m_scene->update();
    if (index >= 0) ensureVisible(m_nodeItems[index], 40, 40);
    if (index != m_current) {
        m_current = index;
        emit currentNodeChanged(index);
    }
}

void GraphView::setNodeHeat(const QVector<double>& heat) {
    for (GraphNodeItem* item : m_nodeItems) {
        const int i = item->nodeIndex();
        if (i < heat.size() && heat[i] >= 0) {
            const double t = qBound(0.0, heat[i], 1.0);
            // White (cold) to red (hot).
            item->setFillColor(QColor::fromRgbF(1.0, 1.0 - 0.6 * t, 1.0 - 0.7 * t));
        } else {
            item->setFillColor(QColor());
        }
    }
}

void GraphView::onSceneSelectionChanged() {
    int index = -1;
    for (QGraphicsItem* item : m_scene->selectedItems())
        if (item->type() == GraphNodeItem::Type) {
            index = static_cast<GraphNodeItem*>(item)->nodeIndex();
            break;
        }
    if (index == -1 && m_current != -1) return;  // keep the last selection on empty clicks
    if (index != m_current) {
        m_current = index;
        emit currentNodeChanged(index);
    }
}

void GraphView::fitAll() {
    const QRectF rect = m_scene->sceneRect();
    if (rect.isEmpty()) return;
    fitInView(rect, Qt::KeepAspectRatio);
    const double scale = transform().m11();
    if (scale > 1.5) {
        zoomBy(1.5 / scale);  // do not blow a tiny graph up
        centerOn(rect.center());
    } else if (scale < 0.35) {
        zoomBy(0.35 / scale);  // stay readable; show the top of a tall graph
        centerOn(rect.center().x(), rect.top() + viewport()->height() / 0.35 / 2);
    }
}

void GraphView::zoomIn() { zoomBy(1.25); }
void GraphView::zoomOut() { zoomBy(0.8); }

void GraphView::zoomBy(double factor) {
    const double current = transform().m11();
    const double target = qBound(0.05, current * factor, 8.0);
    scale(target / current, target / current);
}

void GraphView::wheelEvent(QWheelEvent* event) {
    const int delta = event->angleDelta().y();
    if (delta == 0) {
        QGraphicsView::wheelEvent(event);
        return;
    }
    zoomBy(qPow(1.0015, delta));
    event->accept();
}

}  // namespace tessera::widgets
