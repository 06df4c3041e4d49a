// GraphView: Graphviz layout on a worker thread, scene built on the UI thread.
#include "widgets/graph_view.h"

#include <QFontMetricsF>
#include <QFutureWatcher>
#include <QGraphicsSceneEvent>
#include <QImage>
#include <QKeyEvent>
#include <QPainter>
#include <QPromise>
#include <QScrollBar>
#include <QSet>
#include <QStyleOptionGraphicsItem>
#include <QSvgGenerator>
#include <QThreadPool>
#include <QWheelEvent>
#include <QtMath>
#include <cmath>
#include <memory>
#include <utility>

#include "widgets/graph_layout.h"
#include "widgets/theme.h"

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

QFont shapeFont() {
    QFont f;
    f.setPointSizeF(7.5);
    return f;
}

// Below this zoom, nodes are drawn as plain boxes (no text, no antialiasing):
// what keeps 1,000+ node graphs smooth when zoomed out.
constexpr double kTextLod = 0.45;
// The smallest op label drawn (screen pixels): smaller text is noise.
constexpr double kMinLabelPixels = 7;

QString shownName(const QString& name) {
    return name.size() > kMaxNameChars ? name.left(kMaxNameChars - 1) + QChar(0x2026) : name;
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

// ---- GraphNodeItem

GraphNodeItem::GraphNodeItem(int nodeIndex, const GraphViewNode& node, QSizeF size)
    : GraphNodeItem(QVector<int>{nodeIndex}, node, size) {}

GraphNodeItem::GraphNodeItem(const QVector<int>& members, const GraphViewNode& node, QSizeF size)
    : m_index(members.isEmpty() ? -1 : members.first()),
      m_members(members),
      m_node(node),
      m_size(size) {
    setFlag(ItemIsSelectable);
    setAcceptHoverEvents(true);
    setToolTip(node.toolTip.isEmpty() ? node.op + "\n" + node.name : node.toolTip);
    setZValue(1);
}

void GraphNodeItem::setFillColor(const QColor& color) {
    m_fill = color;
    update();
}

double GraphNodeItem::opLabelPixels(double lod, double boxHeight) {
    if (lod >= kTextLod) return QFontMetricsF(opFont()).ascent() * lod;  // the full box
    // Readable on screen (10 px), as long as that fits 70 % of the box's height.
    const double wanted = 10, room = 0.7 * boxHeight * lod;
    return room >= kMinLabelPixels ? std::min(wanted, room) : 0;
}

QRectF GraphNodeItem::boundingRect() const {
    return QRectF(-m_size.width() / 2 - 2, -m_size.height() / 2 - 2, m_size.width() + 4,
                  m_size.height() + 4);
}

QColor GraphNodeItem::fillColor() const {
    return m_fill.isValid() ? m_fill : colorForOp(m_node.op);
}

void GraphNodeItem::setHighlight(const QColor& color) {
    m_highlight = color;
    update();
}

void GraphNodeItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*) {
    const QRectF box(-m_size.width() / 2, -m_size.height() / 2, m_size.width(), m_size.height());
    const double lod = option->levelOfDetailFromTransform(painter->worldTransform());
    const bool selected = isSelected();
    QPen pen(selected ? QColor(0x10, 0x5c, 0xd8) : QColor(0x50, 0x5a, 0x68), selected ? 3.0 : 1.0);
    if (m_highlight.isValid() && !selected) pen = QPen(m_highlight, 3.0);
    if (lod < kTextLod) {
        // Level of detail: a flat box, and the op name (details fade) in a
        // font sized for the screen while it still fits the box.
        painter->setRenderHint(QPainter::Antialiasing, false);
        pen.setCosmetic(true);
        painter->setPen(selected || m_highlight.isValid() ? pen : Qt::NoPen);
        painter->setBrush(fillColor().darker(110));
        painter->drawRect(box);
        const double pixels = opLabelPixels(lod, box.height());
        if (pixels <= 0) return;
        QFont font = opFont();
        font.setPixelSize(std::max(1, int(std::lround(pixels / lod))));
        painter->setFont(font);
        painter->setPen(Qt::black);
        painter->setRenderHint(QPainter::TextAntialiasing);
        QString op = m_node.op;
        if (op.startsWith("nn.")) op = op.mid(3);
        painter->drawText(box, Qt::AlignCenter,
                          QFontMetricsF(font).elidedText(op, Qt::ElideRight, box.width()));
        return;
    }
    painter->setRenderHint(QPainter::Antialiasing);
    painter->setPen(pen);
    painter->setBrush(fillColor());
    painter->drawRoundedRect(box, 5, 5);

    const int lines = m_node.shape.isEmpty() ? 2 : 3;
    const double lineHeight = (box.height() - kPadY) / lines;
    QRectF line(box.left(), box.top() + kPadY / 2, box.width(), lineHeight);
    painter->setPen(Qt::black);
    painter->setFont(opFont());
    painter->drawText(line, Qt::AlignHCenter | Qt::AlignVCenter, m_node.op);
    line.translate(0, lineHeight);
    painter->setFont(nameFont());
    painter->setPen(QColor(0x30, 0x30, 0x30));
    painter->drawText(line, Qt::AlignHCenter | Qt::AlignVCenter, shownName(m_node.name));
    if (lines == 3) {
        line.translate(0, lineHeight);
        painter->setFont(shapeFont());
        painter->setPen(QColor(0x55, 0x55, 0x60));
        painter->drawText(line, Qt::AlignHCenter | Qt::AlignVCenter, m_node.shape);
    }
}

