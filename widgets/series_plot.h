// SeriesPlot: GFLOP/s per measurement (trial) as points, with the running best
// (per series: a tuning task) as a step line; used by the schedule editor's
// Measure and the tuning plot.
// Also exportPlot(): PNG, SVG or PDF of any QCustomPlot.
#pragma once

#include <QHash>
#include <QString>
#include <QStringList>
#include <QVector>
#include <QWidget>

class QCustomPlot;
class QCPGraph;

namespace tessera::widgets {

class SeriesPlot : public QWidget {
    Q_OBJECT
public:
    explicit SeriesPlot(const QString& yLabel = "GFLOP/s", QWidget* parent = nullptr);
    /// Appends a point at x = pointCount() + 1 and updates the running best.
    /// `series` (a tuning task: one kernel) keeps a best of its own: the
    /// best-so-far line breaks where the series changes and goes on from
    /// that series' best, so it only joins points of one series (a
    /// whole-model tune measures one kernel after another).
    void addPoint(double value, const QString& label = {}, const QString& series = {});
    /// The y axis's label (what the points count: GFLOP/s, GOP/s (int8)).
    void setYLabel(const QString& label);
    void clear();
    int pointCount() const;
    /// The best of all points.
    double best() const { return m_best; }
    /// The best-so-far line at point `index` (from 0): the best of its series up to it.
    double bestAt(int index) const { return m_bestAt.value(index); }
    /// The series of point `index`.
    QString seriesAt(int index) const { return m_series.value(index); }
    QCustomPlot* plot() const { return m_plot; }

private:
    QCustomPlot* m_plot;
    QCPGraph* m_points;
    QCPGraph* m_bestLine;
    double m_best = 0;
    QVector<double> m_bestAt;         // per point: its series' best so far
    QStringList m_series;             // per point
    QHash<QString, double> m_bestOf;  // per series
};

/// Writes the plot as .png, .svg or .pdf (by suffix). False on failure.
bool exportPlot(QCustomPlot* plot, const QString& path, int width = 900, int height = 500);

}  // namespace tessera::widgets
