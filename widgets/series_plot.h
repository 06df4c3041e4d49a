// SeriesPlot: GFLOP/s per measurement (trial) as points, with the running best
// as a step line; used by the schedule editor's Measure and, later, tuning.
// Also exportPlot(): PNG, SVG or PDF of any QCustomPlot.
#pragma once

#include <QString>
#include <QWidget>

class QCustomPlot;
class QCPGraph;

namespace tessera::widgets {

class SeriesPlot : public QWidget {
    Q_OBJECT
public:
    explicit SeriesPlot(const QString& yLabel = "GFLOP/s", QWidget* parent = nullptr);
    /// Appends a point at x = pointCount() + 1 and updates the running best.
    void addPoint(double value, const QString& label = {});
    /// The y axis's label (what the points count: GFLOP/s, GOP/s (int8)).
    void setYLabel(const QString& label);
    void clear();
    int pointCount() const;
    double best() const { return m_best; }
    QCustomPlot* plot() const { return m_plot; }

private:
    QCustomPlot* m_plot;
    QCPGraph* m_points;
    QCPGraph* m_bestLine;
    double m_best = 0;
};

/// Writes the plot as .png, .svg or .pdf (by suffix). False on failure.
bool exportPlot(QCustomPlot* plot, const QString& path, int width = 900, int height = 500);

}  // namespace tessera::widgets
