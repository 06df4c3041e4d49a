// winograd: blocked 3x3 stride-1 convs on large planes -> Winograd F(m, 3).
#include "engine/passes/winograd.h"

#include "engine/passes/graph_rewrite.h"
#include "engine/topi/winograd.h"

namespace tessera::passes {

namespace {

bool all_equal(const graph::Node& n, const std::string& key, int64_t v) {
    if (!n.attrs.count(key)) return true;
    for (int64_t x : n.attr_ints(key, {})) {
        if (x != v) return false;
    }
    return true;
}

bool eligible(const graph::Graph& g, const graph::Node& n, int64_t min_plane) {
    if (n.op != "nn.conv2d_NCHWc" || n.attr_int("groups", 1) != 1 || n.inputs.size() < 2 ||
        n.outputs.size() != 1)
        return false;
    if (!all_equal(n, "strides", 1) || !all_equal(n, "dilation", 1)) return false;
    if (!is_float_constant(g, n.inputs[1])) return false;
    const auto& x = g.values[size_t(n.inputs[0])].type;
    const auto& w = g.values[size_t(n.inputs[1])].type.shape;
    const auto& y = g.values[size_t(n.outputs[0])].type.shape;
    if (x.dtype != graph::DType::Float32 || x.shape.size() != 5 || w.size() != 6 || y.size() != 5)
        return false;
    return w[2] == 3 && w[3] == 3 && y[2] * y[3] >= min_plane;
}

}  // namespace

graph::Graph winograd_rewrite(const graph::Graph& in, int64_t tile, int64_t min_plane) {
    const topi::WinogradMatrices& mats = topi::winograd_matrices(tile);
    graph::Graph g = in;
    NameGen names(g);
    bool changed = false;
    for (graph::Node& n : g.nodes) {
        if (!eligible(g, n, min_plane)) continue;
        const graph::Value& wv = g.values[size_t(n.inputs[1])];
        const auto ws = wv.type.shape;  // OCo, ICo, 3, 3, ib, ob
        std::vector<float> u = topi::winograd_transform_weight(constant_floats(wv), ws[0], ws[1],
                                                               ws[4], ws[5], tile);
        const int64_t a = mats.alpha;
        const std::string uname = names.fresh(wv.name + "_winograd" + std::to_string(tile));
        n.inputs[1] = add_float_constant(g, uname, {a, a, ws[0], ws[1], ws[4], ws[5]}, u);
        n.op = "nn.conv2d_winograd_NCHWc";
        n.attrs.erase("strides");
        n.attrs.erase("dilation");
        n.attrs.erase("groups");
        n.attrs["tile"] = tile;
        changed = true;
    }
    if (!changed) return in;
    return compact(g, std::vector<bool>(g.nodes.size(), true));
}

graph::Graph winograd(const graph::Graph& g, const PassContext&) {
    return winograd_rewrite(g, kWinogradTile, kWinogradMinPlane);
}

}  // namespace tessera::passes
