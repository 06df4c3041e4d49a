// LoopTreeModel: a pre-order walk of the loop IR into rows, and the tree model.
#include "app/studio/loop_tree_model.h"

#include <QColor>
#include <QFont>
#include <QMimeData>

#include "engine/tir/printer.h"

namespace tessera::studio {
namespace {

void walk(const tir::Stmt& s, int parent, QVector<LoopRow>& rows) {
    if (!s.defined()) return;
    auto add = [&](LoopRow row) {
        row.parent = parent;
        rows.append(row);
        const int index = int(rows.size()) - 1;
        if (parent >= 0) rows[parent].children.append(index);
        return index;
    };
    if (const auto* f = s.as<tir::For>()) {
        LoopRow row;
        row.name = QString::fromStdString(f->loop_var->name);
        if (const auto* imm = f->extent.as<tir::IntImm>())
            row.extent = QString::number(imm->value);
        else
            row.extent = QString::fromStdString(tir::print(f->extent));
        row.kind = QString::fromLatin1(tir::for_kind_name(f->kind));
        if (f->kind == tir::ForKind::ThreadBinding && !f->thread_tag.empty())
            row.kind += " " + QString::fromStdString(f->thread_tag);
        walk(f->body, add(row), rows);
    } else if (const auto* r = s.as<tir::BlockRealize>()) {
        const tir::Block* b = r->block_node();
        LoopRow row;
        row.isBlock = true;
        row.name = QString::fromStdString(b->name);
        row.kind = "block";
        const bool root = b->name == "root";
        const int index = root ? parent : add(row);
        if (b->init.defined()) walk(b->init, index, rows);
        walk(b->body, index, rows);
    } else if (const auto* b = s.as<tir::Block>()) {
        walk(b->body, parent, rows);
    } else if (const auto* seq = s.as<tir::SeqStmt>()) {
        for (const tir::Stmt& x : seq->seq) walk(x, parent, rows);
    } else if (const auto* a = s.as<tir::Allocate>()) {
        walk(a->body, parent, rows);
    } else if (const auto* l = s.as<tir::LetStmt>()) {
        walk(l->body, parent, rows);
    } else if (const auto* i = s.as<tir::IfThenElse>()) {
        walk(i->then_case, parent, rows);
        walk(i->else_case, parent, rows);
    }
}

}  // namespace

QVector<LoopRow> loopRows(const tir::PrimFunc& func) {
    QVector<LoopRow> rows;
    if (func.defined()) walk(func->body, -1, rows);
    return rows;
}

LoopTreeModel::LoopTreeModel(QObject* parent) : QAbstractItemModel(parent) {}

void LoopTreeModel::setFunction(const tir::PrimFunc& func) {
    beginResetModel();
    m_legal.clear();
    m_rows = loopRows(func);
    m_roots.clear();
    for (int i = 0; i < m_rows.size(); ++i)
        if (m_rows[i].parent < 0) m_roots.append(i);
    endResetModel();
}

int LoopTreeModel::rowOf(const QModelIndex& index) const {
    return index.isValid() ? int(index.internalId()) : -1;
}

QModelIndex LoopTreeModel::indexOf(const QString& name) const {
    for (int i = 0; i < m_rows.size(); ++i) {
        if (m_rows[i].name != name) continue;
        const QVector<int>& siblings = m_rows[i].parent < 0 ? m_roots : m_rows[m_rows[i].parent].children;
        return createIndex(int(siblings.indexOf(i)), 0, quintptr(i));
    }
    return {};
}

void LoopTreeModel::setLegalTargets(const QSet<QString>& loops) {
    m_legal = loops;
    for (int i = 0; i < m_rows.size(); ++i) {
        const QModelIndex at = indexOf(m_rows[i].name);
        if (at.isValid()) emit dataChanged(at, at.siblingAtColumn(2), {Qt::BackgroundRole});
    }
}

QModelIndex LoopTreeModel::index(int row, int column, const QModelIndex& parent) const {
    if (column < 0 || column >= 3 || row < 0) return {};
    if (parent.isValid() && parent.column() != 0) return {};
    const QVector<int>& list = parent.isValid() ? m_rows[rowOf(parent)].children : m_roots;
    if (row >= list.size()) return {};
    return createIndex(row, column, quintptr(list[row]));
}

QModelIndex LoopTreeModel::parent(const QModelIndex& child) const {
    if (!child.isValid()) return {};
    const int p = m_rows[rowOf(child)].parent;
    if (p < 0) return {};
    const int grand = m_rows[p].parent;
    const QVector<int>& siblings = grand < 0 ? m_roots : m_rows[grand].children;
    return createIndex(int(siblings.indexOf(p)), 0, quintptr(p));
}

int LoopTreeModel::rowCount(const QModelIndex& parent) const {
    if (!parent.isValid()) return int(m_roots.size());
    if (parent.column() != 0) return 0;
    return int(m_rows[rowOf(parent)].children.size());
}

int LoopTreeModel::columnCount(const QModelIndex&) const { return 3; }

QVariant LoopTreeModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid()) return {};
    const LoopRow& r = m_rows[rowOf(index)];
    if (role == Qt::DisplayRole) {
        switch (index.column()) {
            case 0:
                return r.name;
            case 1:
                return r.extent;
            case 2:
                return r.kind;
        }
    }
    if (role == Qt::ToolTipRole)
        return r.isBlock ? "block " + r.name + ": drop it on a loop to compute it there"
                         : "loop " + r.name + " (" + r.extent + ", " + r.kind +
                               "): drag onto another loop to reorder";
    if (role == Qt::BackgroundRole && !r.isBlock && m_legal.contains(r.name))
        return QColor(0xc8, 0xf0, 0xc8);  // a legal compute_at target of the dragged block
    if (role == Qt::FontRole && r.isBlock) {
        QFont f;
        f.setBold(true);
        return f;
    }
    return {};
}

