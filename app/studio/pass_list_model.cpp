// PassListModel: the pass registry as rows; checks and moves.
#include "app/studio/pass_list_model.h"

#include <algorithm>
#include <map>

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
    // The named passes checked, in this order; every other pass unchecked,
    // right after the checked pass that precedes it in the registry's order
    // (an opt level's pipeline order), so that checking it again runs it
    // where the opt level does: a session's unchecked winograd came back
    // after fuse_ops.
    std::vector<Pass> registry;
    for (const passes::PassInfo& p : passes::all_passes()) {
        const int row = rowOf(QString::fromStdString(p.name));
        if (row >= 0) registry.push_back(m_passes[size_t(row)]);
    }
    std::vector<Pass> checked;
    for (const QString& name : names)
        for (const Pass& p : registry)
            if (p.name == name && std::none_of(checked.begin(), checked.end(),
                                               [&](const Pass& c) { return c.name == name; }))
                checked.push_back(p);
    auto isChecked = [&](const QString& name) {
        return std::any_of(checked.begin(), checked.end(),
                           [&](const Pass& c) { return c.name == name; });
    };
    std::map<QString, std::vector<Pass>> after;  // checked pass (or "" for the top) -> unchecked
    QString anchor;
    for (const Pass& p : registry) {
        if (isChecked(p.name)) {
            anchor = p.name;
            continue;
        }
        Pass off = p;
        off.checked = false;
        after[anchor].push_back(off);
    }
    std::vector<Pass> order = after[QString()];
    for (Pass c : checked) {
        c.checked = true;
        order.push_back(c);
        const std::vector<Pass>& rest = after[c.name];
        order.insert(order.end(), rest.begin(), rest.end());
    }
    beginResetModel();
    m_passes = std::move(order);
    endResetModel();
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
