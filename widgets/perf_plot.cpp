// PerfPlot: bars per kernel with text ticks.
#include "widgets/perf_plot.h"

#include <qcustomplot.h>

#include "widgets/theme.h"

#include <QVBoxLayout>
#include <algorithm>

namespace tessera::widgets {

PerfPlot::PerfPlot(QWidget* parent) : QWidget(parent), m_plot(new QCustomPlot(this)) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_plot);
    followPalette(m_plot);  // light or dark with the system
    setMinimumHeight(160);

    m_bars = new QCPBars(m_plot->xAxis, m_plot->yAxis);
    m_bars->setWidth(0.7);
    m_bars->setPen(QPen(QColor(0x2a, 0x5d, 0x9f)));
    m_bars->setBrush(QColor(0x5b, 0x8f, 0xd4));
    m_plot->yAxis->setLabel("ms per run");
    m_plot->xAxis->setTickLabelRotation(40);
    m_plot->xAxis->grid()->setVisible(false);
    QFont small = font();
    small.setPointSizeF(8);
    m_plot->xAxis->setTickLabelFont(small);
    m_plot->yAxis->setTickLabelFont(small);
    m_plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    m_plot->axisRect()->setRangeDrag(Qt::Horizontal);
    m_plot->axisRect()->setRangeZoom(Qt::Horizontal);
    clearBars();
}

void PerfPlot::setBars(const QStringList& labels, const QVector<double>& ms) {
    const int n = int(qMin(labels.size(), ms.size()));
    QVector<double> keys(n), values(n);
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    double top = 0;
    for (int i = 0; i < n; ++i) {
        keys[i] = i + 1;
        values[i] = ms[i];
        top = std::max(top, ms[i]);
        ticker->addTick(i + 1,
                        labels[i].size() > 18 ? labels[i].left(17) + QChar(0x2026) : labels[i]);
    }
    m_plot->xAxis->setTicker(ticker);
    m_bars->setData(keys, values, true);
    m_plot->xAxis->setRange(0.3, n + 0.7);
    m_plot->yAxis->setRange(0, top > 0 ? top * 1.1 : 1.0);
    m_plot->replot();
}

void PerfPlot::clearBars() { setBars({}, {}); }

int PerfPlot::barCount() const { return m_bars->data()->size(); }

}  // namespace tessera::widgets
