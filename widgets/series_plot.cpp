// SeriesPlot and exportPlot.
#include "widgets/series_plot.h"

#include <qcustomplot.h>

#include <QSvgGenerator>
#include <QVBoxLayout>
#include <algorithm>
#include <limits>

#include "widgets/theme.h"

namespace tessera::widgets {

SeriesPlot::SeriesPlot(const QString& yLabel, QWidget* parent)
    : QWidget(parent), m_plot(new QCustomPlot(this)) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_plot);
    followPalette(m_plot);  // light or dark with the system
    setMinimumHeight(120);
    m_points = m_plot->addGraph();
    m_points->setLineStyle(QCPGraph::lsNone);
    m_points->setScatterStyle(
        QCPScatterStyle(QCPScatterStyle::ssDisc, QColor(0x2a, 0x5d, 0x9f), 7));
    m_points->setName("measured");
    m_bestLine = m_plot->addGraph();
    m_bestLine->setLineStyle(QCPGraph::lsStepLeft);
    m_bestLine->setPen(QPen(QColor(0xd0, 0x5a, 0x1a), 2));
    m_bestLine->setName("best so far");
    m_plot->xAxis->setLabel("measurement");
    m_plot->yAxis->setLabel(yLabel);
    m_plot->legend->setVisible(true);
    QFont small = font();
    small.setPointSizeF(8);
    m_plot->legend->setFont(small);
    m_plot->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignBottom | Qt::AlignRight);
    clear();
}

void SeriesPlot::addPoint(double value, const QString& label, const QString& series) {
    const double x = pointCount() + 1;
    m_points->addData(x, value);
    m_best = std::max(m_best, value);
    // Another series: a gap (a NaN point) so the line joins no two series.
    if (!m_series.isEmpty() && m_series.back() != series) {
        m_bestLine->addData(x - 0.5, std::numeric_limits<double>::quiet_NaN());
        m_bestLine->setName("best so far, per kernel");
    }
    double& best = m_bestOf[series];
    best = std::max(best, value);
    m_bestLine->addData(x, best);
    m_bestAt.append(best);
    m_series.append(series);
    if (!label.isEmpty()) m_points->setName("measured (last: " + label + ")");
    m_plot->xAxis->setRange(0.5, std::max(5.5, x + 0.5));
    m_plot->yAxis->setRange(0, m_best * 1.15 > 0 ? m_best * 1.15 : 1);
    m_plot->replot();
}

void SeriesPlot::setYLabel(const QString& label) {
    if (m_plot->yAxis->label() == label) return;
    m_plot->yAxis->setLabel(label);
    m_plot->replot();
}

void SeriesPlot::clear() {
    m_points->data()->clear();
    m_points->setName("measured");  // no "last:" kernel of what was cleared
    m_bestLine->data()->clear();
    m_bestLine->setName("best so far");
    m_best = 0;
    m_bestAt.clear();
    m_series.clear();
    m_bestOf.clear();
    m_plot->xAxis->setRange(0.5, 5.5);
    m_plot->yAxis->setRange(0, 1);
    m_plot->replot();
}

int SeriesPlot::pointCount() const { return m_points->data()->size(); }

bool exportPlot(QCustomPlot* plot, const QString& path, int width, int height) {
    if (path.endsWith(".pdf", Qt::CaseInsensitive)) return plot->savePdf(path, width, height);
    if (path.endsWith(".svg", Qt::CaseInsensitive)) {
        QSvgGenerator generator;
        generator.setFileName(path);
        generator.setSize(QSize(width, height));
        generator.setViewBox(QRect(0, 0, width, height));
        QCPPainter painter;
        if (!painter.begin(&generator)) return false;
        plot->toPainter(&painter, width, height);
        return painter.end();
    }
    return plot->savePng(path, width, height);
}

}  // namespace tessera::widgets
