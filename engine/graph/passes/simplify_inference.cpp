// Inference simplification (Relay's SimplifyInference plus BN folding):
// batch norm into conv2d/gemm weights or into x * scale + shift, and removal
// of no-op reshapes (what Identity and Dropout import as), and x ^ 2 as x * x.
#include "engine/graph/passes/simplify_inference.h"

#include <cmath>

#include "engine/graph/passes/graph_rewrite.h"

namespace tessera::passes {

namespace {

// Removes reshapes to the input's own type and merges reshape chains.
graph::Graph drop_noop_reshapes(const graph::Graph& in, bool& changed) {
    graph::Graph g = in;
    std::vector<int> replace(g.values.size());
    for (size_t v = 0; v < replace.size(); ++v) replace[v] = int(v);
    std::vector<bool> keep(g.nodes.size(), true);
    for (size_t i = 0; i < g.nodes.size(); ++i) {
        graph::Node& n = g.nodes[i];
        for (int& v : n.inputs) v = replace[size_t(v)];
        if (n.op != "reshape" || n.inputs.size() != 1 || n.outputs.size() != 1) continue;
        int p = g.values[size_t(n.inputs[0])].producer;
        if (p >= 0 && keep[size_t(p)] && g.nodes[size_t(p)].op == "reshape") {
            n.inputs[0] = g.nodes[size_t(p)].inputs[0];  // reshape(reshape(x)) = reshape(x)
            changed = true;
        }
        int x = n.inputs[0], o = n.outputs[0];
        if (g.values[size_t(x)].type == g.values[size_t(o)].type && !is_graph_output(g, o)) {
            replace[size_t(o)] = x;
            keep[i] = false;
            changed = true;
        }
    }
    if (!changed) return in;
    // Replacements were applied to later nodes in order; the graph outputs are
    // never replaced (nodes producing them are kept).
    return compact(g, keep);
}

struct BnParams {
    std::vector<float> scale, shift;  // y = x * scale[c] + shift[c]
};

bool bn_params(const graph::Graph& g, const graph::Node& bn, BnParams& p) {
    if (bn.inputs.size() != 5) return false;
    std::vector<std::vector<float>> v;
    for (size_t i = 1; i < 5; ++i) {
        if (!is_float_constant(g, bn.inputs[i])) return false;
        v.push_back(constant_floats(g.values[size_t(bn.inputs[i])]));
    }
    double eps = bn.attr_float("epsilon", 1e-5);
    size_t c = v[0].size();
    p.scale.resize(c);
    p.shift.resize(c);
    for (size_t k = 0; k < c; ++k) {
        double s = double(v[0][k]) / std::sqrt(double(v[3][k]) + eps);
        p.scale[k] = float(s);
        p.shift[k] = float(double(v[1][k]) - double(v[2][k]) * s);
    }
    return true;
}

// conv2d(x, W[, b]) -> BN  ==>  conv2d(x, W * s, b * s + t).
bool fold_into_conv(graph::Graph& g, graph::Node& conv, const BnParams& p, NameGen& names) {
    if (conv.op != "nn.conv2d" || conv.inputs.size() < 2) return false;
    int w = conv.inputs[1];
    if (!is_float_constant(g, w)) return false;
    if (conv.inputs.size() == 3 && !is_float_constant(g, conv.inputs[2])) return false;
    const graph::Value wv = g.values[size_t(w)];
    int64_t K = wv.type.shape[0];
    if (K != int64_t(p.scale.size())) return false;
    std::vector<float> wd = constant_floats(wv);
    size_t per = wd.size() / size_t(K);
    for (size_t k = 0; k < size_t(K); ++k)
        for (size_t j = 0; j < per; ++j) wd[k * per + j] *= p.scale[k];
    std::vector<float> bd(size_t(K), 0.f);
    if (conv.inputs.size() == 3) bd = constant_floats(g.values[size_t(conv.inputs[2])]);
    for (size_t k = 0; k < size_t(K); ++k) bd[k] = bd[k] * p.scale[k] + p.shift[k];
    int nw = add_float_constant(g, names.fresh(wv.name + "_bn"), wv.type.shape, wd);
    int nb = add_float_constant(g, names.fresh(conv.name + "_bn_bias"), {K}, bd);
    conv.inputs = {conv.inputs[0], nw, nb};
    return true;
}

// gemm(A, B[, C]) -> BN over axis 1  ==>  gemm(A, B * s, beta * C * s + t) with beta = 1.
bool fold_into_gemm(graph::Graph& g, graph::Node& gemm, const BnParams& p, NameGen& names) {
    if (gemm.op != "nn.gemm" || gemm.inputs.size() < 2 || !is_float_constant(g, gemm.inputs[1]))
        return false;
    const graph::Value bv = g.values[size_t(gemm.inputs[1])];
    bool tb = gemm.attr_int("transB", 0) != 0;
    int64_t N = tb ? bv.type.shape[0] : bv.type.shape[1];
    if (N != int64_t(p.scale.size())) return false;
    std::vector<float> cd(size_t(N), 0.f);
    if (gemm.inputs.size() == 3) {
        const graph::Value& cv = g.values[size_t(gemm.inputs[2])];
        bool vec = cv.type.shape == std::vector<int64_t>{N} ||
                   cv.type.shape == std::vector<int64_t>{1, N};
        if (!is_float_constant(g, gemm.inputs[2]) || !vec) return false;
        cd = constant_floats(cv);
        double beta = gemm.attr_float("beta", 1.0);
        for (float& c : cd) c = float(beta * c);
    }
    std::vector<float> bd = constant_floats(bv);
    int64_t rows = bv.type.shape[0], cols = bv.type.shape[1];
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c) bd[size_t(r * cols + c)] *= p.scale[size_t(tb ? r : c)];
    for (size_t n = 0; n < size_t(N); ++n) cd[n] = cd[n] * p.scale[n] + p.shift[n];
    int nb = add_float_constant(g, names.fresh(bv.name + "_bn"), bv.type.shape, bd);
    int nc = add_float_constant(g, names.fresh(gemm.name + "_bn_bias"), {N}, cd);
    gemm.inputs = {gemm.inputs[0], nb, nc};
    gemm.attrs["beta"] = 1.0;
    return true;
}

graph::Graph rewrite_batch_norms(const graph::Graph& in, bool& changed) {
    graph::Graph g = in;
    auto uses = value_consumers(in);
    NameGen names(g);
    std::vector<graph::Node> out;
    std::vector<int> producer(g.values.size(), -1);  // index into `out`
    for (const graph::Node& orig : in.nodes) {
        graph::Node n = orig;
        BnParams p;
        if (n.op == "nn.batch_norm" && bn_params(g, n, p)) {
            int x = n.inputs[0];
            int pi = producer[size_t(x)];
            bool sole = uses[size_t(x)].size() == 1 && !is_graph_output(g, x);
            if (pi >= 0 && sole &&
                (fold_into_conv(g, out[size_t(pi)], p, names) ||
                 fold_into_gemm(g, out[size_t(pi)], p, names))) {
                out[size_t(pi)].outputs = n.outputs;
                producer.resize(g.values.size(), -1);
                for (int v : n.outputs) producer[size_t(v)] = pi;
                changed = true;
                continue;
            }
            // x * scale + shift with per-channel constants of shape (C, 1, ..., 1).
            const graph::TensorType xt = g.values[size_t(x)].type;
            std::vector<int64_t> cshape(xt.shape.size() - 1, 1);
            cshape[0] = xt.shape[1];
            int s = add_float_constant(g, names.fresh(n.name + "_scale"), cshape, p.scale);
            int t = add_float_constant(g, names.fresh(n.name + "_shift"), cshape, p.shift);
            graph::Value mid;
            mid.name = names.fresh(n.name + "_scaled");
            mid.type = xt;
            int m = g.add_value(mid);
            graph::Node mul{"multiply", n.name + "_mul", {}, {x, s}, {m}};
            graph::Node add{"add", n.name, {}, {m, t}, n.outputs};
            out.push_back(std::move(mul));
            out.push_back(std::move(add));
            changed = true;
            producer.resize(g.values.size(), -1);
            for (int v : out.back().outputs) producer[size_t(v)] = int(out.size()) - 1;
            continue;
        }
        out.push_back(std::move(n));
        producer.resize(g.values.size(), -1);
        for (int v : out.back().outputs) producer[size_t(v)] = int(out.size()) - 1;
    }
    if (!changed) return in;
    g.nodes = std::move(out);
    return compact(g, std::vector<bool>(g.nodes.size(), true));
}

// x ^ 2 with a constant exponent as x * x (exact, as powf is). A constant
// exponent reaches the kernel as a buffer, so each element called a libm
// pow: T5's RMSNorm (traceforge-title-model's encoder, 33 x 512) took 0.12
// ms per layer, 17 of them 2 of its 4.7 ms.
graph::Graph square_powers(const graph::Graph& in, bool& changed) {
    graph::Graph g = in;
    for (graph::Node& n : g.nodes) {
        if (n.op != "power" || n.inputs.size() != 2 || n.outputs.size() != 1 ||
            !is_scalar_constant(g, n.inputs[1], 2.0, 0) ||
            !(g.values[size_t(n.inputs[0])].type == g.values[size_t(n.outputs[0])].type))
            continue;
        n.op = "multiply";
        n.inputs[1] = n.inputs[0];
        changed = true;
    }
    return changed ? g : in;
}

}  // namespace

graph::Graph simplify_inference(const graph::Graph& in, const PassContext&) {
    bool reshapes_changed = false, bn_changed = false, squares_changed = false;
    graph::Graph g = drop_noop_reshapes(in, reshapes_changed);
    g = square_powers(g, squares_changed);
    return rewrite_batch_norms(g, bn_changed);
}

}  // namespace tessera::passes
