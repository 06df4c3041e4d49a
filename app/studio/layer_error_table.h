// The Performance dock's "Int8 error" tab: a quantized model's fp32-vs-int8
// error per layer after a Run (RunResult::layerErrors), largest relative
// error first; double-clicking a row asks for its node.
#pragma once

#include <QTableWidget>

#include "app/studio/run_job.h"

namespace tessera::studio {

class LayerErrorTable : public QTableWidget {
    Q_OBJECT
public:
    explicit LayerErrorTable(QWidget* parent = nullptr);
    /// Shows `rows` (or `note` in one row when there are none).
    void setErrors(const QVector<LayerErrorRow>& rows, const QString& note);

signals:
    void nodeRequested(const QString& node);
};

}  // namespace tessera::studio
