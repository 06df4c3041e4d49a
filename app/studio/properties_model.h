// PropertiesModel: the Properties dock's rows (a node's op, name, attributes,
// input and output types, weight statistics) as a two-column tree model
// (Property, Value). The node's name and its attribute values are editable;
// an edit is reported (edited) for the EditController to apply, or refuse.
#pragma once

#include <QAbstractItemModel>
#include <QVector>
#include <vector>

#include "app/studio/model_document.h"

namespace tessera::studio {

class PropertiesModel : public QAbstractItemModel {
    Q_OBJECT
public:
    explicit PropertiesModel(QObject* parent = nullptr);

    /// Shows `rows` (ModelDocument::properties of a node); empty clears.
    void setRows(const QVector<PropertyRow>& rows);
    /// The Value cell of the first row named `key` (depth first); invalid if none.
    QModelIndex find(const QString& key) const;

    QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
    QModelIndex parent(const QModelIndex& child) const override;
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;
    Qt::ItemFlags flags(const QModelIndex& index) const override;
    bool setData(const QModelIndex& index, const QVariant& value, int role = Qt::EditRole) override;

signals:
    /// The user typed `text` as the value of `key`; `kind` is "name" (the
    /// node's name) or "attr" (an attribute).
    void edited(const QString& kind, const QString& key, const QString& text);

private:
    struct Item {
        QString key, value;
        QString kind;        // "name", "attr" or "" (not editable)
        int parent = -1;     // -1: a top-level row
        int row = 0;         // its row under its parent
        std::vector<int> children;
    };
    void add(const QVector<PropertyRow>& rows, int parent, bool attributes);
    const std::vector<int>& childrenOf(const QModelIndex& parent) const;

    std::vector<Item> m_items;
    std::vector<int> m_top;  // top-level rows
};

}  // namespace tessera::studio
