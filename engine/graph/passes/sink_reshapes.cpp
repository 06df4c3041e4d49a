// Sinking last-axis-splitting reshapes below elementwise ops (see sink_reshapes.h).
#include "engine/graph/passes/sink_reshapes.h"

#include "engine/core/error.h"
#include "engine/graph/op_registry.h"
#include "engine/graph/passes/graph_rewrite.h"

namespace tessera::passes {

namespace {

using Shape = std::vector<int64_t>;

Shape without_leading_ones(const Shape& s) {
    size_t i = 0;
    while (i + 1 < s.size() && s[i] == 1) ++i;
    return Shape(s.begin() + long(i), s.end());
}

// `out` is `in` with its last axis split in two (and leading 1s added or
// dropped: (64, 3136) -> (1, 64, 56, 56)).
bool splits_last_axis(const Shape& in_shape, const Shape& out_shape) {
    const Shape in = without_leading_ones(in_shape), out = without_leading_ones(out_shape);
    if (in.empty() || out.size() != in.size() + 1) return false;
    for (size_t i = 0; i + 1 < in.size(); ++i)
        if (in[i] != out[i]) return false;
    return out[out.size() - 2] * out.back() == in.back();
}

// The shape operand `o` takes against the unsplit input (of rank in_rank),
// or false when it does not broadcast over both split axes.
bool unsplit_operand(const Shape& o, size_t out_rank, size_t in_rank, Shape& merged) {
    if (o.size() > out_rank) return false;
    const size_t pad = out_rank - o.size();
    auto dim = [&](size_t i) { return i < pad ? int64_t(1) : o[i - pad]; };
    if (dim(out_rank - 2) != 1 || dim(out_rank - 1) != 1) return false;
    merged = o.size() >= 2 ? Shape(o.begin(), o.end() - 1) : o;
    while (merged.size() > in_rank) {
        if (merged.front() != 1) return false;
        merged.erase(merged.begin());
    }
    return true;
}

bool elementwise(const graph::Node& n) {
    const graph::OpDef* def = graph::find_op(n.op);
    return def && n.outputs.size() == 1 &&
           (def->pattern == graph::OpPattern::ElemWise ||
            def->pattern == graph::OpPattern::Broadcast);
}

// One sink of reshape node r below its sole reader; false if it does not apply.
bool sink_one(graph::Graph& g, const std::vector<std::vector<int>>& uses, int r, NameGen& names) {
    const graph::Node& rn = g.nodes[size_t(r)];
    if (rn.op != "reshape" || rn.inputs.size() != 1 || rn.outputs.size() != 1) return false;
    const int x = rn.inputs[0], u = rn.outputs[0];
    const Shape in = g.values[size_t(x)].type.shape, out = g.values[size_t(u)].type.shape;
    if (!splits_last_axis(in, out)) return false;
    const int e = sole_consumer(g, uses, u);
    if (e < 0 || !elementwise(g.nodes[size_t(e)])) return false;
    const graph::Node en = g.nodes[size_t(e)];
    const int y = en.outputs[0];
    if (g.values[size_t(y)].type.shape != out) return false;
    std::vector<int> inputs;
    for (int v : en.inputs) {
        if (v == u) {
            inputs.push_back(x);
            continue;
        }
        const graph::Value& o = g.values[size_t(v)];
        Shape merged;
        if (!unsplit_operand(o.type.shape, out.size(), in.size(), merged)) return false;
        if (merged == o.type.shape) {
            inputs.push_back(v);
        } else if (o.is_constant()) {
            graph::Value c = o;
            c.name = names.fresh(o.name + "_unsplit");
            c.type.shape = merged;
            c.producer = -1;
            inputs.push_back(g.add_value(c));
        } else {
            return false;
        }
    }
    // e' = op(x, ..) of the unsplit shape, then the reshape into e's output;
    // only when the op's own shape rule gives that shape (broadcast_to's
    // comes from its attribute, not from its operand).
    graph::Value mid;
    mid.name = names.fresh(g.values[size_t(y)].name + "_unsplit");
    mid.type = {g.values[size_t(y)].type.dtype, in};
    graph::Node probe = en;
    probe.inputs = inputs;
    try {
        const std::vector<graph::TensorType> types = graph::infer_types(g, probe);
        if (types.size() != 1 || types[0] != mid.type) return false;
    } catch (const UserError&) {
        return false;
    }
    const int m = g.add_value(mid);
    // (Producers are stale after the insertion until compact() renumbers.)
    graph::Node& ep = g.nodes[size_t(e)];
    ep.inputs = inputs;
    ep.outputs = {m};
    graph::Node reshape = g.nodes[size_t(r)];
    reshape.inputs = {m};
    reshape.outputs = {y};
    reshape.name = en.name;
    g.nodes.insert(g.nodes.begin() + e + 1, reshape);
    return true;
}

}  // namespace

graph::Graph sink_reshapes(const graph::Graph& in, const PassContext&) {
    graph::Graph g = in;
    NameGen names(g);
    bool any = false;
    for (bool changed = true; changed;) {
        changed = false;
        const std::vector<std::vector<int>> uses = value_consumers(g);
        for (size_t r = 0; r < g.nodes.size() && !changed; ++r)
            changed = sink_one(g, uses, int(r), names);
        any = any || changed;
    }
    if (!any) return in;
    // The reshapes left without readers go.
    std::vector<bool> keep(g.nodes.size(), true);
    const std::vector<std::vector<int>> uses = value_consumers(g);
    for (size_t i = 0; i < g.nodes.size(); ++i) {
        const graph::Node& n = g.nodes[i];
        if (n.op == "reshape" && n.outputs.size() == 1 && uses[size_t(n.outputs[0])].empty() &&
            !is_graph_output(g, n.outputs[0]))
            keep[i] = false;
    }
    return compact(g, keep);
}

}  // namespace tessera::passes
