// RooflinePlot: two graphs (the roof, the kernels) and text labels.
#include "widgets/roofline_plot.h"

#include <qcustomplot.h>

#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "widgets/short_labels.h"
#include "widgets/theme.h"

namespace tessera::widgets {

RooflinePlot::RooflinePlot(QWidget* parent) : QWidget(parent), m_plot(new QCustomPlot(this)) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_plot);
    followPalette(m_plot);  // light or dark with the system
    // In each replot, once the axes are laid out for the plot's size and
    // before anything is drawn.
    connect(m_plot, &QCustomPlot::afterLayout, this, &RooflinePlot::hideCoveringLabels);
    QSharedPointer<QCPAxisTickerLog> ticker(new QCPAxisTickerLog);
    for (QCPAxis* axis : {m_plot->xAxis, m_plot->yAxis}) {
        axis->setScaleType(QCPAxis::stLogarithmic);
        axis->setTicker(ticker);
    }
    m_plot->xAxis->setLabel("arithmetic intensity (FLOP/byte)");
    m_plot->yAxis->setLabel("GFLOP/s");
    m_plot->addGraph()->setPen(QPen(QColor(0xd0, 0x5a, 0x1a), 2));
    QCPGraph* points = m_plot->addGraph();
    points->setLineStyle(QCPGraph::lsNone);
    points->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, QColor(0x2a, 0x5d, 0x9f), 7));
    redraw();
}

void RooflinePlot::setPeaks(double gflops, double gbps) {
    setCeilings(gflops, {{"memory", gbps}}, QString());
}

void RooflinePlot::setCeilings(double gflops, const QVector<QPair<QString, double>>& roofs,
                               const QString& method) {
    m_peak = gflops;
    m_roofs = roofs;
    m_plot->setToolTip(method);
    redraw();
}

void RooflinePlot::setIntegerPeak(double gops) {
    m_int8Peak = gops;
    redraw();
}

void RooflinePlot::setKernels(const QStringList& labels, const QVector<double>& intensity,
                              const QVector<double>& gflops, const QVector<bool>& integer) {
    m_integer = integer;
    // Integer kernels' points count int8 operations, not FLOPs.
    const bool anyInteger = std::find(integer.begin(), integer.end(), true) != integer.end();
    m_plot->xAxis->setLabel(anyInteger ? "arithmetic intensity (FLOP or int8 op per byte)"
                                       : "arithmetic intensity (FLOP/byte)");
    m_plot->yAxis->setLabel(anyInteger ? "GFLOP/s, int8 kernels GOP/s" : "GFLOP/s");
    m_labels = labels;
    m_intensity = intensity;
    m_gflops = gflops;
    redraw();
}

double RooflinePlot::attainable(double intensity, bool integer) const {
    double fastest = 0;
    for (const auto& roof : m_roofs) fastest = std::max(fastest, roof.second);
    return std::min(integer && m_int8Peak > 0 ? m_int8Peak : m_peak, fastest * intensity);
}

QStringList RooflinePlot::kernelsAbove(double tolerance) const {
    QStringList above;
    for (int i = 0; i < std::min(m_intensity.size(), m_gflops.size()); ++i)
        if (const double ceiling = attainable(m_intensity[i], m_integer.value(i, false));
            m_intensity[i] > 0 && m_gflops[i] > ceiling * (1 + tolerance))
            above << QString("%1 (%2 GFLOP/s at %3 FLOP/B, ceiling %4)")
                         .arg(m_labels.value(i))
                         .arg(m_gflops[i], 0, 'f', 1)
                         .arg(m_intensity[i], 0, 'g', 3)
                         .arg(ceiling, 0, 'f', 1);
    return above;
}

