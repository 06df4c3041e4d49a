// PerfPlot: a QCustomPlot bar chart of time per kernel (ms).
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

    /// Shows one bar per entry: `labels[i]` under a bar of height `ms[i]`.
    void setBars(const QStringList& labels, const QVector<double>& ms);
    void clearBars();
    /// Number of bars shown.
    int barCount() const;
    /// The underlying plot (for export or tests).
    QCustomPlot* plot() const { return m_plot; }

private:
    QCustomPlot* m_plot;
    QCPBars* m_bars;
};

}  // namespace tessera::widgets
