// CollapseController: View ▸ Collapse graph: draws groups of the open
// model's nodes as one box in the graph view: name scopes, or the fused
// kernels the build with the workspace's settings makes (found in a job).
#pragma once

#include <QObject>
#include <QString>

namespace tessera::widgets {
class GraphView;
}

namespace tessera::studio {

class JobRunner;
class Workspace;

class CollapseController : public QObject {
    Q_OBJECT
public:
    CollapseController(Workspace* workspace, widgets::GraphView* graphView);

    /// "fused" (the build's kernels), "scope1".."scope3" (name scopes at that
    /// level, repeated blocks marked) or "none" (expanded).
    void collapse(const QString& how);
    bool isCollapsing() const;
    JobRunner* jobs() const { return m_jobs; }

private:
    Workspace* m_workspace;
    widgets::GraphView* m_graphView;
    JobRunner* m_jobs;
};

}  // namespace tessera::studio
