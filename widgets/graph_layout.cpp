// Graphviz dot layout behind a plain struct interface (the only file that
// includes Graphviz headers: they define many macros).
#include "widgets/graph_layout.h"

#include <graphviz/gvc.h>

#include <algorithm>
#include <cstdio>
#include <mutex>
#include <stdexcept>
#include <string>

namespace tessera::widgets {
namespace {

// Graphviz keeps global state (the context, string pools, error buffers):
// one layout at a time.
std::mutex g_layoutMutex;

GVC_t* sharedContext() {
    static GVC_t* context = gvContext();
    return context;
}

// Graphviz 2.42 takes char* for strings it only reads.
char* cstr(const char* s) { return const_cast<char*>(s); }

void setAttr(void* object, const char* key, const std::string& value) {
    agsafeset(object, cstr(key), cstr(value.c_str()), cstr(""));
}

std::string points_to_inches(double points) { return std::to_string(points / 72.0); }

// Closes the graph (and frees its layout) on every path out.
struct GraphGuard {
    GVC_t* gvc;
    Agraph_t* graph;
    bool laidOut = false;
    ~GraphGuard() {
        if (laidOut) gvFreeLayout(gvc, graph);
        agclose(graph);
    }
};

}  // namespace

LayoutResult layered_layout(const LayoutInput& input) {
    constexpr double kNodeSep = 0.35 * 72, kRankSep = 0.45 * 72;
    const size_t count = input.nodes.size();
    for (const LayoutEdgeSpec& e : input.edges)
        if (e.from < 0 || e.to < 0 || size_t(e.from) >= count || size_t(e.to) >= count)
            throw std::runtime_error("graph layout: edge refers to a missing node");
    std::vector<std::vector<int>> producers(count);
    for (const LayoutEdgeSpec& e : input.edges)
        if (e.from < e.to) producers[size_t(e.to)].push_back(e.from);
    std::vector<int> rank(count, 0);
    int ranks = count ? 1 : 0;
    for (size_t i = 0; i < count; ++i) {
        for (int p : producers[i]) rank[i] = std::max(rank[i], rank[size_t(p)] + 1);
        ranks = std::max(ranks, rank[i] + 1);
    }
    std::vector<std::vector<int>> layers(static_cast<size_t>(ranks));
    for (size_t i = 0; i < count; ++i) layers[size_t(rank[i])].push_back(int(i));
    LayoutResult result;
    result.nodes.resize(count);
    const size_t nranks = static_cast<size_t>(ranks);
    std::vector<double> layer_width(nranks, 0.0), layer_height(nranks, 0.0);
    std::vector<double> slot(count, 0.0);  // a node's position within its layer
    for (int r = 0; r < ranks; ++r) {
        std::vector<int>& layer = layers[size_t(r)];
        if (r > 0) {
            std::vector<double> key(layer.size(), 0.0);
            for (size_t k = 0; k < layer.size(); ++k) {
                const std::vector<int>& ps = producers[size_t(layer[k])];
                double sum = 0;
                for (int p : ps) sum += slot[size_t(p)];
                key[k] = ps.empty() ? double(k) : sum / double(ps.size());
            }
            std::vector<size_t> order(layer.size());
            for (size_t k = 0; k < order.size(); ++k) order[k] = k;
            std::stable_sort(order.begin(), order.end(),
                             [&](size_t a, size_t b) { return key[a] < key[b]; });
            std::vector<int> sorted;
            for (size_t k : order) sorted.push_back(layer[k]);
            layer = sorted;
        }
        double x = 0;
        for (int n : layer) {
            const LayoutNodeSpec& spec = input.nodes[size_t(n)];
            result.nodes[size_t(n)].width = spec.width;
            result.nodes[size_t(n)].height = spec.height;
            result.nodes[size_t(n)].center.x = x + spec.width / 2;
            slot[size_t(n)] = x + spec.width / 2;
            x += spec.width + kNodeSep;
            layer_height[size_t(r)] = std::max(layer_height[size_t(r)], spec.height);
        }
        layer_width[size_t(r)] = std::max(x - kNodeSep, 0.0);
    }
    const double width = ranks ? *std::max_element(layer_width.begin(), layer_width.end()) : 0;
    double y = 0;
    for (int r = 0; r < ranks; ++r) {
        const double shift = (width - layer_width[size_t(r)]) / 2;
        for (int n : layers[size_t(r)]) {
            result.nodes[size_t(n)].center.x += shift;
            result.nodes[size_t(n)].center.y = y + layer_height[size_t(r)] / 2;
        }
        y += layer_height[size_t(r)] + kRankSep;
    }
    result.width = width;
    result.height = ranks ? y - kRankSep : 0;
    for (const LayoutEdgeSpec& e : input.edges) {
        const LayoutNodeBox& a = result.nodes[size_t(e.from)];
        const LayoutNodeBox& b = result.nodes[size_t(e.to)];
        LayoutEdgePath path;
        path.from = e.from;
        path.to = e.to;
        const LayoutPoint start{a.center.x, a.center.y + a.height / 2};
        const LayoutPoint tip{b.center.x, b.center.y - b.height / 2};
        path.points = {start, tip};
        result.edges.push_back(std::move(path));
    }
    return result;
}

LayoutResult layout_graph(const LayoutInput& input) {
    if (input.nodes.size() > kHugeGraphNodes) return layered_layout(input);
    std::lock_guard<std::mutex> lock(g_layoutMutex);
    GVC_t* gvc = sharedContext();
    if (!gvc) throw std::runtime_error("Graphviz: cannot create a layout context");

    Agraph_t* g = agopen(cstr("tessera"), Agdirected, nullptr);
    if (!g) throw std::runtime_error("Graphviz: cannot create a graph");
    GraphGuard guard{gvc, g};

    setAttr(g, "rankdir", "TB");
    setAttr(g, "nodesep", "0.35");
    setAttr(g, "ranksep", "0.45");
    if (input.nodes.size() > kBigGraphNodes) {
        // Cheaper crossing minimization and network simplex for big graphs
        // (TOOLCHAIN.md pitfall 8).
        setAttr(g, "mclimit", "0.1");
        setAttr(g, "nslimit", "1");
        setAttr(g, "nslimit1", "1");
        setAttr(g, "remincross", "false");
    }
    agattr(g, AGNODE, cstr("shape"), cstr("box"));
    agattr(g, AGNODE, cstr("fixedsize"), cstr("true"));
    agattr(g, AGNODE, cstr("label"), cstr(""));  // we draw labels ourselves
    agattr(g, AGNODE, cstr("width"), cstr("1"));
    agattr(g, AGNODE, cstr("height"), cstr("0.5"));

    std::vector<Agnode_t*> nodes;
    nodes.reserve(input.nodes.size());
    for (size_t i = 0; i < input.nodes.size(); ++i) {
        char name[32];
        std::snprintf(name, sizeof name, "n%zu", i);
        Agnode_t* n = agnode(g, name, 1);
        setAttr(n, "width", points_to_inches(input.nodes[i].width));
        setAttr(n, "height", points_to_inches(input.nodes[i].height));
        nodes.push_back(n);
    }
    std::vector<Agedge_t*> edges;
    edges.reserve(input.edges.size());
    for (const LayoutEdgeSpec& e : input.edges) {
        if (e.from < 0 || e.to < 0 || size_t(e.from) >= nodes.size() ||
            size_t(e.to) >= nodes.size())
            throw std::runtime_error("graph layout: edge refers to a missing node");
        edges.push_back(agedge(g, nodes[e.from], nodes[e.to], nullptr, 1));
    }

    if (gvLayout(gvc, g, "dot") != 0) throw std::runtime_error("Graphviz dot layout failed");
    guard.laidOut = true;

    const boxf bb = GD_bb(g);
    auto toQt = [&](pointf p) { return LayoutPoint{p.x - bb.LL.x, bb.UR.y - p.y}; };

    LayoutResult result;
    result.width = bb.UR.x - bb.LL.x;
    result.height = bb.UR.y - bb.LL.y;
    for (Agnode_t* n : nodes) {
        LayoutNodeBox box;
        box.center = toQt(ND_coord(n));
        box.width = ND_width(n) * 72.0;
        box.height = ND_height(n) * 72.0;
        result.nodes.push_back(box);
    }
    for (size_t i = 0; i < edges.size(); ++i) {
        LayoutEdgePath path;
        path.from = input.edges[i].from;
        path.to = input.edges[i].to;
        const splines* spl = ED_spl(edges[i]);
        if (spl && spl->size > 0 && spl->list[0].size >= 4) {
            const bezier& bz = spl->list[0];
            path.is_spline = true;
            for (int k = 0; k < bz.size; ++k) path.points.push_back(toQt(bz.list[k]));
            if (bz.eflag) {
                path.has_arrow_tip = true;
                path.arrow_tip = toQt(bz.ep);
            }
        } else {
            // No route from Graphviz: a straight line between the box centres.
            path.points = {result.nodes[path.from].center, result.nodes[path.to].center};
        }
        result.edges.push_back(std::move(path));
    }
    return result;
}

}  // namespace tessera::widgets
