// BuildSettingsBar: a combo box and a spin box with tooltips.
#include "app/studio/build_settings_bar.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QSpinBox>

#include "app/studio/build_settings.h"

namespace tessera::studio {

BuildSettingsBar::BuildSettingsBar(QWidget* parent)
    : QWidget(parent), m_optLevel(new QComboBox(this)), m_threads(new QSpinBox(this)) {
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(4, 0, 4, 0);
    for (int level = 0; level <= 3; ++level) m_optLevel->addItem(QString("-O%1").arg(level), level);
    m_optLevel->setCurrentIndex(2);
    m_optLevel->setToolTip(
        "Optimization level: the graph passes it selects (shown in the Pass pipeline panel) "
        "and LLVM's level. Run, Tune, Export and the code views all use it.");
    m_threads->setRange(1, std::max(64, defaultThreads()));
    m_threads->setValue(defaultThreads());
    m_threads->setToolTip(QString("Threads the kernels are scheduled for, run and tuned on "
                                  "(this machine: %1)")
                              .arg(defaultThreads()));
    layout->addWidget(new QLabel("Opt", this));
    layout->addWidget(m_optLevel);
    layout->addWidget(new QLabel("Threads", this));
    layout->addWidget(m_threads);
    connect(m_optLevel, &QComboBox::currentIndexChanged, this,
            [this](int index) { emit optLevelChanged(m_optLevel->itemData(index).toInt()); });
    connect(m_threads, &QSpinBox::valueChanged, this, &BuildSettingsBar::threadsChanged);
}

int BuildSettingsBar::optLevel() const { return m_optLevel->currentData().toInt(); }

void BuildSettingsBar::setOptLevel(int level) {
    const int index = m_optLevel->findData(level);
    if (index >= 0) m_optLevel->setCurrentIndex(index);
}

int BuildSettingsBar::threads() const { return m_threads->value(); }

void BuildSettingsBar::setThreads(int threads) { m_threads->setValue(threads); }

}  // namespace tessera::studio
