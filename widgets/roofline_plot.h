// RooflinePlot: the roofline of this machine (measured peak FLOP/s and memory
// bandwidth) on log-log axes, with each kernel as a point at its arithmetic
// intensity (FLOP per byte) and achieved GFLOP/s.
#pragma once

#include <QStringList>
#include <QVector>
#include <QWidget>

class QCustomPlot;

namespace tessera::widgets {

class RooflinePlot : public QWidget {
    Q_OBJECT
public:
    explicit RooflinePlot(QWidget* parent = nullptr);
    /// Sets the roof: compute peak (GFLOP/s) and bandwidth (GB/s).
    void setPeaks(double gflops, double gbps);
    /// One point per kernel: intensity (FLOP/byte) and achieved GFLOP/s.
    void setKernels(const QStringList& labels, const QVector<double>& intensity,
                    const QVector<double>& gflops);
    int kernelCount() const { return m_count; }
    double peakGflops() const { return m_peak; }
    double bandwidth() const { return m_bandwidth; }
    /// The attainable GFLOP/s at an intensity: min(peak, bandwidth * intensity).
    double attainable(double intensity) const;
    QCustomPlot* plot() const { return m_plot; }

private:
    void redraw();

    QCustomPlot* m_plot;
    double m_peak = 0, m_bandwidth = 0;
    QStringList m_labels;
    QVector<double> m_intensity, m_gflops;
    int m_count = 0;
};

}  // namespace tessera::widgets
