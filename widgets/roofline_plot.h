// RooflinePlot: the roofline of this machine (measured peak FLOP/s and the
// bandwidth of each cache level and of memory) on log-log axes, with each
// kernel as a point at its arithmetic intensity (FLOP per byte) and achieved
// GFLOP/s. A point above the highest roof cannot be true: count them with
// kernelsAbove().
#pragma once

#include <QPair>
#include <QStringList>
#include <QVector>
#include <QWidget>

class QCustomPlot;
class QCPItemText;

namespace tessera::widgets {

class RooflinePlot : public QWidget {
    Q_OBJECT
public:
    /// Points past this many are drawn without a label (pass the most
    /// important kernels first: labels of 100 kernels are noise).
    static constexpr int kMaxLabels = 10;
    /// Longer kernel names are cut with an ellipsis on the plot (after the
    /// start all labelled names share, short_labels.h).
    static constexpr int kMaxLabelChars = 28;

    explicit RooflinePlot(QWidget* parent = nullptr);
    /// Sets the roof: compute peak (GFLOP/s) and bandwidth (GB/s).
    void setPeaks(double gflops, double gbps);
    /// Sets the compute peak and the memory roofs (name, GB/s), fastest cache
    /// first and memory last; `method` says how they were measured (tooltip).
    void setCeilings(double gflops, const QVector<QPair<QString, double>>& roofs,
                     const QString& method);
    /// The 8-bit integer dot-product ceiling (G operations/s; 0: none): the
    /// compute roof of the kernels marked integer in setKernels.
    void setIntegerPeak(double gops);
    /// One point per kernel: intensity (operations/byte) and achieved
    /// G operations/s; `integer` marks integer GEMM kernels (their roof is
    /// the integer peak where there is one).
    void setKernels(const QStringList& labels, const QVector<double>& intensity,
                    const QVector<double>& gflops, const QVector<bool>& integer = {});
    int kernelCount() const { return m_count; }
    double peakGflops() const { return m_peak; }
    /// The slowest memory roof (memory's bandwidth), GB/s.
    double bandwidth() const { return m_roofs.isEmpty() ? 0 : m_roofs.last().second; }
    double integerPeak() const { return m_int8Peak; }
    /// The attainable GFLOP/s at an intensity: min(peak, fastest roof *
    /// intensity), the integer peak as the peak for integer kernels.
    double attainable(double intensity, bool integer = false) const;
    /// Labels of the kernels plotted above attainable() * (1 + tolerance).
    QStringList kernelsAbove(double tolerance) const;
    QCustomPlot* plot() const { return m_plot; }
    /// Kernel labels drawn (the others would cover the peaks' labels or a
    /// more important kernel's at the plot's present size).
    int visibleKernelLabels() const;

private:
    void redraw();
    void hideCoveringLabels();

    QCustomPlot* m_plot;
    double m_peak = 0;
    double m_int8Peak = 0;
    QVector<bool> m_integer;
    QVector<QPair<QString, double>> m_roofs;
    QStringList m_labels;
    QVector<double> m_intensity, m_gflops;
    int m_count = 0;
    QVector<QCPItemText*> m_fixedLabels, m_kernelLabels;  // the peaks', the kernels' (in order)
};

}  // namespace tessera::widgets