void RooflinePlot::redraw() {
    m_plot->clearItems();
    m_fixedLabels.clear();
    m_kernelLabels.clear();
    QVector<QCPItemText*>& fixed = m_fixedLabels;
    QVector<QCPItemText*>& kernelLabels = m_kernelLabels;
    const double xlo = 0.01, xhi = 1000;
    QVector<double> rx, ry;
    const double fastest = m_roofs.isEmpty() ? 0 : m_roofs.first().second;
    if (m_peak > 0 && fastest > 0) {
        for (double x = xlo; x <= xhi * 1.0001; x *= 1.2) {
            rx << x;
            ry << attainable(x);
        }
        auto* label = new QCPItemText(m_plot);
        fixed.push_back(label);
        label->position->setCoords(xhi * 0.8, m_peak * 1.35);
        label->setPositionAlignment(Qt::AlignRight | Qt::AlignBottom);
        QStringList roofs;  // the solid roof first, then the dashed ones from the top
        for (const auto& roof : m_roofs)
            roofs << QString("%1 %2").arg(roof.first).arg(roof.second, 0, 'f', 0);
        label->setText(
            QString("peak %1 GFLOP/s \u00b7 %2 GB/s").arg(m_peak, 0, 'f', 1).arg(roofs.join(", ")));
        label->setColor(QColor(0xa0, 0x40, 0x10));
    }
    m_plot->graph(0)->setData(rx, ry);
    // The slower roofs (caches below the fastest, memory) as dashed lines.
    while (m_plot->graphCount() > 2) m_plot->removeGraph(2);
    for (int r = 1; r < m_roofs.size() && m_peak > 0; ++r) {
        QVector<double> x, y;
        for (double v = xlo; v <= xhi * 1.0001; v *= 1.2) {
            x << v;
            y << std::min(m_peak, m_roofs[r].second * v);
        }
        QCPGraph* roof = m_plot->addGraph();
        roof->setPen(QPen(QColor(0xd0, 0x5a, 0x1a, 150), 1, Qt::DashLine));
        roof->setData(x, y);
    }
    if (m_int8Peak > 0 && m_peak > 0 && fastest > 0) {
        // The integer roof, dotted, labelled at its right end.
        QVector<double> x, y;
        for (double v = xlo; v <= xhi * 1.0001; v *= 1.2) {
            x << v;
            y << attainable(v, true);
        }
        QCPGraph* roof = m_plot->addGraph();
        roof->setPen(QPen(QColor(0x2a, 0x7a, 0x3a, 200), 1.5, Qt::DotLine));
        roof->setData(x, y);
        auto* label = new QCPItemText(m_plot);
        fixed.push_back(label);
        label->position->setCoords(xhi * 0.8, m_int8Peak * 1.35);
        label->setPositionAlignment(Qt::AlignRight | Qt::AlignBottom);
        label->setText(QString("int8 dot-product peak %1 GOP/s").arg(m_int8Peak, 0, 'f', 1));
        label->setColor(QColor(0x2a, 0x7a, 0x3a));
    }
    QVector<double> px, py;
    m_count = 0;
    double top = std::max({m_peak, m_int8Peak, 1.0});
    // The labelled points' names without the start they all share.
    QStringList labelled;
    for (int i = 0;
         i < std::min(m_intensity.size(), m_gflops.size()) && labelled.size() < kMaxLabels; ++i)
        if (m_intensity[i] > 0 && m_gflops[i] > 0) labelled << m_labels.value(i);
    const int shared = sharedLabelStart(labelled);
    for (int i = 0; i < std::min(m_intensity.size(), m_gflops.size()); ++i) {
        if (!(m_intensity[i] > 0) || !(m_gflops[i] > 0)) continue;
        px << m_intensity[i];
        py << m_gflops[i];
        top = std::max(top, m_gflops[i]);
        if (m_count >= kMaxLabels) {  // the first points (the caller's most important) only
            ++m_count;
            continue;
        }
        // Right of the point in the plot's left half, left of it in the right
        // half, so that a label never runs past the axis rect (which clips
        // it); long kernel names are cut (the Kernels table has them whole).
        auto* text = new QCPItemText(m_plot);
        text->position->setCoords(m_intensity[i], m_gflops[i]);
        const bool right_half = m_intensity[i] > std::sqrt(xlo * xhi);
        text->setPositionAlignment((right_half ? Qt::AlignRight : Qt::AlignLeft) | Qt::AlignBottom);
        const QString name = shortLabel(m_labels.value(i), shared, kMaxLabelChars);
        text->setText(right_half ? name + " " : " " + name);
        QFont f = font();
        f.setPointSizeF(7.5);
        text->setFont(f);
        kernelLabels.push_back(text);
        ++m_count;
    }
    m_plot->graph(1)->setData(px, py);
    m_plot->xAxis->setRange(xlo, xhi);
    double bottom = 0.01;
    for (double y : py) bottom = std::min(bottom, y / 2);
    m_plot->yAxis->setRange(bottom, top * 3);
    m_plot->replot();
}

void RooflinePlot::hideCoveringLabels() {
    // Labels that would cover the peaks' or an earlier (more important)
    // kernel's label are hidden: on ResNet-18 they piled up into one blot
    // over the roofs' legend. Their points stay, with tooltips. Checked again
    // after every layout (a docked plot is smaller than a floating one).
    QVector<QRectF> taken;
    auto rect = [](QCPItemText* t) {
        return QRectF(t->topLeft->pixelPosition(), t->bottomRight->pixelPosition()).normalized();
    };
    for (QCPItemText* t : m_fixedLabels) taken << rect(t);
    for (QCPItemText* t : m_kernelLabels) {
        const QRectF r = rect(t);
        const bool covers = std::any_of(taken.begin(), taken.end(),
                                        [&](const QRectF& other) { return other.intersects(r); });
        t->setVisible(!covers);
        if (!covers) taken << r;
    }
}

int RooflinePlot::visibleKernelLabels() const {
    return int(std::count_if(m_kernelLabels.begin(), m_kernelLabels.end(),
                             [](const QCPItemText* t) { return t->visible(); }));
}

}  // namespace tessera::widgets
