// ScheduleEditor's direct manipulation of the loop tree: the selected loops
// and block (what the primitive buttons apply to), and dropping a loop on
// another (reorder within their nest) or a block on a loop (compute_at or
// reverse_compute_at, whichever is legal; the legal loops are highlighted
// while the block is dragged).
#include <QItemSelectionModel>
#include <QLabel>
#include <QTreeView>
#include <algorithm>

#include "app/studio/schedule_editor.h"
#include "engine/schedule/schedule.h"

namespace tessera::studio {

QStringList ScheduleEditor::selectedLoops() const {
    QStringList loops;
    const QModelIndexList rows = m_loopView->selectionModel()->selectedRows(0);
    QVector<int> order;
    for (const QModelIndex& index : rows) {
        const int r = m_loopModel->rowOf(index);
        if (r >= 0 && !m_loopModel->rows()[r].isBlock) order.append(r);
    }
    std::sort(order.begin(), order.end());  // pre-order = outermost first
    for (int r : order) loops << m_loopModel->rows()[r].name;
    return loops;
}

QString ScheduleEditor::selectedBlock() const {
    for (const QModelIndex& index : m_loopView->selectionModel()->selectedRows(0)) {
        const int r = m_loopModel->rowOf(index);
        if (r >= 0 && m_loopModel->rows()[r].isBlock) return m_loopModel->rows()[r].name;
    }
    return {};
}

void ScheduleEditor::annotateSelected(const QString& op) {
    const QStringList loops = selectedLoops();
    if (loops.size() != 1) {
        m_errorLabel->setText(op + ": select one loop.");
        return;
    }
    addStep(makeStep(op.toStdString(), {loops[0].toStdString()}));
}

std::string ScheduleEditor::placementAt(const QString& block, const QString& loop) const {
    for (const char* op : {"compute_at", "reverse_compute_at"}) {
        try {
            schedule::Schedule s(m_scheduled);
            s.apply(makeStep(op, {loop.toStdString()}, {}, block.toStdString()));
            return op;
        } catch (const std::exception&) {
            // not legal this way
        }
    }
    return {};
}

QSet<QString> ScheduleEditor::legalComputeAtTargets(const QString& block) const {
    QSet<QString> legal;
    if (!m_scheduled.defined()) return legal;
    for (const LoopRow& row : m_loopModel->rows()) {
        if (row.isBlock) continue;
        // A producer moves under its consumer's loop (compute_at), a consumer
        // under its producer's (reverse_compute_at).
        if (!placementAt(block, row.name).empty()) legal.insert(row.name);
    }
    return legal;
}

void ScheduleEditor::onLoopDropped(const QString& source, bool isBlock, const QString& target) {
    m_loopModel->setLegalTargets({});
    if (isBlock) {
        const std::string op = placementAt(source, target);
        addStep(makeStep(op.empty() ? "compute_at" : op, {target.toStdString()}, {},
                         source.toStdString()));  // an illegal drop says why compute_at fails
        return;
    }
    // Reorder within the nest that holds both loops: move `source` to `target`'s place.
    try {
        schedule::Schedule s(m_scheduled);
        for (const std::string& block : s.blocks()) {
            std::vector<std::string> loops = s.get_loops(block);
            auto a = std::find(loops.begin(), loops.end(), source.toStdString());
            auto b = std::find(loops.begin(), loops.end(), target.toStdString());
            if (a == loops.end() || b == loops.end()) continue;
            const size_t i = size_t(a - loops.begin()), j = size_t(b - loops.begin());
            std::vector<std::string> sub(loops.begin() + std::min(i, j),
                                         loops.begin() + std::max(i, j) + 1);
            if (i < j)
                std::rotate(sub.begin(), sub.begin() + 1, sub.end());
            else
                std::rotate(sub.rbegin(), sub.rbegin() + 1, sub.rend());
            addStep(makeStep("reorder", sub));
            return;
        }
        m_errorLabel->setText("Reorder: " + source + " and " + target +
                              " are not in one loop nest.");
    } catch (const std::exception& e) {
        m_errorLabel->setText(oneLine(QString::fromStdString(e.what())));
    }
}

}  // namespace tessera::studio
