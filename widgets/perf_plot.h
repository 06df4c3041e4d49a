// PerfPlot: a QCustomPlot bar chart of time per kernel (ms): the slowest
// first, at most kMaxBars bars (the rest together as one "others" bar), each
// with a tooltip naming the kernel, its time and its share.
#pragma once

#include <QStringList>
#include <QVector>
#include <QWidget>

class QCustomPlot;
class QCPBars;

namespace tessera::widgets {

class PerfPlot : public QWidget {
    Q_OBJECT
public:
    explicit PerfPlot(QWidget* parent = nullptr);

    static constexpr int kMaxBars = 24;
    /// A tick label's characters past the start all shown bars' names share
    /// (short_labels.h).
    static constexpr int kMaxTickChars = 18;

    /// Shows the entries as bars, slowest first: `labels[i]` under a bar of
    /// height `ms[i]`; past kMaxBars, the fastest share one "N others" bar.
    void setBars(const QStringList& labels, const QVector<double>& ms);
    /// The tooltip of the bar under widget point `pos` of the plot (empty: none).
    QString toolTipAt(const QPoint& pos) const;
    void clearBars();
    /// Number of bars shown.
    int barCount() const;
    /// The underlying plot (for export or tests).
    QCustomPlot* plot() const { return m_plot; }

private:
    QCustomPlot* m_plot;
    QCPBars* m_bars;
    QStringList m_tips;  // per bar shown
};

}  // namespace tessera::widgets
