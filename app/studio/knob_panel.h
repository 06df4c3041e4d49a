// KnobPanel: the decisions of the shown kernel's default rule (its knobs,
// topi::cpu_schedule_knobs), each with its legal values and a Pin box, and
// "Tune the rest": the tuner searches the unpinned knobs only (hybrid
// manual + automatic scheduling, autotune/pin.h); the best result becomes
// the kernel's schedule through the tuning records.
#pragma once

#include <QWidget>
#include <vector>

#include "engine/autotune/pin.h"
#include "engine/topi/cpu/schedule_cpu.h"

class QPushButton;
class QSpinBox;
class QTableWidget;

namespace tessera::studio {

class KnobPanel : public QWidget {
    Q_OBJECT
public:
    explicit KnobPanel(QWidget* parent = nullptr);

    /// Shows `knobs` (none: the kernel's rule has no knobs; the panel says so).
    void setKnobs(const std::vector<topi::CpuKnob>& knobs);
    /// The knobs whose Pin box is checked, at their chosen values.
    autotune::KnobPins pins() const;
    /// Pins `knob` at `value` (one of its choices); false when it is not.
    bool pin(const QString& knob, int64_t value);
    /// Shows `value` for `knob` without pinning it (the values of the tuned
    /// record that schedules the kernel); false when it is not a choice.
    bool show(const QString& knob, int64_t value);
    /// The value shown for `knob` (-1 when there is no such knob).
    int64_t shown(const QString& knob) const;
    QTableWidget* table() const { return m_table; }
    QPushButton* tuneButton() const { return m_tune; }
    /// While a tuning job runs, the button says so and takes no second press.
    void setTuning(bool tuning);

signals:
    void tuneRestRequested(int trials);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    /// The table row of `knob`, or -1.
    int rowOf(const QString& knob) const;

private:
    std::vector<topi::CpuKnob> m_knobs;
    QTableWidget* m_table;
    QSpinBox* m_trials;
    QPushButton* m_tune;
    bool m_tuning = false;
};

}  // namespace tessera::studio
