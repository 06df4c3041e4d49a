// Operator fusion, following TVM's FuseOps (relay/transforms/fuse_ops.cc):
// build the post-dominator tree of the dataflow graph, then in two phases
// merge each node into the group of its immediate post-dominator when every
// path between them satisfies the pattern rule of the node's kind.
#include "engine/graph/passes/fuse_ops.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "engine/core/error.h"
#include "engine/graph/op_registry.h"

namespace tessera::passes {

namespace {

using graph::OpPattern;

OpPattern combine(OpPattern a, OpPattern b) { return a > b ? a : b; }

constexpr int kMaxFuseDepth = 256;

struct Edge {
    int node;
    OpPattern pattern;
};

struct Group {
    int parent = -1;  // union-find parent, -1 for a root
    OpPattern pattern = OpPattern::Opaque;
    bool anchor = false;
    int num_nodes = 1;
};

class Partitioner {
public:
    explicit Partitioner(const graph::Graph& g) : m_g(g), m_n(int(g.nodes.size())) {
        m_pattern.resize(size_t(m_n), OpPattern::Opaque);
        m_outs.resize(size_t(m_n));
        m_extern.resize(size_t(m_n), false);
        for (int i = 0; i < m_n; ++i) {
            const graph::OpDef* def = graph::find_op(g.nodes[size_t(i)].op);
            m_pattern[size_t(i)] = def ? def->pattern : OpPattern::Opaque;
        }
        for (int j = 0; j < m_n; ++j) {
            const graph::Node& n = g.nodes[size_t(j)];
            std::set<int> producers;
            for (int v : n.inputs) {
                int p = g.values[size_t(v)].producer;
                if (p < 0 || !producers.insert(p).second) continue;
                OpPattern ep = m_pattern[size_t(j)];
                // A broadcast op reading a same-shaped operand is elementwise on that edge.
                if (ep == OpPattern::Broadcast && !n.outputs.empty() &&
                    g.values[size_t(v)].type.shape == g.values[size_t(n.outputs[0])].type.shape)
                    ep = OpPattern::ElemWise;
                m_outs[size_t(p)].push_back({j, ep});
            }
        }
        for (int v : g.outputs) {
            int p = g.values[size_t(v)].producer;
            if (p >= 0) m_extern[size_t(p)] = true;
        }
        build_post_dominators();
        m_groups.resize(size_t(m_n));
        for (int i = 0; i < m_n; ++i) {
            m_groups[size_t(i)].pattern = m_pattern[size_t(i)];
            m_groups[size_t(i)].anchor = m_pattern[size_t(i)] == OpPattern::OutEWiseFusable;
        }
    }

    /// Group root per node.
    std::vector<int> run() {
        for (int phase = 0; phase < 2; ++phase) run_phase(phase);
        std::vector<int> root(static_cast<size_t>(m_n), -1);
        for (int i = 0; i < m_n; ++i) root[size_t(i)] = find(i);
        return root;
    }

private:
    struct DomNode {
        int parent = -1;
        int depth = 1;
        OpPattern pattern = OpPattern::Opaque;
    };

    void build_post_dominators() {
        m_dom.resize(size_t(m_n));
        for (int i = m_n - 1; i >= 0; --i) {
            DomNode& d = m_dom[size_t(i)];
            if (m_extern[size_t(i)] || m_outs[size_t(i)].empty()) {
                d = DomNode{-1, 1, m_extern[size_t(i)] ? OpPattern::Opaque : OpPattern::ElemWise};
                continue;
            }
            OpPattern pattern = OpPattern::ElemWise;
            const auto& outs = m_outs[size_t(i)];
            int parent = outs[0].node;
            pattern = combine(pattern, outs[0].pattern);
            for (size_t k = 1; k < outs.size(); ++k) {
                parent = lca(parent, outs[k].node, pattern);
                pattern = combine(pattern, outs[k].pattern);
            }
            d.parent = parent;
            d.depth = parent >= 0 ? m_dom[size_t(parent)].depth + 1 : 1;
            d.pattern = pattern;
        }
    }

    int lca(int a, int b, OpPattern& pattern) const {
        while (a != b) {
            if (a < 0 || b < 0) return -1;
            const DomNode& da = m_dom[size_t(a)];
            const DomNode& db = m_dom[size_t(b)];
            if (da.depth < db.depth) {
                pattern = combine(pattern, db.pattern);
                b = db.parent;
            } else if (db.depth < da.depth) {
                pattern = combine(pattern, da.pattern);
                a = da.parent;
            } else {
                pattern = combine(combine(pattern, da.pattern), db.pattern);
                a = da.parent;
                b = db.parent;
            }
        }
        return a;
    }

    int find(int i) {
        while (m_groups[size_t(i)].parent >= 0) i = m_groups[size_t(i)].parent;
        return i;
    }

    bool check_path_rec(int node, int sink, const std::function<bool(OpPattern, bool)>& fcond) {
        if (!m_visited.insert(node).second) return true;
        if (!fcond(m_groups[size_t(find(node))].pattern, node == sink)) return false;
        if (node == sink) return true;
        for (const Edge& e : m_outs[size_t(node)])
            if (!check_path_rec(e.node, sink, fcond)) return false;
        return true;
    }

    bool check_path(int src, int sink, const std::function<bool(OpPattern, bool)>& fcond) {
        m_visited.clear();
        for (const Edge& e : m_outs[size_t(src)])
            if (!check_path_rec(e.node, sink, fcond)) return false;
        return true;
    }

