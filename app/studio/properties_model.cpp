// PropertiesModel: a flat store of tree items; an index's internal id is the item.
#include "app/studio/properties_model.h"

namespace tessera::studio {

PropertiesModel::PropertiesModel(QObject* parent) : QAbstractItemModel(parent) {}

void PropertiesModel::add(const QVector<PropertyRow>& rows, int parent, bool attributes) {
    for (const PropertyRow& row : rows) {
        const int id = int(m_items.size());
        Item item;
        item.key = row.key;
        item.value = row.value;
        item.parent = parent;
        // Attribute values and the node's name are editable (double-click the value).
        item.kind = attributes ? "attr" : (parent < 0 && row.key == "name" ? "name" : "");
        std::vector<int>& siblings = parent < 0 ? m_top : m_items[size_t(parent)].children;
        item.row = int(siblings.size());
        siblings.push_back(id);
        m_items.push_back(item);
        add(row.children, id, parent < 0 && row.key == "attributes");
    }
}

void PropertiesModel::setRows(const QVector<PropertyRow>& rows) {
    beginResetModel();
    m_items.clear();
    m_top.clear();
    add(rows, -1, false);
    endResetModel();
}

QModelIndex PropertiesModel::find(const QString& key) const {
    for (size_t i = 0; i < m_items.size(); ++i)  // stored depth first
        if (m_items[i].key == key) return createIndex(m_items[i].row, 1, quintptr(i));
    return {};
}

const std::vector<int>& PropertiesModel::childrenOf(const QModelIndex& parent) const {
    return parent.isValid() ? m_items[size_t(parent.internalId())].children : m_top;
}

QModelIndex PropertiesModel::index(int row, int column, const QModelIndex& parent) const {
    if (column < 0 || column > 1 || (parent.isValid() && parent.column() != 0)) return {};
    const std::vector<int>& rows = childrenOf(parent);
    if (row < 0 || row >= int(rows.size())) return {};
    return createIndex(row, column, quintptr(rows[size_t(row)]));
}

QModelIndex PropertiesModel::parent(const QModelIndex& child) const {
    if (!child.isValid()) return {};
    const int p = m_items[size_t(child.internalId())].parent;
    return p < 0 ? QModelIndex() : createIndex(m_items[size_t(p)].row, 0, quintptr(p));
}

int PropertiesModel::rowCount(const QModelIndex& parent) const {
    if (parent.isValid() && parent.column() != 0) return 0;
    return int(childrenOf(parent).size());
}

int PropertiesModel::columnCount(const QModelIndex&) const { return 2; }

QVariant PropertiesModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid()) return {};
    const Item& item = m_items[size_t(index.internalId())];
    const QString& text = index.column() == 0 ? item.key : item.value;
    if (role == Qt::DisplayRole || role == Qt::EditRole) return text;
    if (role == Qt::ToolTipRole)
        return index.column() == 1 && !item.kind.isEmpty() ? "Double-click to edit" : text;
    return {};
}

QVariant PropertiesModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    return section == 0 ? QString("Property") : QString("Value");
}

Qt::ItemFlags PropertiesModel::flags(const QModelIndex& index) const {
    if (!index.isValid()) return Qt::NoItemFlags;
    Qt::ItemFlags f = Qt::ItemIsEnabled | Qt::ItemIsSelectable;
    if (index.column() == 1 && !m_items[size_t(index.internalId())].kind.isEmpty())
        f |= Qt::ItemIsEditable;
    return f;
}

bool PropertiesModel::setData(const QModelIndex& index, const QVariant& value, int role) {
    if (!index.isValid() || role != Qt::EditRole || !(flags(index) & Qt::ItemIsEditable)) return false;
    Item& item = m_items[size_t(index.internalId())];
    const QString text = value.toString();
    if (text == item.value) return false;
    item.value = text;
    emit dataChanged(index, index, {Qt::DisplayRole, Qt::EditRole});
    emit edited(item.kind, item.key, text);  // may reset the model (the graph changed)
    return true;
}

}  // namespace tessera::studio
