// PerfPlot: bars per kernel with text ticks.
#include "widgets/perf_plot.h"

#include <qcustomplot.h>

#include <QToolTip>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "widgets/short_labels.h"
#include "widgets/theme.h"

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
    m_plot->xAxis->setTickLabelRotation(-40);
    m_plot->xAxis->grid()->setVisible(false);
    QFont small = font();
    small.setPointSizeF(8);
    m_plot->xAxis->setTickLabelFont(small);
    m_plot->yAxis->setTickLabelFont(small);
    m_plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    m_plot->axisRect()->setRangeDrag(Qt::Horizontal);
    m_plot->axisRect()->setRangeZoom(Qt::Horizontal);
    connect(m_plot, &QCustomPlot::mouseMove, this, [this](QMouseEvent* event) {
        const QString tip = toolTipAt(event->pos());
        if (tip.isEmpty())
            QToolTip::hideText();
        else
            QToolTip::showText(event->globalPosition().toPoint(), tip, m_plot);
    });
    clearBars();
}

void PerfPlot::setBars(const QStringList& labels, const QVector<double>& ms) {
    const int n = int(qMin(labels.size(), ms.size()));
    // The slowest first; past kMaxBars, the rest share one "others" bar.
    QVector<int> order(n);
    for (int i = 0; i < n; ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return ms[a] > ms[b]; });
    const int shown = n > kMaxBars ? kMaxBars - 1 : n;
    m_tips.clear();
    double total = 0;
    for (int i = 0; i < n; ++i) total += ms[i];
    QVector<double> keys, values;
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    QStringList shownLabels;
    for (int k = 0; k < shown; ++k) shownLabels << labels[order[k]];
    const int common = sharedLabelStart(shownLabels);
    auto add = [&](const QString& label, double value, const QString& tip, bool kernel) {
        keys << keys.size() + 1;
        values << value;
        ticker->addTick(keys.size(), kernel ? shortLabel(label, common, kMaxTickChars) : label);
        m_tips << tip;
    };
    for (int k = 0; k < shown; ++k) {
        const int i = order[k];
        add(labels[i], ms[i],
            QString("%1\n%2 ms per run (%3 %)")
                .arg(labels[i])
                .arg(ms[i], 0, 'f', 4)
                .arg(total > 0 ? 100 * ms[i] / total : 0, 0, 'f', 1),
            true);
    }
    if (shown < n) {
        double rest = 0;
        for (int k = shown; k < n; ++k) rest += ms[order[k]];
        add(QString("%1 others").arg(n - shown), rest,
            QString("%1 faster kernels together: %2 ms per run (%3 %)")
                .arg(n - shown)
                .arg(rest, 0, 'f', 4)
                .arg(total > 0 ? 100 * rest / total : 0, 0, 'f', 1),
            false);
    }
    double top = 0;
    for (double v : values) top = std::max(top, v);
    m_plot->xAxis->setTicker(ticker);
    m_bars->setData(keys, values, true);
    m_plot->xAxis->setRange(0.3, keys.size() + 0.7);
    m_plot->yAxis->setRange(0, top > 0 ? top * 1.1 : 1.0);
    m_plot->replot();
}

QString PerfPlot::toolTipAt(const QPoint& pos) const {
    const double key = m_plot->xAxis->pixelToCoord(pos.x());
    const int bar = int(std::lround(key)) - 1;
    if (bar < 0 || bar >= m_tips.size() || std::abs(key - (bar + 1)) > 0.4) return {};
    return m_tips[bar];
}

void PerfPlot::clearBars() { setBars({}, {}); }

int PerfPlot::barCount() const { return m_bars->data()->size(); }

}  // namespace tessera::widgets
