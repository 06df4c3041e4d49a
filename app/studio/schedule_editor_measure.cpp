// ScheduleEditor's Measure: times the scheduled kernel in a job, as the
// profiler times it inside the model when the controller gave a measurer, and
// adds the GFLOP/s to the editor's plot (GB/s of its buffers for a kernel
// without arithmetic: a gather's GFLOP/s is 0, its points sat on the axis).
#include <QLabel>
#include <algorithm>

#include "app/studio/schedule_editor.h"
#include "app/studio/throughput_text.h"
#include "engine/tir/op.h"
#include "widgets/series_plot.h"

namespace tessera::studio {

namespace {

// Bytes of the kernel's parameters (what it reads and writes at least once).
double parameter_bytes(const tir::PrimFunc& f) {
    double bytes = 0;
    for (const tir::Buffer& b : f->params) {
        double n = b->dtype.bytes() * b->dtype.lanes;
        for (const tir::Expr& d : b->shape) {
            const int64_t* e = tir::as_const_int(d);
            if (!e) return 0;
            n *= double(*e);
        }
        bytes += n;
    }
    return bytes;
}

}  // namespace

void ScheduleEditor::measure() {
    if (!m_scheduled.defined()) return;
    const tir::PrimFunc func = m_scheduled;
    const schedule::Trace applied = m_applied;
    const KernelMeasurer measurer = m_measurer;
    const double flops = m_flops;
    const QString label = QString("%1 steps").arg(m_steps.size());
    m_jobs->start(
        "Measuring kernel",
        [func, applied, measurer, flops](const JobContext& context) {
            // About 200 ms of runs, as the tuner and the profiler time kernels.
            runtime::TimingOptions timing;
            timing.min_seconds = 0.2;
            timing.max_repeat = 200;
            auto each = [&context](int done) {
                context.reportProgress(std::min(1.0, 0.2 + 0.8 * done / 200.0));
                return !context.isCancelled();
            };
            context.reportProgress(0.05);
            driver::KernelMeasurement m =
                measurer ? measurer(applied, each)
                         : driver::measure_kernel(func, flops, timing, {}, each);
            context.throwIfCancelled();
            return m;
        },
        [this, label, bytes = parameter_bytes(func)](const driver::KernelMeasurement& m) {
            if (m.gflops <= 0 && bytes > 0 && m.median_ms > 0) {
                m_plot->setYLabel("GB/s (its buffers)");
                m_plot->addPoint(bytes / (m.median_ms * 1e6), label);
            } else {
                m_plot->setYLabel(m.integer ? "GOP/s (int8)" : "GFLOP/s");
                m_plot->addPoint(m.gflops, label);
            }
            m_errorLabel->setStyleSheet(QString());  // a result, not an error
            const QString rate = throughputText(m.gflops, m.work_gflops, m.integer);
            m_errorLabel->setText(QString("Measured %1 ms, %2 (median of %3)")
                                      .arg(m.median_ms, 0, 'f', 4)
                                      .arg(rate)
                                      .arg(m.repeat));
            emit measured(m.gflops, m.median_ms, rate);
        });
}

}  // namespace tessera::studio
