// PassListModel: the pass registry as rows; checks and moves.
#include "app/studio/pass_list_model.h"

#include "engine/graph/passes/pass_manager.h"

namespace tessera::studio {

PassListModel::PassListModel(QObject* parent) : QAbstractListModel(parent) {
    for (const passes::PassInfo& p : passes::all_passes())
        m_passes.push_back({QString::fromStdString(p.name), QString::fromStdString(p.description),
                            p.opt_level <= 2});
}

QStringList PassListModel::pipeline() const {
    QStringList names;
    for (const Pass& p : m_passes)
        if (p.checked) names << p.name;
    return names;
}

int PassListModel::rowOf(const QString& name) const {
    for (size_t i = 0; i < m_passes.size(); ++i)
        if (m_passes[i].name == name) return int(i);
    return -1;
}

void PassListModel::setPipeline(const QStringList& names) {
    for (Pass& p : m_passes) p.checked = false;
    if (!m_passes.empty())
        emit dataChanged(index(0), index(int(m_passes.size()) - 1), {Qt::CheckStateRole});
    int top = 0;  // the named passes go to rows 0, 1, ... in this order
    for (const QString& name : names) {
        const int row = rowOf(name);
        if (row < top) continue;  // unknown, or named twice
        move(row, top);
        m_passes[size_t(top)].checked = true;
        emit dataChanged(index(top), index(top), {Qt::CheckStateRole});
        ++top;
    }
}

bool PassListModel::move(int from, int to) {
    if (from == to) return true;
    // beginMoveRows counts the destination before the move: below `from` it is one further.
    if (!beginMoveRows({}, from, from, {}, to > from ? to + 1 : to)) return false;
    const Pass pass = m_passes[size_t(from)];
    m_passes.erase(m_passes.begin() + from);
    m_passes.insert(m_passes.begin() + to, pass);
    endMoveRows();
    return true;
}

int PassListModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(m_passes.size());
}

QVariant PassListModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Pass& p = m_passes[size_t(index.row())];
    switch (role) {
        case Qt::DisplayRole:
            return p.name;
        case Qt::ToolTipRole:
            return p.description;
        case Qt::CheckStateRole:
            return p.checked ? Qt::Checked : Qt::Unchecked;
        default:
            return {};
    }
}

bool PassListModel::setData(const QModelIndex& index, const QVariant& value, int role) {
    if (role != Qt::CheckStateRole ||
        !checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return false;
    const bool checked = value.value<Qt::CheckState>() == Qt::Checked;
    Pass& p = m_passes[size_t(index.row())];
    if (p.checked == checked) return true;
    p.checked = checked;
    emit dataChanged(index, index, {Qt::CheckStateRole});
    emit edited();
    return true;
}

Qt::ItemFlags PassListModel::flags(const QModelIndex& index) const {
    if (!index.isValid()) return Qt::ItemIsDropEnabled;  // drops go between rows
    return Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemIsUserCheckable |
           Qt::ItemIsDragEnabled;
}

bool PassListModel::moveRows(const QModelIndex& sourceParent, int sourceRow, int count,
                             const QModelIndex& destinationParent, int destinationChild) {
    const int n = int(m_passes.size());
    if (sourceParent.isValid() || destinationParent.isValid() || count != 1 || sourceRow < 0 ||
        sourceRow >= n || destinationChild < 0 || destinationChild > n)
        return false;
    // `destinationChild` is the row it goes before, counted before the move.
    const int to = destinationChild > sourceRow ? destinationChild - 1 : destinationChild;
    if (to == sourceRow || !move(sourceRow, to)) return false;
    emit edited();
    return true;
}

}  // namespace tessera::studio
