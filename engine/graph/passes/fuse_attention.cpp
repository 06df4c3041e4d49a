// Attention written out as matmul / scale / mask / softmax / matmul ->
// nn.attention (see fuse_attention.h).
#include "engine/graph/passes/fuse_attention.h"

#include <algorithm>
#include <memory>

#include "engine/graph/passes/graph_rewrite.h"

namespace tessera::passes {

namespace {

/// Where the fused kernel pays: a head's scores of at least 256 x 256. Below
/// that the three kernels' intermediates stay in L2 and the separate
/// kernels ran faster (BERT-base, 1 thread, AVX-512: sequence 128, 0.39 ms
/// for the three against 0.45 fused; sequence 512, 5.9 against 5.0).
constexpr int64_t kMinScores = 256 * 256;

/// A causal attention over at least this many positions runs in blocks of
/// kCausalBlock query rows, each against the keys up to its last row: the
/// blocks of scores above the diagonal, all masked, are never computed.
constexpr int64_t kCausalMinRows = 1024;
constexpr int64_t kCausalBlock = 256;

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

/// Whether value `v` is a constant bool causal mask for [Sq, Sk] = [n, n]
/// scores: 1s for leading dims, true exactly where key <= query.
bool is_causal_mask(const graph::Value& v, int64_t n) {
    const std::vector<int64_t>& s = v.type.shape;
    if (!v.is_constant() || v.type.dtype != graph::DType::Bool || s.size() < 2 ||
        s[s.size() - 2] != n || s.back() != n || v.type.num_elements() != n * n)
        return false;
    const uint8_t* keep = v.constant->as<uint8_t>();
    for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < n; ++j)
            if ((keep[i * n + j] != 0) != (j <= i)) return false;
    return true;
}

/// Node `a` (nn.attention with a constant causal mask over n >=
/// kCausalMinRows positions) as blocks of kCausalBlock query rows: block c
/// takes Q's rows [cB, (c + 1)B), the first (c + 1)B keys (K^T's columns,
/// V's rows) and its part of the mask; the blocks' outputs are concatenated
/// into a's output. Appends the nodes to `out` (whose values are g's).
void append_causal_blocks(graph::Graph& out, const graph::Node& a, NameGen& names) {
    const std::vector<int64_t> q = out.values[size_t(a.inputs[0])].type.shape;
    const std::vector<int64_t> kt = out.values[size_t(a.inputs[1])].type.shape;
    const std::vector<int64_t> v = out.values[size_t(a.inputs[2])].type.shape;
    const size_t r = q.size();
    const int64_t n = q[r - 2];
    const uint8_t* keep = out.values[size_t(a.inputs[3])].constant->as<uint8_t>();
    auto add = [&](const std::string& hint, graph::TensorType t) {
        graph::Value val;
        val.name = names.fresh(hint);
        val.type = std::move(t);
        return out.add_value(std::move(val));
    };
    // x's elements [begin, end) along `axis` (all of the other dims).
    auto slice = [&](int x, const std::vector<int64_t>& shape, size_t axis, int64_t begin,
                     int64_t end, const std::string& hint) {
        if (begin == 0 && end == shape[axis]) return x;
        std::vector<int64_t> b(shape.size(), 0), e = shape, st(shape.size(), 1);
        b[axis] = begin;
        e[axis] = end;
        std::vector<int64_t> sliced = shape;
        sliced[axis] = end - begin;
        graph::Node n;
        n.op = "strided_slice";
        n.name = a.name;
        n.inputs = {x};
        n.attrs = {{"begin", b}, {"end", e}, {"strides", st}};
        const int y = add(hint, {out.values[size_t(x)].type.dtype, sliced});
        n.outputs = {y};
        out.add_node(std::move(n));
        return y;
    };
    std::vector<int> blocks;
    for (int64_t c = 0; c * kCausalBlock < n; ++c) {
        const int64_t r0 = c * kCausalBlock, r1 = std::min(n, r0 + kCausalBlock);
        graph::Node b = a;
        b.inputs = {slice(a.inputs[0], q, r - 2, r0, r1, a.name + "_q"),
                    slice(a.inputs[1], kt, r - 1, 0, r1, a.name + "_kt"),
                    slice(a.inputs[2], v, r - 2, 0, r1, a.name + "_v")};
        // The block's mask: rows [r0, r1) of the first r1 columns.
        graph::Value m;
        m.name = names.fresh(a.name + "_causal");
        m.type = {graph::DType::Bool, std::vector<int64_t>(r - 2, 1)};
        m.type.shape.insert(m.type.shape.end(), {r1 - r0, r1});
        auto data = std::make_shared<graph::ConstantData>();
        data->bytes.resize(size_t((r1 - r0) * r1));
        for (int64_t i = r0; i < r1; ++i)
            for (int64_t j = 0; j < r1; ++j)
                data->bytes[size_t((i - r0) * r1 + j)] = keep[i * n + j];
        m.constant = std::move(data);
        b.inputs.push_back(out.add_value(std::move(m)));
        std::vector<int64_t> rows = q;
        rows[r - 2] = r1 - r0;
        rows[r - 1] = v[r - 1];
        b.outputs = {add(a.name + "_rows", {graph::DType::Float32, rows})};
        out.add_node(b);
        blocks.push_back(b.outputs[0]);
    }
    graph::Node cat;
    cat.op = "concatenate";
    cat.name = a.name;
    cat.inputs = blocks;
    cat.attrs = {{"axis", int64_t(r - 2)}};
    cat.outputs = a.outputs;
    out.add_node(std::move(cat));
}

/// Every causal attention over at least kCausalMinRows positions in blocks
/// (append_causal_blocks); `g` itself when there is none.
graph::Graph split_causal(const graph::Graph& g) {
    auto causal = [&](const graph::Node& n) {
        if (n.op != "nn.attention" || n.inputs.size() != 4 || !n.attrs.count("mask_fill"))
            return false;
        const std::vector<int64_t>& q = g.values[size_t(n.inputs[0])].type.shape;
        const std::vector<int64_t>& kt = g.values[size_t(n.inputs[1])].type.shape;
        const int64_t rows = q[q.size() - 2];
        return rows >= kCausalMinRows && kt.back() == rows &&
               is_causal_mask(g.values[size_t(n.inputs[3])], rows);
    };
    if (std::none_of(g.nodes.begin(), g.nodes.end(), causal)) return g;
    graph::Graph out;
    out.name = g.name;
    out.values = g.values;
    for (graph::Value& v : out.values) v.producer = -1;
    out.inputs = g.inputs;
    out.outputs = g.outputs;
    NameGen names(g);
    for (const graph::Node& n : g.nodes) {
        if (causal(n))
            append_causal_blocks(out, n, names);
        else
            out.add_node(n);
    }
    return compact(out, std::vector<bool>(out.nodes.size(), true));
}

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
    return changed ? split_causal(compact(g, keep)) : in;
}

}  // namespace tessera::passes
