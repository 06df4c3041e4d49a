// PassPipelinePanel: list, Apply job (PassManager with timing), before/after views.
#include "app/studio/pass_pipeline_panel.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QListView>
#include <QPushButton>
#include <QSplitter>
#include <QTreeWidget>
#include <QVBoxLayout>
#include <algorithm>
#include <map>
#include <set>

#include "app/studio/model_document.h"
#include "app/studio/pass_list_model.h"
#include "engine/graph/passes/pass_manager.h"
#include "widgets/graph_view.h"

namespace tessera::studio {
namespace {

// What identifies a node's behaviour: op, attributes (but not fuse_group) and output types.
std::string signature(const graph::Graph& g, const graph::Node& n) {
    std::string s = n.op;
    for (const auto& [key, value] : n.attrs)
        if (key != "fuse_group") s += "|" + key + "=" + attrToString(value).toStdString();
    for (int v : n.outputs) s += "|" + g.values[size_t(v)].type.str();
    return s;
}

struct PassRun {
    std::shared_ptr<const graph::Graph> result;
    std::vector<passes::PassRecord> records;
};

}  // namespace

GraphChanges compareGraphs(const graph::Graph& before, const graph::Graph& after) {
    GraphChanges c;
    std::map<std::string, int> old;
    for (size_t i = 0; i < before.nodes.size(); ++i) old[before.nodes[i].name] = int(i);
    std::set<std::string> kept;
    for (size_t i = 0; i < after.nodes.size(); ++i) {
        const graph::Node& n = after.nodes[i];
        auto it = old.find(n.name);
        if (it == old.end()) {
            c.added.append(int(i));
            continue;
        }
        kept.insert(n.name);
        if (signature(before, before.nodes[size_t(it->second)]) != signature(after, n))
            c.changed.append(int(i));
    }
    for (size_t i = 0; i < before.nodes.size(); ++i)
        if (!kept.count(before.nodes[i].name)) c.removed.append(int(i));
    return c;
}

widgets::GraphViewData graphViewDataWithGroups(const graph::Graph& g) {
    widgets::GraphViewData data = ModelDocument(QString(), g).graphViewData();
    std::map<int64_t, QVector<int>> groups;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
        auto it = g.nodes[i].attrs.find("fuse_group");
        if (it != g.nodes[i].attrs.end())
            if (auto* id = std::get_if<int64_t>(&it->second)) groups[*id].append(int(i));
    }
    for (const auto& [id, nodes] : groups)
        if (nodes.size() > 1) data.groups.append({QString("fused %1").arg(id), nodes});
    return data;
}

PassPipelinePanel::PassPipelinePanel(QWidget* parent)
    : QWidget(parent), m_passes(new PassListModel(this)), m_jobs(new JobRunner(this)) {
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    auto* left = new QWidget(this);
    auto* leftLayout = new QVBoxLayout(left);
    leftLayout->setContentsMargins(0, 0, 0, 0);
    m_list = new QListView(left);
    m_list->setModel(m_passes);
    m_list->setDragDropMode(QAbstractItemView::InternalMove);
    m_list->setDefaultDropAction(Qt::MoveAction);
    m_list->setToolTip("Check the passes to run; drag to reorder");
    // Pass names in full (they were cut to "f..." in a narrow dock).
    int widest = 0;
    for (int i = 0; i < m_passes->rowCount(); ++i)
        widest = std::max(widest, m_list->fontMetrics().horizontalAdvance(
                                      m_passes->index(i).data().toString()));
    m_list->setMinimumWidth(widest + 48);  // the check box and a scroll bar
    auto* applyButton = new QPushButton("Apply", left);
    applyButton->setToolTip("Run the checked passes and compare the graph before and after");
    m_summary = new QLabel(left);
    m_summary->setWordWrap(true);
    m_timings = new QTreeWidget(left);
    m_timings->setHeaderLabels({"Pass", "ms", "Nodes", "Changed"});
    m_timings->setRootIsDecorated(false);
    m_timings->header()->setSectionResizeMode(0, QHeaderView::Stretch);
    leftLayout->addWidget(m_list, 3);
    leftLayout->addWidget(applyButton);
    leftLayout->addWidget(m_summary);
    leftLayout->addWidget(m_timings, 2);

    auto* views = new QSplitter(Qt::Horizontal, this);
    m_before = new widgets::GraphView(views);
    m_after = new widgets::GraphView(views);
    m_before->setToolTip("Before: removed nodes in red, changed in orange");
    m_after->setToolTip("After: added nodes in green, changed in orange; fused groups boxed");
    auto* splitter = new QSplitter(Qt::Horizontal, this);
    splitter->addWidget(left);
    splitter->addWidget(views);
    splitter->setStretchFactor(1, 3);
    layout->addWidget(splitter);

    connect(applyButton, &QPushButton::clicked, this, &PassPipelinePanel::apply);
    connect(m_passes, &PassListModel::edited, this, &PassPipelinePanel::pipelineChanged);
    connect(m_jobs, &JobRunner::jobFailed, this, [this](int, const QString& message) {
        m_summary->setText("Failed: " + message);
        emit applyFailed(message);
    });
}

