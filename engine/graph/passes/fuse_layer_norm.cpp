// LayerNorm written out in elementwise ops -> nn.layer_norm (see fuse_layer_norm.h).
#include "engine/graph/passes/fuse_layer_norm.h"

#include <optional>

#include "engine/graph/passes/graph_rewrite.h"

namespace tessera::passes {

namespace {

/// The normalized trailing axes of reduce_mean node `n` over a rank-`rank`
/// input: the first of them, or -1 unless they are the last axes, kept.
int64_t trailing_axis(const graph::Node& n, int64_t rank) {
    if (n.op != "reduce_mean" || n.attr_int("keepdims", 1) == 0 || n.inputs.size() != 1) return -1;
    std::vector<int64_t> axes = n.attr_ints("axes");
    if (axes.empty()) return -1;
    std::vector<bool> seen(size_t(rank), false);
    for (int64_t a : axes) {
        if (a < 0) a += rank;
        if (a < 0 || a >= rank || seen[size_t(a)]) return -1;
        seen[size_t(a)] = true;
    }
    const int64_t first = rank - int64_t(axes.size());
    for (int64_t a = first; a < rank; ++a)
        if (!seen[size_t(a)]) return -1;
    return first;
}

/// One matched LayerNorm: the nodes it covers and what replaces them.
struct Match {
    std::vector<int> nodes;  // every matched node; the last one becomes nn.layer_norm
    int x = -1, gamma = -1, beta = -1;
    int64_t axis = 0;
    double eps = 0;
};

class Matcher : PatternMatcher {
public:
    using PatternMatcher::PatternMatcher;