    void merge(int child, int parent) {
        child = find(child);
        parent = find(parent);
        if (child == parent) return;
        Group& c = m_groups[size_t(child)];
        Group& p = m_groups[size_t(parent)];
        p.num_nodes += c.num_nodes;
        c.parent = parent;
        if (c.anchor) {
            p.anchor = true;
            p.pattern = combine(c.pattern, p.pattern);
        }
    }

    void commit_rec(int node, int sink, int target) {
        if (node == sink || !m_visited.insert(node).second) return;
        merge(node, target);
        for (const Edge& e : m_outs[size_t(node)]) commit_rec(e.node, sink, target);
    }

    void commit(int src, int sink) {
        int target = find(sink);
        m_visited.clear();
        commit_rec(src, sink, target);
    }

    int count_rec(int node, int sink) {
        if (node == sink || !m_visited.insert(node).second) return 0;
        int sum = m_groups[size_t(node)].num_nodes;
        for (const Edge& e : m_outs[size_t(node)]) sum += count_rec(e.node, sink);
        return sum;
    }

    int count_with_new_child(int child, int parent) {
        m_visited.clear();
        return m_groups[size_t(find(parent))].num_nodes + count_rec(child, parent);
    }

    void run_phase(int phase) {
        for (int nid = 0; nid < m_n; ++nid) {
            const Group& group = m_groups[size_t(nid)];
            const DomNode& dom = m_dom[size_t(nid)];
            if (group.pattern == OpPattern::Opaque || dom.parent < 0) continue;
            if (count_with_new_child(nid, dom.parent) > kMaxFuseDepth) continue;
            if (find(nid) == find(dom.parent)) continue;
            if (group.pattern == OpPattern::OutEWiseFusable) {
                if (phase != 0) continue;
                if (dom.pattern == OpPattern::ElemWise) {
                    auto fcond = [](OpPattern k, bool) { return k <= OpPattern::Broadcast; };
                    if (check_path(nid, dom.parent, fcond)) commit(nid, dom.parent);
                }
            } else if (group.pattern <= OpPattern::Broadcast) {
                if (dom.pattern <= OpPattern::Injective || dom.pattern == OpPattern::CommReduce) {
                    auto fcond = [](OpPattern k, bool is_sink) {
                        if (!is_sink) return k <= OpPattern::Injective;
                        return k <= OpPattern::Broadcast || k == OpPattern::CommReduce ||
                               k == OpPattern::Injective || k == OpPattern::OutEWiseFusable;
                    };
                    if (check_path(nid, dom.parent, fcond)) commit(nid, dom.parent);
                }
            } else if (group.pattern == OpPattern::Injective) {
                if (phase != 1) continue;
                auto fcond = [](OpPattern k, bool) { return k <= OpPattern::Injective; };
                if (check_path(nid, dom.parent, fcond)) commit(nid, dom.parent);
            }
            // CommReduce: its consumers never join it (TVM does the same).
        }
    }

    const graph::Graph& m_g;
    int m_n;
    std::vector<OpPattern> m_pattern;
    std::vector<std::vector<Edge>> m_outs;
    std::vector<bool> m_extern;
    std::vector<DomNode> m_dom;
    std::vector<Group> m_groups;
    std::set<int> m_visited;
};

}  // namespace

graph::Graph fuse_ops(const graph::Graph& in, const PassContext&) {
    graph::Graph g = in;
    std::vector<int> root = Partitioner(g).run();
    std::map<int, int64_t> ids;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
        auto it = ids.emplace(root[i], int64_t(ids.size())).first;
        g.nodes[i].attrs[kFuseGroupAttr] = it->second;
    }
    return g;
}

std::vector<std::vector<int>> fused_groups(const graph::Graph& g) {
    std::map<int64_t, std::vector<int>> by_id;
    std::vector<std::vector<int>> groups;
    for (int i = 0; i < int(g.nodes.size()); ++i) {
        const graph::Node& n = g.nodes[size_t(i)];
        auto it = n.attrs.find(kFuseGroupAttr);
        const int64_t* id = it == n.attrs.end() ? nullptr : std::get_if<int64_t>(&it->second);
        if (id)
            by_id[*id].push_back(i);
        else
            groups.push_back({i});
    }
    for (auto& [id, nodes] : by_id) groups.push_back(std::move(nodes));
    std::sort(groups.begin(), groups.end(),
              [](const auto& a, const auto& b) { return a.back() < b.back(); });
    return groups;
}

std::map<int, int> reshapes_as_views(const graph::Graph& g,
                                     const std::vector<std::vector<int>>& groups) {
    std::map<int, int> readers;
    for (const graph::Node& n : g.nodes)
        for (int v : n.inputs) readers[v]++;
    std::set<int> io(g.inputs.begin(), g.inputs.end());
    io.insert(g.outputs.begin(), g.outputs.end());
    std::map<int, int> views;
    for (const std::vector<int>& group : groups) {
        if (group.size() != 1) continue;
        const graph::Node& n = g.nodes[size_t(group[0])];
        // Only where fuse_ops ran: without fusion every node is a kernel.
        if (n.op != "reshape" || n.inputs.size() != 1 || n.outputs.size() != 1 ||
            !n.attrs.count(kFuseGroupAttr))
            continue;
        const int v = n.inputs[0];
        const graph::Value& in = g.values[size_t(v)];
        const graph::Value& out = g.values[size_t(n.outputs[0])];
        if (in.is_constant() || in.producer < 0 || io.count(v) || readers[v] != 1 ||
            in.type.dtype != out.type.dtype || in.type.num_bytes() != out.type.num_bytes())
            continue;
        views[v] = group[0];
    }
    return views;
}

}  // namespace tessera::passes
