// BuildSettingsBar: the toolbar's target (CPU / CUDA), opt level (-O0..-O3)
// and thread count, the parts of BuildSettings that are not the pass list or
// the tuning database.
#pragma once

#include <QWidget>

class QComboBox;
class QSpinBox;

namespace tessera::studio {

class BuildSettingsBar : public QWidget {
    Q_OBJECT
public:
    explicit BuildSettingsBar(QWidget* parent = nullptr);

    /// "llvm" or "cuda".
    QString target() const;
    void setTarget(const QString& target);
    QComboBox* targetBox() const { return m_target; }
    int optLevel() const;
    void setOptLevel(int level);
    int threads() const;
    void setThreads(int threads);
    QComboBox* optLevelBox() const { return m_optLevel; }
    QSpinBox* threadsBox() const { return m_threads; }

signals:
    void targetChanged(const QString& target);
    /// The user (or setOptLevel) chose another opt level.
    void optLevelChanged(int level);
    void threadsChanged(int threads);

private:
    QComboBox* m_target;
    QComboBox* m_optLevel;
    QSpinBox* m_threads;
};

}  // namespace tessera::studio
