// Attention written out as matmul / scale / mask / softmax / matmul ->
// nn.attention (see fuse_attention.h).
#include "engine/graph/passes/fuse_attention.h"

#include <algorithm>

#include "engine/graph/passes/graph_rewrite.h"

namespace tessera::passes {

namespace {

/// Where the fused kernel pays: a head's scores of at least 256 x 256. Below
/// that the three kernels' intermediates stay in L2 and the separate
/// kernels ran faster (BERT-base, 1 thread, AVX-512: sequence 128, 0.39 ms
/// for the three against 0.45 fused; sequence 512, 5.9 against 5.0).
constexpr int64_t kMinScores = 256 * 256;

struct Match {
    std::vector<int> nodes;  // the matched nodes, the last matmul last
    int q = -1, kt = -1, v = -1, mask = -1;
    double scale = 1.0;
    bool where = false;  // mask is a condition: where(mask, scores, fill)
    double fill = 0;
};

class Matcher : PatternMatcher {
public:
    using PatternMatcher::PatternMatcher;

    /// The attention around softmax node `sm`, or an empty match.
    Match at(int sm) const {
        Match m;
        const graph::Node& softmax = node(sm);
        const int x = softmax.inputs.at(0);
        const std::vector<int64_t>& scores = type(x).shape;
        const int64_t rank = int64_t(scores.size());
        int64_t axis = softmax.attr_int("axis", rank - 1);
        if (axis < 0) axis += rank;
        if (rank < 2 || axis != rank - 1 || type(x).dtype != graph::DType::Float32) return {};
        // Backwards from the softmax's input: [add mask | where(mask, s, fill)]
        // <- [scale] <- matmul.
        int s = x;
        std::vector<int> nodes;
        if (const int add = producer_of(s, sm); add >= 0 && node(add).op == "add") {
            const graph::Node& a = node(add);
            for (int side = 0; side < 2 && m.mask < 0; ++side) {
                const int from = a.inputs[size_t(side)], other = a.inputs[size_t(1 - side)];
                const int p = producer_of(from, add);
                if (p >= 0 && (node(p).op == "nn.matmul" || is_scaling(node(p))) &&
                    mask_fits(other, scores, graph::DType::Float32)) {
                    m.mask = other;
                    s = from;
                    nodes.push_back(add);
                }
            }
            if (m.mask < 0) return {};
        } else if (const int w = producer_of(s, sm); w >= 0 && node(w).op == "where") {
            // A causal mask as decoders write it: where(keep, scores, -inf or a
            // large negative number).
            const graph::Node& wn = node(w);
            const int fill = wn.inputs.at(2);
            if (!is_float_constant(m_g, fill) || type(fill).num_elements() != 1 ||
                !mask_fits(wn.inputs[0], scores, graph::DType::Bool))
                return {};
            m.mask = wn.inputs[0];
            m.fill = constant_floats(m_g.values[size_t(fill)]).at(0);
            m.where = true;
            s = wn.inputs[1];
            nodes.push_back(w);
        }
        int qk = producer_of(s, nodes.empty() ? sm : nodes.back());
        if (qk >= 0 && is_scaling(node(qk))) {
            const graph::Node& sc = node(qk);
            const double c = constant_floats(m_g.values[size_t(sc.inputs[1])]).at(0);
            if (c == 0) return {};
            m.scale = sc.op == "multiply" ? c : 1.0 / c;
            nodes.push_back(qk);
            qk = producer_of(sc.inputs[0], qk);
        }
        if (qk < 0 || node(qk).op != "nn.matmul") return {};
        // The mask and the scale do not grow the scores (no broadcasting
        // past the product's batch dims).
        if (type(node(qk).outputs[0]).shape != scores) return {};
        nodes.push_back(qk);
        m.q = node(qk).inputs[0];
        m.kt = node(qk).inputs[1];
        nodes.push_back(sm);
        const int pv = sole(softmax.outputs[0], "nn.matmul");
        if (pv < 0 || node(pv).inputs[0] != softmax.outputs[0]) return {};
        m.v = node(pv).inputs[1];
        nodes.push_back(pv);
        if (!chains(m)) return {};
        m.nodes = nodes;
        return m;
    }

private:
    const graph::TensorType& type(int v) const { return m_g.values[size_t(v)].type; }

    /// The producer of `v` when `v`'s only reader is node `reader`, else -1.
    int producer_of(int v, int reader) const {
        return sole_consumer(m_g, m_uses, v) == reader ? m_g.values[size_t(v)].producer : -1;
    }

    /// x * c or x / c with c a float32 scalar constant (as input 1).
    bool is_scaling(const graph::Node& n) const {
        return (n.op == "multiply" || n.op == "divide") && n.inputs.size() == 2 &&
               is_float_constant(m_g, n.inputs[1]) && type(n.inputs[1]).num_elements() == 1 &&
               type(n.inputs[0]).shape.size() >= type(n.inputs[1]).shape.size();
    }

    /// A value of `dtype` that broadcasts to `scores` without growing it.
    bool mask_fits(int v, const std::vector<int64_t>& scores, graph::DType dtype) const {
        const auto& ms = type(v).shape;
        if (type(v).dtype != dtype || ms.size() > scores.size()) return false;
        for (size_t i = 0; i < ms.size(); ++i) {
            const int64_t want = scores[scores.size() - ms.size() + i];
            if (ms[i] != 1 && ms[i] != want) return false;
        }
        return true;
    }

    /// Q [.., Sq, D] x K^T [.., D, Sk] x V [.., Sk, Dv], one rank, one batch.
    bool chains(const Match& m) const {
        const auto& q = type(m.q).shape;
        const auto& k = type(m.kt).shape;
        const auto& v = type(m.v).shape;
        for (int x : {m.q, m.kt, m.v})
            if (type(x).dtype != graph::DType::Float32) return false;
        const size_t r = q.size();
        if (r < 2 || k.size() != r || v.size() != r) return false;
        if (!std::equal(q.begin(), q.end() - 2, k.begin()) ||
            !std::equal(q.begin(), q.end() - 2, v.begin()))
            return false;
        return k[r - 2] == q[r - 1] && v[r - 2] == k[r - 1] && q[r - 2] * k[r - 1] >= kMinScores;
    }
};

}  // namespace

graph::Graph fuse_attention(const graph::Graph& in, const PassContext&) {
    graph::Graph g = in;
    Matcher match(in);
    std::vector<bool> keep(g.nodes.size(), true);
    bool changed = false;
    for (size_t i = 0; i < in.nodes.size(); ++i) {
        if (in.nodes[i].op != "nn.softmax" || !keep[i]) continue;
        Match m = match.at(int(i));
        if (m.nodes.empty()) continue;
        bool free = true;
        for (int n : m.nodes) free &= keep[size_t(n)];
        if (!free) continue;
        // The second matmul's node becomes the attention (its output stays).
        graph::Node& n = g.nodes[size_t(m.nodes.back())];
        n.op = "nn.attention";
        n.inputs = {m.q, m.kt, m.v};
        if (m.mask >= 0) n.inputs.push_back(m.mask);
        n.attrs.clear();
        if (m.scale != 1.0) n.attrs["scale"] = m.scale;
        if (m.where) n.attrs["mask_fill"] = m.fill;
        for (int k : m.nodes)
            if (k != m.nodes.back()) keep[size_t(k)] = false;
        changed = true;
    }
    return changed ? compact(g, keep) : in;
}

}  // namespace tessera::passes
