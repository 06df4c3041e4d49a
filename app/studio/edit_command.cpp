// GraphEditCommand: snapshot swap on undo/redo.
#include "app/studio/edit_command.h"

namespace tessera::studio {

GraphEditCommand::GraphEditCommand(graph::GraphEdit edit, std::shared_ptr<const graph::Graph> before,
                                   std::shared_ptr<const graph::Graph> after,
                                   std::vector<graph::GraphEdit> editsBefore, Install install)
    : QUndoCommand(QString::fromStdString(graph::describe(edit))),
      m_edit(std::move(edit)),
      m_before(std::move(before)),
      m_after(std::move(after)),
      m_editsBefore(std::move(editsBefore)),
      m_install(std::move(install)) {}

void GraphEditCommand::undo() { m_install(m_before, m_editsBefore); }

void GraphEditCommand::redo() {
    std::vector<graph::GraphEdit> edits = m_editsBefore;
    edits.push_back(m_edit);
    m_install(m_after, edits);
}

std::shared_ptr<const graph::Graph> GraphEditCommand::applied(const graph::Graph& graph,
                                                              const graph::GraphEdit& edit) {
    graph::Graph copy = graph;
    graph::apply_edit(copy, edit);
    return std::make_shared<const graph::Graph>(std::move(copy));
}

}  // namespace tessera::studio
