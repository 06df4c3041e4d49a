// Forward scale-axis folding (Relay's FoldScaleAxis, forward direction):
// conv2d followed by a per-output-channel constant multiply and/or add.
#include "engine/graph/passes/fold_scale_axis.h"

#include "engine/graph/passes/graph_rewrite.h"

namespace tessera::passes {

namespace {

// The per-channel values of constant `c` broadcast against a conv output of
// shape (N, K, H, W): empty unless every dim but the channel one is 1.
std::vector<float> per_channel(const graph::Graph& g, int c, int64_t K) {
    if (!is_float_constant(g, c)) return {};
    const auto& s = g.values[size_t(c)].type.shape;
    if (s.size() > 4) return {};
    int64_t channel_dim = int64_t(s.size()) - 3;  // index of K after right-alignment
    int64_t channels = 1;
    for (int64_t i = 0; i < int64_t(s.size()); ++i) {
        if (i == channel_dim) {
            channels = s[size_t(i)];
            if (channels != 1 && channels != K) return {};
        } else if (s[size_t(i)] != 1) {
            return {};
        }
    }
    std::vector<float> d = constant_floats(g.values[size_t(c)]);
    if (channels == 1) return std::vector<float>(size_t(K), d.at(0));
    return d;
}

}  // namespace

graph::Graph fold_scale_axis(const graph::Graph& in, const PassContext&) {
    graph::Graph g = in;
    auto uses = value_consumers(in);
    NameGen names(g);
    std::vector<bool> keep(g.nodes.size(), true);
    bool changed = false;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
        graph::Node& n = g.nodes[i];
        if ((n.op != "multiply" && n.op != "add") || n.inputs.size() != 2) continue;
        for (int side = 0; side < 2; ++side) {
            int x = n.inputs[size_t(side)], c = n.inputs[size_t(1 - side)];
            int p = g.values[size_t(x)].producer;
            if (p < 0 || !keep[size_t(p)] || uses[size_t(x)].size() != 1 || is_graph_output(g, x))
                continue;
            graph::Node& conv = g.nodes[size_t(p)];
            if (conv.op != "nn.conv2d" || conv.inputs.size() < 2 ||
                !is_float_constant(g, conv.inputs[1]) ||
                (conv.inputs.size() == 3 && !is_float_constant(g, conv.inputs[2])))
                continue;
            if (g.values[size_t(n.outputs[0])].type != g.values[size_t(x)].type) continue;
            const graph::Value wv = g.values[size_t(conv.inputs[1])];
            int64_t K = wv.type.shape[0];
            std::vector<float> s = per_channel(g, c, K);
            if (s.empty()) continue;
            std::vector<float> bd(size_t(K), 0.f);
            if (conv.inputs.size() == 3) bd = constant_floats(g.values[size_t(conv.inputs[2])]);
            int nw = conv.inputs[1];
            if (n.op == "multiply") {
                std::vector<float> wd = constant_floats(wv);
                size_t per = wd.size() / size_t(K);
                for (size_t k = 0; k < size_t(K); ++k) {
                    for (size_t j = 0; j < per; ++j) wd[k * per + j] *= s[k];
                    bd[k] *= s[k];
                }
                nw = add_float_constant(g, names.fresh(wv.name + "_scaled"), wv.type.shape, wd);
            } else {
                for (size_t k = 0; k < size_t(K); ++k) bd[k] += s[k];
            }
            int nb = add_float_constant(g, names.fresh(conv.name + "_bias"), {K}, bd);
            conv.inputs = {conv.inputs[0], nw, nb};
            conv.outputs = n.outputs;
            for (int v : n.outputs) g.values[size_t(v)].producer = p;
            keep[i] = false;
            changed = true;
            break;
        }
    }
    return changed ? compact(g, keep) : g;
}

}  // namespace tessera::passes
