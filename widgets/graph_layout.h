// A plain-data interface to Graphviz "dot" layout, so no Graphviz macro leaks
// into Qt code. Coordinates are in points with y growing downwards (Qt style).
#pragma once

#include <string>
#include <vector>

namespace tessera::widgets {

/// One box to place; width and height in points (1/72 inch).
struct LayoutNodeSpec {
    std::string label;
    double width = 100;
    double height = 40;
};

/// A directed edge between two node indices of LayoutInput::nodes.
struct LayoutEdgeSpec {
    int from = 0;
    int to = 0;
};

struct LayoutInput {
    std::vector<LayoutNodeSpec> nodes;
    std::vector<LayoutEdgeSpec> edges;
};

struct LayoutPoint {
    double x = 0;
    double y = 0;
};

/// Where a node went: the centre of its box plus its size.
struct LayoutNodeBox {
    LayoutPoint center;
    double width = 0;
    double height = 0;
};

/// An edge route: `points` is a cubic Bezier chain (p0, then 3 points per
/// segment) when `is_spline`, else a polyline. `has_arrow_tip` means the
/// arrow head goes from the last point to `arrow_tip`.
struct LayoutEdgePath {
    int from = 0;
    int to = 0;
    bool is_spline = false;
    std::vector<LayoutPoint> points;
    bool has_arrow_tip = false;
    LayoutPoint arrow_tip;
};

struct LayoutResult {
    double width = 0;  // bounding box of the whole drawing
    double height = 0;
    std::vector<LayoutNodeBox> nodes;   // same order as LayoutInput::nodes
    std::vector<LayoutEdgePath> edges;  // same order as LayoutInput::edges
};

/// Node count above which the cheaper dot settings (mclimit, nslimit,
/// remincross off) are used; dense big graphs can otherwise take minutes.
constexpr size_t kBigGraphNodes = 200;

/// Node count above which the graph is laid out in layers without Graphviz
/// (layered_layout): dot took 63 s on a 2,055-node diffusion UNet and, on the
/// studio's copy of it, crashed inside its dot plugin (a SIGSEGV takes the
/// whole studio down).
constexpr size_t kHugeGraphNodes = 1000;

/// Lays the graph out top to bottom with Graphviz dot (above kHugeGraphNodes
/// nodes, layered_layout). Safe to call from any thread: calls are
/// serialized internally because Graphviz is not re-entrant. Throws
/// std::runtime_error when Graphviz fails.
LayoutResult layout_graph(const LayoutInput& input);

/// A plain layered layout, linear in the graph's size: each node on the
/// layer after its deepest producer (edges must go from lower to higher node
/// indices, as a topologically ordered graph's do; a backward edge is
/// ignored for ranking), each layer ordered by its producers' mean position,
/// straight edges from box to box.
LayoutResult layered_layout(const LayoutInput& input);

}  // namespace tessera::widgets
