// GELU written out in elementwise ops -> nn.gelu (see fuse_gelu.h).
#include "engine/passes/fuse_gelu.h"

#include <cmath>

#include "engine/passes/graph_rewrite.h"

namespace tessera::passes {

namespace {

const double kSqrt2 = std::sqrt(2.0);

class Matcher : PatternMatcher {
public:
    using PatternMatcher::PatternMatcher;

    /// The nodes of x * 0.5 * (1 + erf(x / sqrt 2)) around erf node `e`
    /// (the last one computes the result), and x; empty if it does not hold.
    std::vector<int> at(int e, int* x_out) {
        const graph::Node& erf = node(e);
        if (erf.inputs.size() != 1) return {};
        const int arg = erf.inputs[0];
        const int scale = m_g.values[size_t(arg)].producer;
        if (scale < 0 || sole_consumer(m_g, m_uses, arg) != e) return {};
        const graph::Node& sn = node(scale);
        int x = -1;
        if (sn.op == "divide" && sn.inputs.size() == 2 && is_scalar_constant(m_g, sn.inputs[1], kSqrt2))
            x = sn.inputs[0];
        else if (sn.op == "multiply")
            for (int side = 0; side < 2 && x < 0 && sn.inputs.size() == 2; ++side)
                if (is_scalar_constant(m_g, sn.inputs[size_t(1 - side)], 1 / kSqrt2))
                    x = sn.inputs[size_t(side)];
        if (x < 0) return {};
        std::vector<int> nodes{scale, e};
        // p = erf + 1
        const int add = sole(erf.outputs[0], "add");
        if (add < 0 || !is_scalar_constant(m_g, other_operand(node(add), erf.outputs[0]), 1.0))
            return {};
        nodes.push_back(add);
        const int p = node(add).outputs[0];
        // The products x * p * 0.5 in the groupings exporters write.
        const int m1 = sole(p, "multiply");
        if (m1 < 0) return {};
        nodes.push_back(m1);
        const int o1 = other_operand(node(m1), p);
        if (o1 == x || is_scalar_constant(m_g, o1, 0.5)) {
            // (x * p) * 0.5 or (p * 0.5) * x
            const int m2 = sole(node(m1).outputs[0], "multiply");
            if (m2 < 0) return {};
            const int o2 = other_operand(node(m2), node(m1).outputs[0]);
            if (!(o1 == x ? is_scalar_constant(m_g, o2, 0.5) : o2 == x)) return {};
            nodes.push_back(m2);
        } else {
            // (x * 0.5) * p
            const int h = o1 < 0 ? -1 : m_g.values[size_t(o1)].producer;
            if (h < 0 || node(h).op != "multiply" || sole_consumer(m_g, m_uses, o1) != m1 ||
                other_operand(node(h), x) < 0 ||
                !is_scalar_constant(m_g, other_operand(node(h), x), 0.5))
                return {};
            nodes.insert(nodes.begin(), h);
        }
        // x's other readers may stay; the intermediates may not.
        if (sole_consumer(m_g, m_uses, node(scale).outputs[0]) != e) return {};
        *x_out = x;
        return nodes;
    }

};

}  // namespace

graph::Graph fuse_gelu(const graph::Graph& in, const PassContext&) {
    graph::Graph g = in;
    Matcher match(in);
    std::vector<bool> keep(g.nodes.size(), true);
    bool changed = false;
    for (size_t i = 0; i < in.nodes.size(); ++i) {
        if (in.nodes[i].op != "erf" || !keep[i]) continue;
        int x = -1;
        std::vector<int> nodes = match.at(int(i), &x);
        if (nodes.empty() || in.values[size_t(x)].type.dtype != graph::DType::Float32) continue;
        bool free = true;
        for (int n : nodes) free &= keep[size_t(n)];
        if (!free) continue;
        // The result's node (the last product) becomes nn.gelu(x).
        int last = nodes[0];
        for (int n : nodes) last = std::max(last, n);
        graph::Node& n = g.nodes[size_t(last)];
        if (in.values[size_t(n.outputs[0])].type != in.values[size_t(x)].type) continue;
        n.op = "nn.gelu";
        n.inputs = {x};
        n.attrs.clear();
        for (int k : nodes)
            if (k != last) keep[size_t(k)] = false;
        changed = true;
    }
    return changed ? compact(g, keep) : in;
}

}  // namespace tessera::passes
