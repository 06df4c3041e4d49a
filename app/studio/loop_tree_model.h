// LoopTreeModel: the loop nest of a PrimFunc as a tree (loops and blocks with
// name, extent and kind), built from an immutable snapshot. Loops can be
// dragged onto loops (reorder) and blocks onto loops (compute_at); the model
// only reports the drop, the schedule editor turns it into a step.
#pragma once

#include <QAbstractItemModel>
#include <QSet>
#include <QString>
#include <QVector>

#include "engine/tir/stmt.h"

namespace tessera::studio {

/// One row: a loop or a block.
struct LoopRow {
    bool isBlock = false;
    QString name;
    QString extent;  // loops only: the extent (a number or an expression)
    QString kind;    // "serial", "parallel", ..., or "block"
    int parent = -1;
    QVector<int> children;
};

/// Rows of `func` in pre-order; roots have parent -1.
QVector<LoopRow> loopRows(const tir::PrimFunc& func);

class LoopTreeModel : public QAbstractItemModel {
    Q_OBJECT
public:
    static constexpr const char* kMimeType = "application/x-tessera-loop";
    explicit LoopTreeModel(QObject* parent = nullptr);

    void setFunction(const tir::PrimFunc& func);
    const QVector<LoopRow>& rows() const { return m_rows; }
    /// The row index behind a model index (-1 for the root).
    int rowOf(const QModelIndex& index) const;
    /// The index of the loop or block named `name` (invalid when absent).
    QModelIndex indexOf(const QString& name) const;
    /// Loops shown as legal drop targets (highlighted) while a block is dragged.
    void setLegalTargets(const QSet<QString>& loops);
    const QSet<QString>& legalTargets() const { return m_legal; }

    QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
    QModelIndex parent(const QModelIndex& child) const override;
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;
    Qt::ItemFlags flags(const QModelIndex& index) const override;

    Qt::DropActions supportedDropActions() const override { return Qt::MoveAction; }
    QStringList mimeTypes() const override { return {kMimeType}; }
    QMimeData* mimeData(const QModelIndexList& indexes) const override;
    bool canDropMimeData(const QMimeData* data, Qt::DropAction action, int row, int column,
                         const QModelIndex& parent) const override;
    bool dropMimeData(const QMimeData* data, Qt::DropAction action, int row, int column,
                      const QModelIndex& parent) override;

signals:
    /// A loop was dropped on a loop, or a block on a loop.
    void loopDropped(const QString& source, bool sourceIsBlock, const QString& target);
    /// A drag of a loop or block started (mimeData was asked for).
    void dragStarted(const QString& source, bool sourceIsBlock) const;

private:
    QVector<int> m_roots;
    QVector<LoopRow> m_rows;
    QSet<QString> m_legal;
};

}  // namespace tessera::studio
