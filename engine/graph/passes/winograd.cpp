// winograd: blocked 3x3 stride-1 convs where the cost model says it pays ->
// Winograd F(m, 3).
#include "engine/graph/passes/winograd.h"

#include "engine/graph/passes/graph_rewrite.h"
#include "engine/topi/compute/winograd.h"

namespace tessera::passes {

namespace {

bool all_equal(const graph::Node& n, const std::string& key, int64_t v) {
    if (!n.attrs.count(key)) return true;
    for (int64_t x : n.attr_ints(key, {})) {
        if (x != v) return false;
    }
    return true;
}

bool eligible(const graph::Graph& g, const graph::Node& n, int64_t tile, int64_t min_plane,
              WinogradChoice choice) {
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
    if (w[2] != 3 || w[3] != 3) return false;
    const int64_t plane = y[2] * y[3];
    if (choice == WinogradChoice::kEvery) return plane >= min_plane;
    // Weights (OCo, ICo, 3, 3, ib, ob): the channel counts both algorithms
    // compute over, padded to whole blocks.
    return winograd_pays_off(w[1] * w[4], w[0] * w[5], plane, tile);
}

}  // namespace

bool winograd_pays_off(int64_t ic, int64_t oc, int64_t plane, int64_t tile) {
    if (plane < kWinogradMinPlane) return false;
    const double alpha = double(tile + 2);
    const double per_pixel = alpha * alpha / double(tile * tile);
    const double direct = 9.0 * double(ic) * double(oc);
    const double winograd = per_pixel * double(oc) * (double(ic) + kWinogradChannelOverhead);
    return winograd < direct;
}

graph::Graph winograd_rewrite(const graph::Graph& in, int64_t tile, int64_t min_plane,
                              WinogradChoice choice) {
    const topi::WinogradMatrices& mats = topi::winograd_matrices(tile);
    graph::Graph g = in;
    NameGen names(g);
    bool changed = false;
    for (graph::Node& n : g.nodes) {
        if (!eligible(g, n, tile, min_plane, choice)) continue;
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
    return winograd_rewrite(g, kWinogradTile, kWinogradMinPlane, WinogradChoice::kByCostModel);
}

}  // namespace tessera::passes