// ---- GraphEdgeItem

GraphEdgeItem::GraphEdgeItem(int from, int to, const QPainterPath& path, const QPolygonF& arrow)
    : QGraphicsPathItem(path), m_from(from), m_to(to), m_arrowHead(arrow) {
    setPen(QPen(QColor(0x55, 0x55, 0x55), 1.2));
    setZValue(0);
}

void GraphEdgeItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option,
                          QWidget* widget) {
    const double lod = option->levelOfDetailFromTransform(painter->worldTransform());
    QPen p = pen();
    // Edges follow the theme: light grey on a dark canvas.
    if (widget && isDark(widget->palette())) p.setColor(QColor(0xa8, 0xad, 0xb5));
    if (lod < kTextLod) p.setCosmetic(true);  // a hairline, no arrow heads
    painter->setRenderHint(QPainter::Antialiasing, lod >= kTextLod);
    painter->setPen(p);
    painter->setBrush(Qt::NoBrush);
    painter->drawPath(path());
    if (!m_arrowHead.isEmpty() && lod >= kTextLod) {
        painter->setBrush(p.color());
        painter->drawPolygon(m_arrowHead);
    }
}

// ---- GraphView

GraphView::GraphView(QWidget* parent)
    : QGraphicsView(parent), m_scene(new QGraphicsScene(this)), m_overview(nullptr) {
    setScene(m_scene);
    m_scene->setItemIndexMethod(QGraphicsScene::BspTreeIndex);
    setViewportUpdateMode(QGraphicsView::SmartViewportUpdate);
    setOptimizationFlags(QGraphicsView::DontSavePainterState);
    setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
    setDragMode(QGraphicsView::ScrollHandDrag);  // drag on empty space pans
    setTransformationAnchor(QGraphicsView::AnchorUnderMouse);
    setResizeAnchor(QGraphicsView::AnchorViewCenter);
    setAcceptDrops(false);  // let file drops reach the window
    connect(m_scene, &QGraphicsScene::selectionChanged, this, &GraphView::onSceneSelectionChanged);
    m_overview = new GraphOverview(this);
    m_overview->hide();
    applyTheme();
}

GraphView::~GraphView() { m_scene->disconnect(this); }

void GraphView::applyTheme() {
    // Follow the system theme: a dark canvas under a dark palette.
    setBackgroundBrush(themed(palette(), QColor(0xfa, 0xfa, 0xf7), QColor(0x26, 0x28, 0x2c)));
    const QColor caption = themed(palette(), QColor(0x5a, 0x2f, 0xa9), QColor(0xc0, 0xa8, 0xf0));
    for (QGraphicsItem* item : m_groupItems)
        if (auto* text = dynamic_cast<QGraphicsSimpleTextItem*>(item)) text->setBrush(caption);
    if (m_overview) {
        QColor base = palette().color(QPalette::Base);
        base.setAlpha(230);
        m_overview->setBackgroundBrush(base);
    }
    viewport()->update();
}

void GraphView::changeEvent(QEvent* event) {
    QGraphicsView::changeEvent(event);
    if (event->type() == QEvent::PaletteChange) applyTheme();
}

