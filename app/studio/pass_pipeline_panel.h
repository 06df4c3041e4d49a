// PassPipelinePanel: the registered graph passes as a checkable, reorderable
// list with their descriptions (PassListModel in a list view); Apply runs the pipeline in a job and shows the
// graph before and after (removed nodes red, added green, changed orange),
// the timing of each pass, and the fused groups as boxes.
#pragma once

#include <QStringList>
#include <QWidget>
#include <memory>

#include "app/studio/job_runner.h"
#include "engine/graph/graph.h"

class QListView;
class QTreeWidget;
class QLabel;

namespace tessera::widgets {
class GraphView;
struct GraphViewData;
}  // namespace tessera::widgets

namespace tessera::studio {

class PassListModel;

/// What changed between two graphs, by node name.
struct GraphChanges {
    QVector<int> removed;  // node indices in `before`
    QVector<int> added;    // node indices in `after`
    QVector<int> changed;  // node indices in `after` (same name, other op/attrs/types)
};
GraphChanges compareGraphs(const graph::Graph& before, const graph::Graph& after);

/// View data of a graph with its fuse_group attributes as group boxes.
widgets::GraphViewData graphViewDataWithGroups(const graph::Graph& g);

class PassPipelinePanel : public QWidget {
    Q_OBJECT
public:
    explicit PassPipelinePanel(QWidget* parent = nullptr);

    /// The graph Apply starts from (a snapshot).
    void setGraph(std::shared_ptr<const graph::Graph> graph);
    /// Checked pass names in list order.
    QStringList pipeline() const;
    /// Checks exactly these passes and moves them to the top, in this order.
    void setPipeline(const QStringList& names);
    QListView* passList() const { return m_list; }
    PassListModel* passModel() const { return m_passes; }
    QTreeWidget* timings() const { return m_timings; }
    widgets::GraphView* beforeView() const { return m_before; }
    widgets::GraphView* afterView() const { return m_after; }
    const graph::Graph* result() const { return m_result.get(); }
    const GraphChanges& changes() const { return m_changes; }
    JobRunner* jobs() const { return m_jobs; }

public slots:
    /// Runs the checked passes on the graph in the background.
    void apply();

signals:
    void applied();
    void applyFailed(const QString& message);
    void pipelineChanged();

private:
    std::shared_ptr<const graph::Graph> m_graph;
    std::shared_ptr<const graph::Graph> m_result;
    GraphChanges m_changes;
    PassListModel* m_passes;
    QListView* m_list;
    QTreeWidget* m_timings;
    QLabel* m_summary;
    widgets::GraphView* m_before;
    widgets::GraphView* m_after;
    JobRunner* m_jobs;
};

}  // namespace tessera::studio
