// KnobPanel: a table of knob | value | pin and the "Tune the rest" button.
#include "app/studio/knob_panel.h"

#include <QComboBox>
#include <QEvent>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QTableWidget>
#include <QVBoxLayout>

namespace tessera::studio {

KnobPanel::KnobPanel(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(new QLabel("Knobs of the kernel's rule (pin what you decided)", this));
    m_table = new QTableWidget(0, 3, this);
    m_table->setHorizontalHeaderLabels({"Pin", "Knob", "Value"});
    m_table->horizontalHeader()->setSectionResizeMode(1, QHeaderView::Stretch);
    m_table->verticalHeader()->hide();
    layout->addWidget(m_table);
    auto* row = new QHBoxLayout;
    m_trials = new QSpinBox(this);
    m_trials->setObjectName("tuneTrials");
    // In the scrolling Schedule dock a wheel turn over the box scrolled its
    // value instead of the dock: it takes the wheel only when focused.
    m_trials->setFocusPolicy(Qt::StrongFocus);
    m_trials->installEventFilter(this);
    m_trials->setRange(1, 100000);
    m_trials->setValue(16);
    m_trials->setSuffix(" trials");
    m_tune = new QPushButton("Tune the rest", this);
    m_tune->setToolTip(
        "Tune this kernel: the pinned knobs keep their values, the tuner searches "
        "the others; the best becomes the kernel's schedule (tuning records)");
    row->addWidget(m_trials);
    row->addWidget(m_tune);
    layout->addLayout(row);
    connect(m_tune, &QPushButton::clicked, this,
            [this]() { emit tuneRestRequested(m_trials->value()); });
    setKnobs({});
}

void KnobPanel::setKnobs(const std::vector<topi::CpuKnob>& knobs) {
    m_knobs = knobs;
    m_table->setRowCount(0);
    m_table->setRowCount(int(knobs.size()));
    for (int i = 0; i < int(knobs.size()); ++i) {
        auto* pinItem = new QTableWidgetItem;
        pinItem->setFlags(Qt::ItemIsUserCheckable | Qt::ItemIsEnabled);
        pinItem->setCheckState(Qt::Unchecked);
        m_table->setItem(i, 0, pinItem);
        auto* name = new QTableWidgetItem(QString::fromStdString(knobs[size_t(i)].name));
        name->setFlags(Qt::ItemIsEnabled);
        m_table->setItem(i, 1, name);
        auto* values = new QComboBox(m_table);
        for (int64_t c : knobs[size_t(i)].choices)
            values->addItem(QString::number(c), qlonglong(c));
        values->setToolTip("the first value is the default rule's choice");
        // Choosing a value pins it.
        connect(values, &QComboBox::activated, this,
                [pinItem](int) { pinItem->setCheckState(Qt::Checked); });
        m_table->setCellWidget(i, 2, values);
    }
    m_tune->setEnabled(!knobs.empty() && !m_tuning);
    m_table->setToolTip(knobs.empty() ? "this kernel's rule has no knobs to tune" : QString());
}

void KnobPanel::setTuning(bool tuning) {
    m_tuning = tuning;
    m_tune->setText(tuning ? "Tuning..." : "Tune the rest");
    m_tune->setEnabled(!tuning && !m_knobs.empty());
}

bool KnobPanel::eventFilter(QObject* watched, QEvent* event) {
    if (watched == m_trials && event->type() == QEvent::Wheel && !m_trials->hasFocus()) {
        event->ignore();  // to the scroll area
        return true;
    }
    return QWidget::eventFilter(watched, event);
}

autotune::KnobPins KnobPanel::pins() const {
    autotune::KnobPins pins;
    for (int i = 0; i < m_table->rowCount(); ++i) {
        if (m_table->item(i, 0)->checkState() != Qt::Checked) continue;
        const auto* values = static_cast<const QComboBox*>(m_table->cellWidget(i, 2));
        pins.knobs[m_knobs[size_t(i)].name] = values->currentData().toLongLong();
    }
    return pins;
}

int KnobPanel::rowOf(const QString& knob) const {
    for (int i = 0; i < m_table->rowCount(); ++i)
        if (m_table->item(i, 1)->text() == knob) return i;
    return -1;
}

bool KnobPanel::pin(const QString& knob, int64_t value) {
    if (!show(knob, value)) return false;
    m_table->item(rowOf(knob), 0)->setCheckState(Qt::Checked);
    return true;
}

bool KnobPanel::show(const QString& knob, int64_t value) {
    const int row = rowOf(knob);
    if (row < 0) return false;
    auto* values = static_cast<QComboBox*>(m_table->cellWidget(row, 2));
    const int index = values->findData(qlonglong(value));
    if (index < 0) return false;
    values->setCurrentIndex(index);
    return true;
}

int64_t KnobPanel::shown(const QString& knob) const {
    const int row = rowOf(knob);
    if (row < 0) return -1;
    return static_cast<const QComboBox*>(m_table->cellWidget(row, 2))->currentData().toLongLong();
}

}  // namespace tessera::studio
