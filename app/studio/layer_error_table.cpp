// The per-layer quantization error table (see layer_error_table.h).
#include "app/studio/layer_error_table.h"

#include <QHeaderView>
#include <algorithm>

namespace tessera::studio {

LayerErrorTable::LayerErrorTable(QWidget* parent) : QTableWidget(0, 5, parent) {
    setHorizontalHeaderLabels({"Tensor", "Node", "Op", "max |int8 \u2212 fp32|", "rel. RMS error"});
    horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    horizontalHeader()->setStretchLastSection(true);
    setEditTriggers(QAbstractItemView::NoEditTriggers);
    setSelectionBehavior(QAbstractItemView::SelectRows);
    verticalHeader()->setVisible(false);
    setToolTip(
        "A quantized model's error per layer: the Run's int8 kernels against the model's "
        "float reading (activation Q/DQ pairs as the identity), on the same inputs");
    connect(this, &QTableWidget::cellDoubleClicked, this, [this](int row, int) {
        if (const QTableWidgetItem* node = item(row, 1)) emit nodeRequested(node->text());
    });
}

void LayerErrorTable::setErrors(const QVector<LayerErrorRow>& rows, const QString& note) {
    setSortingEnabled(false);
    setRowCount(0);
    clearSpans();
    if (rows.isEmpty()) {
        if (note.isEmpty()) return;
        // One line across the table, wrapped to its width (and whole in the tooltip).
        setRowCount(1);
        auto* item = new QTableWidgetItem(note);
        item->setToolTip(note);
        setItem(0, 0, item);
        setSpan(0, 0, 1, columnCount());
        setWordWrap(true);
        resizeRowToContents(0);
        return;
    }
    QVector<LayerErrorRow> sorted = rows;
    std::stable_sort(
        sorted.begin(), sorted.end(),
        [](const LayerErrorRow& a, const LayerErrorRow& b) { return a.relRms > b.relRms; });
    setRowCount(int(sorted.size()));
    for (int r = 0; r < int(sorted.size()); ++r) {
        const LayerErrorRow& e = sorted[r];
        setItem(r, 0, new QTableWidgetItem(e.tensor));
        setItem(r, 1, new QTableWidgetItem(e.node));
        setItem(r, 2, new QTableWidgetItem(e.op));
        auto* abs = new QTableWidgetItem;
        abs->setData(Qt::DisplayRole, e.maxAbs);
        setItem(r, 3, abs);
        auto* rel = new QTableWidgetItem(QString::number(100.0 * e.relRms, 'g', 3) + " %");
        rel->setData(Qt::UserRole, e.relRms);
        setItem(r, 4, rel);
    }
}

}  // namespace tessera::studio