void GraphView::clearGraph() {
    ++m_generation;  // a pending layout is now stale
    m_pending = false;
    const bool hadSelection = m_current != -1;
    m_current = -1;
    m_nodeItems.clear();
    m_itemOf.clear();
    m_edgeItems.clear();
    m_groupItems.clear();
    {
        const QSignalBlocker blocker(m_scene);
        m_scene->clear();
    }
    m_scene->setSceneRect(QRectF());
    updateOverview();
    if (hadSelection) emit currentNodeChanged(-1);
}

void GraphView::setGraph(const GraphViewData& data) {
    m_data = data;
    m_collapse.clear();
    m_heat.clear();
    QVector<QVector<int>> members;
    for (int i = 0; i < data.nodes.size(); ++i) members.append(QVector<int>{i});
    layOut(data, members);
}

namespace {

// The graph with each group drawn as one node: `members` gets the graph
// nodes of every node shown. Boxes around groups are dropped.
GraphViewData collapsedGraph(const GraphViewData& data, const QVector<GraphViewCollapse>& groups,
                             QVector<QVector<int>>* members) {
    QVector<int> groupOf(data.nodes.size(), -1);
    for (int g = 0; g < groups.size(); ++g)
        if (groups[g].nodes.size() > 1)
            for (int n : groups[g].nodes)
                if (n >= 0 && n < groupOf.size() && groupOf[n] < 0) groupOf[n] = g;
    GraphViewData shown;
    QVector<int> shownOf(data.nodes.size(), -1), shownOfGroup(groups.size(), -1);
    for (int n = 0; n < data.nodes.size(); ++n) {
        const int g = groupOf[n];
        if (g < 0) {
            shownOf[n] = int(shown.nodes.size());
            shown.nodes.append(data.nodes[n]);
            members->append(QVector<int>{n});
            continue;
        }
        if (shownOfGroup[g] < 0) {
            QVector<int> inGroup;
            QStringList ops, tip{groups[g].title};
            for (int m : groups[g].nodes)
                if (m >= 0 && m < groupOf.size() && groupOf[m] == g) {
                    inGroup.append(m);
                    if (!ops.contains(data.nodes[m].op)) ops << data.nodes[m].op;
                    tip << "  " + data.nodes[m].op + "  " + data.nodes[m].name;
                }
            GraphViewNode box;
            box.op = ops.size() > 3 ? ops.mid(0, 3).join(" + ") + " + \u2026" : ops.join(" + ");
            box.name = QString("%1 (%2 nodes)").arg(groups[g].title).arg(inGroup.size());
            box.shape = data.nodes[inGroup.last()].shape;
            box.toolTip = tip.join('\n');
            shownOfGroup[g] = int(shown.nodes.size());
            shown.nodes.append(box);
            members->append(inGroup);
        }
        shownOf[n] = shownOfGroup[g];
    }
    QSet<QPair<int, int>> seen;
    for (const auto& [from, to] : data.edges) {
        if (from < 0 || to < 0 || from >= shownOf.size() || to >= shownOf.size()) continue;
        const QPair<int, int> e{shownOf[from], shownOf[to]};
        if (e.first != e.second && !seen.contains(e)) {
            seen.insert(e);
            shown.edges.append(e);
        }
    }
    return shown;
}

}  // namespace

void GraphView::setCollapsed(const QVector<GraphViewCollapse>& groups) {
    const int current = m_current;
    m_collapse = groups;
    QVector<QVector<int>> members;
    if (groups.isEmpty()) {
        for (int i = 0; i < m_data.nodes.size(); ++i) members.append(QVector<int>{i});
        layOut(m_data, members);
    } else {
        layOut(collapsedGraph(m_data, groups, &members), members);
    }
    m_restoreCurrent = current;
}

void GraphView::layOut(const GraphViewData& data, const QVector<QVector<int>>& members) {
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
        const QFontMetricsF shapeMetrics(shapeFont());
        spec.width = qMax(spec.width, shapeMetrics.horizontalAdvance(node.shape) + 2 * kPadX);
        spec.height = opMetrics.height() + nameMetrics.height() + 2 * kPadY;
        if (!node.shape.isEmpty()) spec.height += shapeMetrics.height();
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
    connect(watcher, &QFutureWatcherBase::finished, this,
            [this, watcher, generation, data, members]() {
                watcher->deleteLater();
                if (generation != m_generation) return;  // superseded by a newer graph
                m_pending = false;
                const LayoutOutcome outcome = watcher->result();
                if (!outcome.error.isEmpty()) {
                    emit layoutFailed(outcome.error);
                    return;
                }
                buildScene(outcome.result, data, members);
                if (m_restoreCurrent >= 0) setCurrentNode(std::exchange(m_restoreCurrent, -1));
                emit layoutFinished();
            });
    watcher->setFuture(future);
}

