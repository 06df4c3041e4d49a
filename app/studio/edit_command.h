// GraphEditCommand: one graph edit on the QUndoStack. The edit is applied by
// engine/graph/graph_edit.h before the command is pushed (a refused edit never
// reaches the stack); undo and redo swap immutable graph snapshots.
#pragma once

#include <QUndoCommand>
#include <functional>
#include <memory>
#include <vector>

#include "engine/graph/graph.h"
#include "engine/graph/graph_edit.h"

namespace tessera::studio {

/// A GraphEdit with the given fields (the rest empty).
inline graph::GraphEdit makeEdit(graph::GraphEdit::Kind kind, std::string target, std::string key = {},
                                 graph::AttrValue value = {}, std::vector<int64_t> shape = {}) {
    graph::GraphEdit e;
    e.kind = kind;
    e.target = std::move(target);
    e.key = std::move(key);
    e.value = std::move(value);
    e.shape = std::move(shape);
    return e;
}

class GraphEditCommand : public QUndoCommand {
public:
    /// Installs a graph and the matching edit list into the document.
    using Install = std::function<void(std::shared_ptr<const graph::Graph>,
                                       const std::vector<graph::GraphEdit>&)>;

    GraphEditCommand(graph::GraphEdit edit, std::shared_ptr<const graph::Graph> before,
                     std::shared_ptr<const graph::Graph> after,
                     std::vector<graph::GraphEdit> editsBefore, Install install);
    void undo() override;
    void redo() override;
    const graph::GraphEdit& edit() const { return m_edit; }

    /// Applies `edit` to a copy of `graph`: the new graph, or UserError (graph untouched).
    static std::shared_ptr<const graph::Graph> applied(const graph::Graph& graph,
                                                       const graph::GraphEdit& edit);

private:
    graph::GraphEdit m_edit;
    std::shared_ptr<const graph::Graph> m_before, m_after;
    std::vector<graph::GraphEdit> m_editsBefore;
    Install m_install;
};

}  // namespace tessera::studio
