// BuildSettingsBar: two combo boxes and a spin box with tooltips.
#include "app/studio/build_settings_bar.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QSpinBox>

#include "app/studio/build_settings.h"

namespace tessera::studio {

BuildSettingsBar::BuildSettingsBar(QWidget* parent)
    : QWidget(parent),
      m_target(new QComboBox(this)),
      m_optLevel(new QComboBox(this)),
      m_threads(new QSpinBox(this)) {
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(4, 0, 4, 0);
    m_target->setObjectName("targetBox");
    m_target->addItem("CPU (LLVM)", "llvm");
    m_target->addItem("CUDA (NVRTC)", "cuda");
    m_target->setToolTip(
        "What the model is built for: the CPU (LLVM, default CPU schedules) or NVIDIA GPUs "
        "(CUDA C compiled to PTX with NVRTC, default GPU schedules). Run, Tune, Export and the "
        "code views all use it; running and tuning for CUDA need a GPU, the code and the "
        "package do not.");
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
    layout->addWidget(new QLabel("Target", this));
    layout->addWidget(m_target);
    layout->addWidget(new QLabel("Opt", this));
    layout->addWidget(m_optLevel);
    layout->addWidget(new QLabel("Threads", this));
    layout->addWidget(m_threads);
    connect(m_optLevel, &QComboBox::currentIndexChanged, this,
            [this](int index) { emit optLevelChanged(m_optLevel->itemData(index).toInt()); });
    connect(m_threads, &QSpinBox::valueChanged, this, &BuildSettingsBar::threadsChanged);
    connect(m_target, &QComboBox::currentIndexChanged, this,
            [this](int index) {
                const QString target = m_target->itemData(index).toString();
                m_threads->setEnabled(target != "cuda");  // GPU kernels: blocks and threads of the grid
                emit targetChanged(target);
            });
}

QString BuildSettingsBar::target() const { return m_target->currentData().toString(); }

void BuildSettingsBar::setTarget(const QString& target) {
    const int index = m_target->findData(target);
    if (index >= 0) m_target->setCurrentIndex(index);
}

int BuildSettingsBar::optLevel() const { return m_optLevel->currentData().toInt(); }

void BuildSettingsBar::setOptLevel(int level) {
    const int index = m_optLevel->findData(level);
    if (index >= 0) m_optLevel->setCurrentIndex(index);
}

int BuildSettingsBar::threads() const { return m_threads->value(); }

void BuildSettingsBar::setThreads(int threads) { m_threads->setValue(threads); }

}  // namespace tessera::studio