    /// The LayerNorm whose first mean is node `r`, if the pattern holds.
    std::optional<Match> at(int r) {
        const graph::Node& mean = m_g.nodes[size_t(r)];
        Match m;
        m.x = mean.inputs.empty() ? -1 : mean.inputs[0];
        if (m.x < 0) return std::nullopt;
        const graph::TensorType& xt = m_g.values[size_t(m.x)].type;
        if (xt.dtype != graph::DType::Float32) return std::nullopt;
        const int64_t rank = int64_t(xt.shape.size());
        m.axis = trailing_axis(mean, rank);
        if (m.axis < 0) return std::nullopt;
        m.nodes.push_back(r);
        // d = x - m
        int sub = sole(mean.outputs[0], "subtract");
        if (sub < 0 || node(sub).inputs[0] != m.x || node(sub).inputs[1] != mean.outputs[0])
            return std::nullopt;
        m.nodes.push_back(sub);
        const int d = node(sub).outputs[0];
        // The readers of d: the square, and the division (or product).
        const auto& readers = m_uses[size_t(d)];
        if (is_graph_output(m_g, d) || readers.size() != 2) return std::nullopt;
        int sq = -1, div = -1;
        for (int c : readers) {
            const graph::Node& n = node(c);
            if ((n.op == "power" && n.inputs[0] == d && is_scalar_constant(m_g, n.inputs[1], 2.0, 0)) ||
                (n.op == "multiply" && n.inputs.size() == 2 && n.inputs[0] == d && n.inputs[1] == d))
                sq = c;
            else if (n.op == "divide" || n.op == "multiply")
                div = c;
        }
        if (sq < 0 || div < 0) return std::nullopt;
        m.nodes.push_back(sq);
        const int var = sole(node(sq).outputs[0], "reduce_mean");
        if (var < 0 || trailing_axis(node(var), rank) != m.axis ||
            node(var).attr_ints("axes").size() != mean.attr_ints("axes").size())
            return std::nullopt;
        m.nodes.push_back(var);
        const int add = sole(node(var).outputs[0], "add");
        if (add < 0) return std::nullopt;
        const int eps = other_operand(node(add), node(var).outputs[0]);
        if (eps < 0 || !is_float_constant(m_g, eps) || m_g.values[size_t(eps)].type.num_elements() != 1)
            return std::nullopt;
        m.eps = double(constant_floats(m_g.values[size_t(eps)]).at(0));
        if (!(m.eps >= 0)) return std::nullopt;
        m.nodes.push_back(add);
        const int sqrt = sole(node(add).outputs[0], "sqrt");
        if (sqrt < 0) return std::nullopt;
        m.nodes.push_back(sqrt);
        int s = node(sqrt).outputs[0];
        if (node(div).op == "multiply") {  // d * reciprocal(sqrt(..))
            const int rec = sole(s, "reciprocal");
            if (rec < 0) return std::nullopt;
            m.nodes.push_back(rec);
            s = node(rec).outputs[0];
            if (other_operand(node(div), d) != s) return std::nullopt;
        } else if (node(div).inputs[0] != d || node(div).inputs[1] != s || sole(s, "divide") != div) {
            return std::nullopt;
        }
        m.nodes.push_back(div);
        // Optional constant scale and shift over the normalized shape.
        int y = node(div).outputs[0];
        if (int mul = sole(y, "multiply"); mul >= 0 && affine_param(other_operand(node(mul), y), m)) {
            m.gamma = other_operand(node(mul), y);
            m.nodes.push_back(mul);
            y = node(mul).outputs[0];
        }
        if (int b = sole(y, "add"); b >= 0 && affine_param(other_operand(node(b), y), m)) {
            m.beta = other_operand(node(b), y);
            m.nodes.push_back(b);
        }
        return m;
    }

private:
    /// A float constant that broadcasts over the normalized (trailing) axes
    /// alone: every dimension before them 1.
    bool affine_param(int v, const Match& m) const {
        if (v < 0 || !is_float_constant(m_g, v)) return false;
        const auto& xs = m_g.values[size_t(m.x)].type.shape;
        const auto& ps = m_g.values[size_t(v)].type.shape;
        if (ps.size() > xs.size()) return false;
        const size_t off = xs.size() - ps.size();
        for (size_t i = 0; i < ps.size(); ++i) {
            const bool normalized = int64_t(off + i) >= m.axis;
            if (ps[i] != 1 && (!normalized || ps[i] != xs[off + i])) return false;
        }
        return true;
    }
};

/// Constant `v` expanded to the normalized shape (it broadcasts to it).
std::vector<float> expand_to(const graph::Graph& g, int v, const std::vector<int64_t>& norm,
                             float fill) {
    int64_t n = 1;
    for (int64_t d : norm) n *= d;
    std::vector<float> out(size_t(n), fill);
    if (v < 0) return out;
    const std::vector<float> src = constant_floats(g.values[size_t(v)]);
    std::vector<int64_t> ps = g.values[size_t(v)].type.shape;
    while (ps.size() < norm.size()) ps.insert(ps.begin(), 1);
    ps.erase(ps.begin(), ps.end() - long(norm.size()));
    for (int64_t i = 0; i < n; ++i) {
        int64_t rem = i, src_i = 0, stride = 1;
        for (size_t d = norm.size(); d-- > 0;) {
            const int64_t c = rem % norm[d];
            rem /= norm[d];
            if (ps[d] != 1) src_i += c * stride;
            stride *= ps[d];
        }
        out[size_t(i)] = src[size_t(src_i)];
    }
    return out;
}

}  // namespace

graph::Graph fuse_layer_norm(const graph::Graph& in, const PassContext&) {
    graph::Graph g = in;
    Matcher match(in);
    NameGen names(g);
    std::vector<bool> keep(g.nodes.size(), true);
    bool changed = false;
    for (size_t i = 0; i < in.nodes.size(); ++i) {
        if (in.nodes[i].op != "reduce_mean" || !keep[i]) continue;
        std::optional<Match> m = match.at(int(i));
        if (!m) continue;
        bool free = true;
        for (int n : m->nodes) free &= keep[size_t(n)];
        if (!free) continue;
        const auto& xs = in.values[size_t(m->x)].type.shape;
        const std::vector<int64_t> norm(xs.begin() + m->axis, xs.end());
        // gamma and beta as constants of the normalized shape (the op's form).
        const int last = m->nodes.back();
        const std::string base = in.nodes[size_t(last)].name;
        const int gamma = add_float_constant(g, names.fresh(base + "_gamma"), norm,
                                             expand_to(in, m->gamma, norm, 1.f));
        std::vector<int> inputs{m->x, gamma};
        if (m->beta >= 0)
            inputs.push_back(add_float_constant(g, names.fresh(base + "_beta"), norm,
                                                expand_to(in, m->beta, norm, 0.f)));
        graph::Node& n = g.nodes[size_t(last)];
        n.op = "nn.layer_norm";
        n.inputs = inputs;
        n.attrs.clear();
        n.attrs["axis"] = m->axis;
        n.attrs["epsilon"] = m->eps;
        for (int k : m->nodes)
            if (k != last) keep[size_t(k)] = false;
        changed = true;
    }
    return changed ? compact(g, keep) : in;
}

}  // namespace tessera::passes
