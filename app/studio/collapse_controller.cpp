// CollapseController: name-scope groups at once, fused-kernel groups from a build job.
#include "app/studio/collapse_controller.h"

#include "app/studio/graph_collapse.h"
#include "app/studio/job_runner.h"
#include "app/studio/workspace.h"

namespace tessera::studio {

CollapseController::CollapseController(Workspace* workspace, widgets::GraphView* graphView)
    : QObject(workspace),
      m_workspace(workspace),
      m_graphView(graphView),
      m_jobs(new JobRunner(this)) {
    connect(m_jobs, &JobRunner::jobFailed, this, [this](int, const QString& message) {
        m_workspace->reportError("Cannot collapse the fused kernels", message);
    });
}

bool CollapseController::isCollapsing() const { return m_jobs->isRunning(); }

void CollapseController::collapse(const QString& how) {
    const std::shared_ptr<ModelDocument>& document = m_workspace->document();
    if (!document) return;
    if (how == "fused") {  // the kernels the code views' build makes
        std::shared_ptr<const graph::Graph> graph = document->snapshot();
        driver::BuildOptions options =
            m_workspace->buildSettings().buildOptions(m_workspace->kernelTraces());
        options.jit = false;
        options.report_failing_traces = true;  // the groups do not depend on schedules
        m_jobs->start(
            "Finding the fused kernels",
            [graph, options](const JobContext&) {
                return fusedKernelGroups(*graph, *driver::build(*graph, options));
            },
            [this](const QVector<widgets::GraphViewCollapse>& groups) {
                m_workspace->log(
                    QString("Graph: %1 fused kernels drawn as one box each").arg(groups.size()));
                m_graphView->setCollapsed(groups);
            });
        return;
    }
    const int level = how.startsWith("scope") ? how.mid(5).toInt() : 0;
    const QVector<widgets::GraphViewCollapse> groups =
        level > 0 ? nameScopeGroups(document->graph(), level)
                  : QVector<widgets::GraphViewCollapse>{};
    if (level > 0)
        m_workspace->log(
            QString("Graph: %1 name scopes at level %2 collapsed").arg(groups.size()).arg(level));
    m_graphView->setCollapsed(groups);
}

}  // namespace tessera::studio
