// PassListModel: the registered graph passes as a checkable, reorderable list
// (one column: the pass name; its one-line description as the tool tip). The
// checked passes in row order are the pipeline; a view reorders rows by
// dragging (moveRows), and checking or moving one says so (edited).
#pragma once

#include <QAbstractListModel>
#include <QStringList>
#include <vector>

namespace tessera::studio {

class PassListModel : public QAbstractListModel {
    Q_OBJECT
public:
    /// Every registered pass, in registry order; those of -O2 checked.
    explicit PassListModel(QObject* parent = nullptr);

    /// Checked pass names in row order.
    QStringList pipeline() const;
    /// Checks exactly these passes and moves them to the top, in this order
    /// (unknown names are skipped). Not reported as an edit.
    void setPipeline(const QStringList& names);
    /// The row of pass `name`, or -1.
    int rowOf(const QString& name) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    bool setData(const QModelIndex& index, const QVariant& value, int role = Qt::EditRole) override;
    Qt::ItemFlags flags(const QModelIndex& index) const override;
    Qt::DropActions supportedDropActions() const override { return Qt::MoveAction; }
    /// Moves one row (what a list view's internal drag does).
    bool moveRows(const QModelIndex& sourceParent, int sourceRow, int count,
                  const QModelIndex& destinationParent, int destinationChild) override;

signals:
    /// The user checked, unchecked or moved a pass.
    void edited();

private:
    struct Pass {
        QString name;
        QString description;
        bool checked = false;
    };
    bool move(int from, int to);

    std::vector<Pass> m_passes;
};

}  // namespace tessera::studio
