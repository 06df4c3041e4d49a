// ScheduleTraceModel: the trace's rows, their marks, toggles and moves.
#include "app/studio/schedule_trace_model.h"

#include <QColor>
#include <QStringList>

namespace tessera::studio {
namespace {

QString joinNames(const std::vector<std::string>& names) {
    QStringList parts;
    for (const std::string& n : names) parts << QString::fromStdString(n);
    return parts.join(", ");
}

}  // namespace

ScheduleTraceModel::ScheduleTraceModel(QObject* parent) : QAbstractListModel(parent) {}

void ScheduleTraceModel::setTrace(const std::vector<schedule::Step>& steps, int errorStep,
                                  const QString& error, const QStringList& notes) {
    if (steps.size() != m_steps.size()) {
        beginResetModel();
        m_steps = steps;
        m_errorStep = errorStep;
        m_error = error;
        m_notes = notes;
        endResetModel();
        return;
    }
    // As many steps: the rows stay (and the view's current row), their text changes.
    m_steps = steps;
    m_errorStep = errorStep;
    m_error = error;
    m_notes = notes;
    if (!m_steps.empty()) emit dataChanged(index(0), index(int(m_steps.size()) - 1));
}

QString ScheduleTraceModel::describeStep(const schedule::Step& step) {
    QString text = QString::fromStdString(step.op);
    if (!step.block.empty()) text += " " + QString::fromStdString(step.block);
    if (!step.loops.empty()) text += " " + joinNames(step.loops);
    if (!step.ints.empty()) {
        QStringList ints;
        for (int64_t v : step.ints) ints << QString::number(v);
        text += " [" + ints.join(", ") + "]";
    }
    if (!step.key.empty()) text += " " + QString::fromStdString(step.key);
    if (!step.value.empty()) text += "=" + QString::fromStdString(step.value);
    if (!step.outputs.empty()) text += QString(" \u2192 ") + joinNames(step.outputs);
    return text;
}

int ScheduleTraceModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(m_steps.size());
}

QVariant ScheduleTraceModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const int row = index.row();
    const bool failed = row == m_errorStep;
    const bool skipped = m_errorStep >= 0 && row > m_errorStep;  // not applied
    const QString note = row < m_notes.size() ? m_notes[row] : QString();
    switch (role) {
        case Qt::DisplayRole:
            return QString("%1. %2").arg(row + 1).arg(describeStep(m_steps[size_t(row)]));
        case Qt::CheckStateRole:
            return m_steps[size_t(row)].enabled ? Qt::Checked : Qt::Unchecked;
        case Qt::ForegroundRole:
            if (failed) return QColor(0xb0, 0x00, 0x20);
            if (skipped) return QColor(Qt::gray);
            if (!note.isEmpty()) return QColor(0x9a, 0x67, 0x00);
            return {};
        case Qt::ToolTipRole:
            if (failed) return m_error;
            if (skipped) return QString("Not applied: an earlier step failed");
            if (!note.isEmpty()) return note;
            return {};
        default:
            return {};
    }
}

bool ScheduleTraceModel::setData(const QModelIndex& index, const QVariant& value, int role) {
    if (role != Qt::CheckStateRole ||
        !checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return false;
    const bool enabled = value.value<Qt::CheckState>() == Qt::Checked;
    schedule::Step& step = m_steps[size_t(index.row())];
    if (step.enabled == enabled) return true;
    step.enabled = enabled;
    emit dataChanged(index, index, {Qt::CheckStateRole});
    emit stepToggled(index.row(), enabled);
    return true;
}

Qt::ItemFlags ScheduleTraceModel::flags(const QModelIndex& index) const {
    if (!index.isValid()) return Qt::ItemIsDropEnabled;  // drops go between rows
    return Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemIsUserCheckable |
           Qt::ItemIsDragEnabled;
}

bool ScheduleTraceModel::moveRows(const QModelIndex& sourceParent, int sourceRow, int count,
                                  const QModelIndex& destinationParent, int destinationChild) {
    const int n = int(m_steps.size());
    if (sourceParent.isValid() || destinationParent.isValid() || count != 1 || sourceRow < 0 ||
        sourceRow >= n || destinationChild < 0 || destinationChild > n)
        return false;
    // `destinationChild` is the row it goes before, counted before the move.
    const int to = destinationChild > sourceRow ? destinationChild - 1 : destinationChild;
    if (to == sourceRow || !beginMoveRows({}, sourceRow, sourceRow, {}, destinationChild))
        return false;
    const schedule::Step step = m_steps[size_t(sourceRow)];
    m_steps.erase(m_steps.begin() + sourceRow);
    m_steps.insert(m_steps.begin() + to, step);
    endMoveRows();
    emit stepMoved(sourceRow, to);
    return true;
}

}  // namespace tessera::studio