void PassPipelinePanel::setGraph(std::shared_ptr<const graph::Graph> graph) {
    m_jobs->cancel();
    m_graph = std::move(graph);
    m_result.reset();
    m_changes = {};
    m_timings->clear();
    m_summary->clear();
    m_before->clearGraph();
    m_after->clearGraph();
}

QStringList PassPipelinePanel::pipeline() const { return m_passes->pipeline(); }

void PassPipelinePanel::setPipeline(const QStringList& names) {
    m_passes->setPipeline(names);
    emit pipelineChanged();
}

void PassPipelinePanel::apply() {
    if (!m_graph) return;
    std::shared_ptr<const graph::Graph> input = m_graph;
    std::vector<std::string> names;
    for (const QString& n : pipeline()) names.push_back(n.toStdString());
    m_jobs->start(
        "Running passes",
        [input, names](const JobContext& context) {
            passes::PassManager pm;
            pm.set_pipeline(names);
            PassRun run;
            run.result = std::make_shared<const graph::Graph>(pm.run(*input));
            run.records = pm.records();
            context.reportProgress(1.0);
            return run;
        },
        [this, input](const PassRun& run) {
            m_result = run.result;
            m_changes = compareGraphs(*input, *m_result);
            m_timings->clear();
            double total = 0;
            for (const passes::PassRecord& r : run.records) {
                auto* item = new QTreeWidgetItem(m_timings);
                item->setText(0, QString::fromStdString(r.name));
                item->setToolTip(0, QString::fromStdString(r.name));
                item->setText(1, QString::number(r.seconds * 1e3, 'f', 3));
                item->setText(2, QString("%1 \u2192 %2").arg(r.nodes_before).arg(r.nodes_after));
                item->setText(3, r.changed ? "yes" : "");
                total += r.seconds;
            }
            // The pass names take the room the numbers leave (a narrow
            // dock showed "f..." for every name).
            for (int c = 1; c < m_timings->columnCount(); ++c) m_timings->resizeColumnToContents(c);
            m_timings->header()->setSectionResizeMode(0, QHeaderView::Stretch);
            m_summary->setText(QString("%1 passes in %2 ms: %3 removed, %4 added, %5 changed nodes")
                                   .arg(run.records.size())
                                   .arg(total * 1e3, 0, 'f', 2)
                                   .arg(m_changes.removed.size())
                                   .arg(m_changes.added.size())
                                   .arg(m_changes.changed.size()));
            const GraphChanges changes = m_changes;
            auto highlight = [](widgets::GraphView* view, const QVector<int>& a, const QColor& ca,
                                const QVector<int>& b, const QColor& cb) {
                view->setHighlightedNodes(a, ca);
                for (int n : b)
                    if (n < view->nodeItems().size()) view->nodeItems()[n]->setHighlight(cb);
            };
            const QColor red(0xd0, 0x20, 0x20), green(0x20, 0xa0, 0x40), orange(0xf0, 0x8c, 0x00);
            connect(m_before, &widgets::GraphView::layoutFinished, this, [=, this]() {
                highlight(m_before, changes.removed, red, {}, QColor());
            }, Qt::SingleShotConnection);
            connect(m_after, &widgets::GraphView::layoutFinished, this, [=, this]() {
                highlight(m_after, changes.added, green, changes.changed, orange);
                emit applied();
            }, Qt::SingleShotConnection);
            m_before->setGraph(graphViewDataWithGroups(*input));
            m_after->setGraph(graphViewDataWithGroups(*m_result));
        });
}

}  // namespace tessera::studio
