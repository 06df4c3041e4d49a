// StepDialog: "Add step…" in the schedule editor, for every schedule
// primitive (the buttons and drags cover the common ones): pick the
// primitive, and its arguments (block, loops, integers, key, value) are
// pre-filled from the loop tree's selection, each field labelled with what
// that primitive reads from it. The engine checks the step when it is added.
#pragma once

#include <QDialog>

#include "engine/schedule/trace.h"

class QComboBox;
class QLabel;
class QLineEdit;

namespace tessera::studio {

class StepDialog : public QDialog {
    Q_OBJECT
public:
    /// `block` / `loops`: the loop tree's selection, to pre-fill with.
    StepDialog(const QString& block, const QStringList& loops, QWidget* parent = nullptr);

    /// The primitives offered, in menu order.
    static QStringList primitives();
    void setPrimitive(const QString& op);
    void setField(const QString& field, const QString& text);  // "block", "loops", "ints", "key", "value"
    /// The step the fields describe; false (with `why`) when an integer field does not parse.
    bool step(schedule::Step* out, QString* why) const;

private:
    void describe();

    QComboBox* m_op;
    QLabel* m_help;
    QLineEdit *m_block, *m_loops, *m_ints, *m_key, *m_value;
};

}  // namespace tessera::studio