QVariant LoopTreeModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    static const char* names[] = {"Loop", "Extent", "Kind"};
    return section >= 0 && section < 3 ? QString(names[section]) : QVariant();
}

Qt::ItemFlags LoopTreeModel::flags(const QModelIndex& index) const {
    if (!index.isValid()) return Qt::NoItemFlags;
    Qt::ItemFlags f = Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemIsDragEnabled;
    if (!m_rows[rowOf(index)].isBlock) f |= Qt::ItemIsDropEnabled;
    return f;
}

QMimeData* LoopTreeModel::mimeData(const QModelIndexList& indexes) const {
    if (indexes.isEmpty()) return nullptr;
    const LoopRow& r = m_rows[rowOf(indexes.first())];
    emit dragStarted(r.name, r.isBlock);
    auto* mime = new QMimeData;
    mime->setData(kMimeType, ((r.isBlock ? "block:" : "loop:") + r.name).toUtf8());
    return mime;
}

bool LoopTreeModel::canDropMimeData(const QMimeData* data, Qt::DropAction, int, int,
                                    const QModelIndex& parent) const {
    if (!data || !data->hasFormat(kMimeType) || !parent.isValid()) return false;
    const LoopRow& target = m_rows[rowOf(parent)];
    const QString source = QString::fromUtf8(data->data(kMimeType)).section(':', 1);
    return !target.isBlock && target.name != source;
}

bool LoopTreeModel::dropMimeData(const QMimeData* data, Qt::DropAction action, int row, int column,
                                 const QModelIndex& parent) {
    if (!canDropMimeData(data, action, row, column, parent)) return false;
    const QString payload = QString::fromUtf8(data->data(kMimeType));
    emit loopDropped(payload.section(':', 1), payload.startsWith("block:"),
                     m_rows[rowOf(parent)].name);
    return false;  // the editor rebuilds the model from the scheduled function
}

}  // namespace tessera::studio
