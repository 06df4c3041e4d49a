// GELU written out in elementwise ops -> nn.gelu (see fuse_gelu.h).
#include "engine/graph/passes/fuse_gelu.h"

#include <cmath>

#include "engine/graph/passes/graph_rewrite.h"

namespace tessera::passes {

namespace {

const double kSqrt2 = std::sqrt(2.0);
const double kSqrt2OverPi = std::sqrt(2.0 / M_PI);
const double kTanhCubic = 0.044715;

class Matcher : PatternMatcher {
public:
    using PatternMatcher::PatternMatcher;

    /// The nodes of x * 0.5 * (1 + f(x)) around node `e` (erf or tanh, with
    /// f(x) = erf(x / sqrt 2) or tanh(sqrt(2 / pi) (x + 0.044715 x^3))), the
    /// last one computing the result, and x; empty if it does not hold.
    std::vector<int> at(int e, int* x_out) {
        const graph::Node& act = node(e);
        if (act.inputs.size() != 1 || sole_consumer(m_g, m_uses, act.inputs[0]) != e) return {};
        std::vector<int> nodes;
        const int x = act.op == "erf" ? erf_argument(act.inputs[0], nodes)
                                      : tanh_argument(act.inputs[0], nodes);
        if (x < 0) return {};
        nodes.push_back(e);
        // p = f(x) + 1
        const int add = sole(act.outputs[0], "add");
        if (add < 0 || !is_scalar_constant(m_g, other_operand(node(add), act.outputs[0]), 1.0))
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
                !is_scalar_constant(m_g, other_operand(node(h), x), 0.5))
                return {};
            nodes.push_back(h);
        }
        *x_out = x;
        return nodes;
    }

private:
    /// x when `arg` = x / sqrt 2 or x * (1 / sqrt 2) (its node appended), else -1.
    int erf_argument(int arg, std::vector<int>& nodes) const {
        const int n = m_g.values[size_t(arg)].producer;
        if (n < 0 || node(n).inputs.size() != 2) return -1;
        const graph::Node& sn = node(n);
        int x = -1;
        if (sn.op == "divide" && is_scalar_constant(m_g, sn.inputs[1], kSqrt2)) x = sn.inputs[0];
        if (sn.op == "multiply") x = scaled(sn, 1 / kSqrt2);
        if (x >= 0) nodes.push_back(n);
        return x;
    }

    /// x when `arg` = sqrt(2 / pi) * (x + 0.044715 * x^3), x^3 as power(x, 3)
    /// or x * x * x (its nodes appended), else -1.
    int tanh_argument(int arg, std::vector<int>& nodes) const {
        const int outer = m_g.values[size_t(arg)].producer;
        if (outer < 0 || node(outer).op != "multiply") return -1;
        const int sum = scaled(node(outer), kSqrt2OverPi);
        const int add = sum < 0 || sole_consumer(m_g, m_uses, sum) != outer ? -1 : m_g.values[size_t(sum)].producer;
        if (add < 0 || node(add).op != "add" || node(add).inputs.size() != 2) return -1;
        for (int side = 0; side < 2; ++side) {
            const int x = node(add).inputs[size_t(side)];
            const int cubic = node(add).inputs[size_t(1 - side)];
            const int cm = m_g.values[size_t(cubic)].producer;
            if (cm < 0 || node(cm).op != "multiply" || sole_consumer(m_g, m_uses, cubic) != add) continue;
            const int cube = scaled(node(cm), kTanhCubic);
            std::vector<int> cube_nodes;
            if (cube < 0 || sole_consumer(m_g, m_uses, cube) != cm || !is_cube_of(cube, x, cube_nodes))
                continue;
            nodes.insert(nodes.end(), cube_nodes.begin(), cube_nodes.end());
            nodes.insert(nodes.end(), {cm, add, outer});
            return x;
        }
        return -1;
    }

    /// The operand of product `n` whose other operand is the constant `c`, or -1.
    int scaled(const graph::Node& n, double c) const {
        if (n.op != "multiply" || n.inputs.size() != 2) return -1;
        for (int side = 0; side < 2; ++side)
            if (is_scalar_constant(m_g, n.inputs[size_t(1 - side)], c)) return n.inputs[size_t(side)];
        return -1;
    }

    /// Whether value `v` is power(x, 3) or (x * x) * x (nodes appended).
    bool is_cube_of(int v, int x, std::vector<int>& nodes) const {
        const int n = m_g.values[size_t(v)].producer;
        if (n < 0 || node(n).inputs.size() != 2) return false;
        const graph::Node& c = node(n);
        if (c.op == "power" && c.inputs[0] == x && is_scalar_constant(m_g, c.inputs[1], 3.0, 0)) {
            nodes.push_back(n);
            return true;
        }
        if (c.op != "multiply" || other_operand(c, x) < 0) return false;
        const int sq = other_operand(c, x);
        const int s = m_g.values[size_t(sq)].producer;
        if (s < 0 || sole_consumer(m_g, m_uses, sq) != n || node(s).op != "multiply" ||
            node(s).inputs[0] != x || node(s).inputs[1] != x)
            return false;
        nodes.insert(nodes.end(), {s, n});
        return true;
    }
};


}  // namespace

graph::Graph fuse_gelu(const graph::Graph& in, const PassContext&) {
    graph::Graph g = in;
    Matcher match(in);
    std::vector<bool> keep(g.nodes.size(), true);
    bool changed = false;
    for (size_t i = 0; i < in.nodes.size(); ++i) {
        if ((in.nodes[i].op != "erf" && in.nodes[i].op != "tanh") || !keep[i]) continue;
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
        if (in.nodes[i].op == "tanh") n.attrs["approximate"] = std::string("tanh");
        for (int k : nodes)
            if (k != last) keep[size_t(k)] = false;
        changed = true;
    }
    return changed ? compact(g, keep) : in;
}

}  // namespace tessera::passes