void GraphView::buildScene(const LayoutResult& layout, const GraphViewData& data,
                           const QVector<QVector<int>>& members) {
    QVector<QRectF> boxes;
    m_itemOf = QVector<GraphNodeItem*>(m_data.nodes.size(), nullptr);
    for (int i = 0; i < data.nodes.size(); ++i) {
        const LayoutNodeBox& box = layout.nodes[i];
        auto* item = new GraphNodeItem(members[i], data.nodes[i], QSizeF(box.width, box.height));
        item->setPos(toQPoint(box.center));
        m_scene->addItem(item);
        m_nodeItems.append(item);
        for (int n : members[i])
            if (n >= 0 && n < m_itemOf.size()) m_itemOf[n] = item;
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
    for (const GraphViewGroup& group : data.groups) {
        QRectF bounds;
        for (int n : group.nodes)
            if (n >= 0 && n < boxes.size())
                bounds = bounds.isNull() ? boxes[n] : bounds.united(boxes[n]);
        if (bounds.isNull()) continue;
        bounds.adjust(-8, -16, 8, 6);
        auto* box = m_scene->addRect(bounds, QPen(QColor(0x7a, 0x4f, 0xc9), 1.4, Qt::DashLine),
                                     QColor(0x7a, 0x4f, 0xc9, 24));
        box->setZValue(-1);
        auto* caption = m_scene->addSimpleText(group.label, shapeFont());
        caption->setBrush(themed(palette(), QColor(0x5a, 0x2f, 0xa9), QColor(0xc0, 0xa8, 0xf0)));
        caption->setPos(bounds.left() + 4, bounds.top() + 1);
        caption->setZValue(-1);
        m_groupItems << box << caption;
    }
    if (!m_heat.isEmpty()) setNodeHeat(QVector<double>(m_heat));
    const double margin = 30;
    m_scene->setSceneRect(
        QRectF(-margin, -margin, layout.width + 2 * margin, layout.height + 2 * margin));
    fitAll();
    updateOverview();
}

void GraphView::setCurrentNode(int index) {
    if (!itemOf(index)) index = -1;
    {
        const QSignalBlocker blocker(m_scene);
        m_scene->clearSelection();
        if (index >= 0) itemOf(index)->setSelected(true);
    }
    m_scene->update();
    if (index >= 0) ensureVisible(itemOf(index), 40, 40);
    if (index != m_current) {
        m_current = index;
        emit currentNodeChanged(index);
    }
}

int GraphView::nodeToward(int node, int key) const {
    GraphNodeItem* from = itemOf(node);
    const int shown = m_nodeItems.indexOf(from);
    if (!from || shown < 0) return -1;
    const int count = int(m_nodeItems.size());
    if (key == Qt::Key_Tab || key == Qt::Key_Backtab) {
        const int next = (shown + (key == Qt::Key_Tab ? 1 : count - 1)) % count;
        return next == shown ? -1 : m_nodeItems[next]->nodeIndex();
    }
    const QPointF at = from->pos();  // the box's centre
    GraphNodeItem* best = nullptr;
    double bestScore = 0;
    auto consider = [&](GraphNodeItem* item, double score) {
        if (item && item != from && (!best || score < bestScore)) {
            best = item;
            bestScore = score;
        }
    };
    if (key == Qt::Key_Up || key == Qt::Key_Down) {
        // Along the edges: a producer (an input) or a consumer, the nearest across.
        for (const GraphEdgeItem* edge : m_edgeItems) {
            const int other = key == Qt::Key_Up ? (edge->to() == shown ? edge->from() : -1)
                                                : (edge->from() == shown ? edge->to() : -1);
            if (other < 0 || other >= count) continue;
            GraphNodeItem* item = m_nodeItems[other];
            consider(item, std::abs(item->pos().x() - at.x()) +
                               0.01 * std::abs(item->pos().y() - at.y()));
        }
    } else if (key == Qt::Key_Left || key == Qt::Key_Right) {
        // The nearest box that way on the same rank (dot centres a rank's
        // boxes on one line); at the rank's end the selection stays (it
        // jumped to a box many rows away, which Up and Down reach).
        const double sign = key == Qt::Key_Left ? -1 : 1;
        const double rank = from->boxHeight() / 2;
        for (GraphNodeItem* item : m_nodeItems) {
            const double dx = (item->pos().x() - at.x()) * sign,
                         dy = std::abs(item->pos().y() - at.y());
            if (dx <= 0 || dy >= rank) continue;
            consider(item, dx + 2 * dy);
        }
    } else {
        return -1;
    }
    return best ? best->nodeIndex() : -1;
}

bool GraphView::navigate(int key) {
    if (m_pending || m_nodeItems.isEmpty()) return false;
    if (!itemOf(m_current)) {
        // Nothing selected: Tab starts at the first box; the arrows scroll.
        if (key != Qt::Key_Tab && key != Qt::Key_Backtab) return false;
        setCurrentNode(m_nodeItems[key == Qt::Key_Tab ? 0 : m_nodeItems.size() - 1]->nodeIndex());
        return true;
    }
    const int next = nodeToward(m_current, key);
    if (next >= 0) setCurrentNode(next);
    return true;  // at an end: the selection stays, the view does not scroll
}

void GraphView::keyPressEvent(QKeyEvent* event) {
    const bool plain = !(event->modifiers() & (Qt::ControlModifier | Qt::AltModifier |
                                               Qt::MetaModifier | Qt::ShiftModifier));
    switch (event->key()) {
        case Qt::Key_Up:
        case Qt::Key_Down:
        case Qt::Key_Left:
        case Qt::Key_Right:
            if (plain && itemOf(m_current) && navigate(event->key())) {
                event->accept();
                return;
            }
            break;
        default:
            break;
    }
    QGraphicsView::keyPressEvent(event);
}

bool GraphView::event(QEvent* event) {
    // Tab and Shift+Tab cycle the nodes here instead of moving the focus on.
    if (event->type() == QEvent::KeyPress) {
        auto* key = static_cast<QKeyEvent*>(event);
        const bool other = key->modifiers() & (Qt::ControlModifier | Qt::AltModifier);
        int k = key->key();
        if (k == Qt::Key_Tab && (key->modifiers() & Qt::ShiftModifier)) k = Qt::Key_Backtab;
        if (!other && (k == Qt::Key_Tab || k == Qt::Key_Backtab) && navigate(k)) {
            key->accept();
            return true;
        }
    }
    return QGraphicsView::event(event);
}

void GraphView::setNodeHeat(const QVector<double>& heat) {
    m_heat = heat;
    for (GraphNodeItem* item : m_nodeItems) {
        double hottest = -1;  // a collapsed box is as hot as its hottest member
        for (int i : item->members())
            if (i >= 0 && i < heat.size()) hottest = std::max(hottest, heat[i]);
        if (hottest >= 0) {
            const double t = qBound(0.0, hottest, 1.0);
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
    if (index >= 0 && itemOf(m_current) == itemOf(index)) return;  // the same collapsed box
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
    updateOverview();
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

void GraphView::setHighlightedNodes(const QVector<int>& nodes, const QColor& color) {
    for (GraphNodeItem* item : m_nodeItems) item->setHighlight(QColor());
    for (int n : nodes)
        if (GraphNodeItem* item = itemOf(n)) item->setHighlight(color);
}

int GraphView::nodeAt(const QPoint& viewportPos) const {
    for (QGraphicsItem* item : items(viewportPos))
        if (item->type() == GraphNodeItem::Type)
            return static_cast<GraphNodeItem*>(item)->nodeIndex();
    return -1;
}

QVector<int> GraphView::findNodes(const QString& text) const {
    QVector<int> found;
    const QString needle = text.trimmed();
    if (needle.isEmpty()) return found;
    for (int n = 0; n < m_data.nodes.size(); ++n)
        if (m_data.nodes[n].name.contains(needle, Qt::CaseInsensitive) ||
            m_data.nodes[n].op.contains(needle, Qt::CaseInsensitive))
            found.append(n);
    return found;
}

int GraphView::search(const QString& text) {
    const QVector<int> found = findNodes(text);
    setHighlightedNodes(found, QColor(0xf0, 0x8c, 0x00));
    const bool again = text.trimmed() == m_lastSearch;
    m_lastSearch = text.trimmed();
    if (found.isEmpty()) return 0;
    int next = found.first();
    if (again) {  // the next match
        for (int n : found)
            if (n > m_current) {
                next = n;
                break;
            }
    } else {  // of the nodes named exactly so, the heaviest (a conv's GEMM, not its windows)
        double heaviest = -1;
        for (int n : found)
            if (m_data.nodes[n].name.compare(m_lastSearch, Qt::CaseInsensitive) == 0 &&
                m_data.nodes[n].weight > heaviest) {
                heaviest = m_data.nodes[n].weight;
                next = n;
            }
    }
    setCurrentNode(next);
    if (GraphNodeItem* item = itemOf(next)) centerOn(item);
    updateOverview();
    return int(found.size());
}

bool GraphView::exportImage(const QString& path) {
    const QRectF source = m_scene->sceneRect();
    if (source.isEmpty()) return false;
    if (path.endsWith(".svg", Qt::CaseInsensitive)) {
        QSvgGenerator generator;
        generator.setFileName(path);
        generator.setSize(source.size().toSize());
        generator.setViewBox(QRectF(QPointF(0, 0), source.size()));
        generator.setTitle("Tessera graph");
        QPainter painter;
        if (!painter.begin(&generator)) return false;
        m_scene->render(&painter, QRectF(QPointF(0, 0), source.size()), source);
        return painter.end();
    }
    // PNG at 2x for sharp text, capped so huge graphs stay a sane size.
    const double scale = qMin(2.0, 16000.0 / qMax(source.width(), source.height()));
    QImage image((source.size() * scale).toSize(), QImage::Format_ARGB32);
    image.fill(backgroundBrush().color());
    {
        QPainter painter(&image);
        painter.setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
        m_scene->render(&painter, QRectF(image.rect()), source);
    }
    return image.save(path, "PNG");
}

void GraphView::resizeEvent(QResizeEvent* event) {
    QGraphicsView::resizeEvent(event);
    updateOverview();
}

void GraphView::scrollContentsBy(int dx, int dy) {
    QGraphicsView::scrollContentsBy(dx, dy);
    if (m_overview && m_overview->isVisible()) m_overview->viewport()->update();
}

void GraphView::updateOverview() {
    if (!m_overview) return;
    const QRectF scene = m_scene->sceneRect();
    const QRectF visible = mapToScene(viewport()->rect()).boundingRect();
    const QSize vp = viewport()->size();
    // A view too small to spare a corner (a 1024 x 700 window leaves the graph
    // about 360 x 230 pixels) shows the graph without the overview over it.
    const bool room = vp.width() >= 420 && vp.height() >= 300;
    const bool needed =
        room && !m_nodeItems.isEmpty() && !visible.contains(scene.adjusted(20, 20, -20, -20));
    if (!needed) {
        m_overview->hide();
        return;
    }
    const double aspect = scene.height() > 0 ? scene.width() / scene.height() : 1.0;
    int h = qMin(260, vp.height() / 3), w = int(h * aspect);
    if (w > vp.width() / 4) {
        w = vp.width() / 4;
        h = int(w / qMax(aspect, 1e-3));
    }
    w = qMax(w, 60);
    h = qMax(h, 60);
    m_overview->setGeometry(vp.width() - w - 12 + viewport()->x(), 12 + viewport()->y(), w, h);
    m_overview->show();
    m_overview->raise();
    m_overview->refresh();
}

// ---- GraphOverview

GraphOverview::GraphOverview(GraphView* main) : QGraphicsView(main), m_main(main) {
    setScene(main->scene());
    setInteractive(false);
    setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    setFrameShape(QFrame::Box);
    setRenderHints({});  // the overview is always at a low level of detail
    setToolTip("Overview: click or drag to move the view");
}

void GraphOverview::refresh() {
    fitInView(scene()->sceneRect(), Qt::KeepAspectRatio);
    viewport()->update();
}

QRectF GraphOverview::visibleArea() const {
    return m_main->mapToScene(m_main->viewport()->rect()).boundingRect();
}

void GraphOverview::drawForeground(QPainter* painter, const QRectF&) {
    QPen pen(QColor(0x10, 0x5c, 0xd8), 2);
    pen.setCosmetic(true);
    painter->setPen(pen);
    painter->setBrush(QColor(0x10, 0x5c, 0xd8, 40));
    painter->drawRect(visibleArea());
}

void GraphOverview::mousePressEvent(QMouseEvent* event) {
    m_main->centerOn(mapToScene(event->position().toPoint()));
    viewport()->update();
}

void GraphOverview::mouseMoveEvent(QMouseEvent* event) {
    if (event->buttons() & Qt::LeftButton) mousePressEvent(event);
}

}  // namespace tessera::widgets
