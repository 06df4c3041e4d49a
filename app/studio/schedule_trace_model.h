// ScheduleTraceModel: the schedule editor's trace as a checkable, reorderable
// list: "3. split i [-1, 32] → i_0, i_1" per step, checked when enabled; the
// step that failed in red with the ScheduleError as its tool tip, the steps
// after it grey. It holds a snapshot of the steps (ScheduleEditor owns them):
// checking a row or dragging it asks the editor (stepToggled, stepMoved),
// which replays and shows the new trace (setTrace).
#pragma once

#include <QAbstractListModel>
#include <QString>
#include <QStringList>
#include <vector>

#include "engine/schedule/trace.h"

namespace tessera::studio {

class ScheduleTraceModel : public QAbstractListModel {
    Q_OBJECT
public:
    explicit ScheduleTraceModel(QObject* parent = nullptr);

    /// Shows `steps`; `errorStep` (or -1) failed with `error`; `notes` (per
    /// step, may be empty) say what a step that applied undid.
    void setTrace(const std::vector<schedule::Step>& steps, int errorStep, const QString& error,
                  const QStringList& notes = {});
    const std::vector<schedule::Step>& steps() const { return m_steps; }

    /// "split i [-1, 32] → i_0, i_1": a step as the list shows it.
    static QString describeStep(const schedule::Step& step);

    int rowCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    /// Checking a row asks for its step to be enabled (stepToggled).
    bool setData(const QModelIndex& index, const QVariant& value, int role = Qt::EditRole) override;
    Qt::ItemFlags flags(const QModelIndex& index) const override;
    Qt::DropActions supportedDropActions() const override { return Qt::MoveAction; }
    /// Moves one row (a list view's internal drag) and asks for the step to move (stepMoved).
    bool moveRows(const QModelIndex& sourceParent, int sourceRow, int count,
                  const QModelIndex& destinationParent, int destinationChild) override;

signals:
    void stepToggled(int step, bool enabled);
    /// Step `from` is to be at index `to` of the trace (counted after taking it out).
    void stepMoved(int from, int to);

private:
    std::vector<schedule::Step> m_steps;
    int m_errorStep = -1;
    QString m_error;
    QStringList m_notes;
};

}  // namespace tessera::studio
