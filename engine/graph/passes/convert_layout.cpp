// convert_layout: NCHW conv2d (dense and depthwise) -> blocked
// nn.conv2d_NCHWc with packed constant weights; blocked values flow through
// convs, elementwise ops and pools, and layout_transform nodes are inserted
// only where an NCHW reader needs one.
#include "engine/graph/passes/convert_layout.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "engine/core/error.h"
#include "engine/graph/passes/graph_rewrite.h"

namespace tessera::passes {

namespace {

using graph::Graph;
using graph::Node;
using graph::TensorType;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

std::string layout_name(int64_t block) { return "NCHW" + std::to_string(block) + "c"; }

/// The new graph being built: every original value keeps its index; its
/// blocked twin (if any) is a new value.
struct Rewriter {
    const Graph& in;
    Graph out;
    NameGen names;
    std::vector<int> blocked;    // original value -> blocked twin, -1 if none
    std::vector<bool> has_nchw;  // the original value is (or will be) computed
    // What the padded channels (past the logical ones, to a whole block) of a
    // blocked value hold: 0 unless listed. Convolutions read them times zero
    // weights, pools and elementwise ops keep them within their lanes, and an
    // unpack drops them, so any finite value there is harmless; an
    // elementwise op runs blocked when it keeps them finite (x + 3 then
    // clip(0, 6) of a hard swish: 3; x * sigmoid(x) of SiLU: 0.5, then 0).
    std::map<int, double> pads;
    // The original value flows, through elementwise ops alone, into a
    // convolution or pool that runs blocked (see reaches_blocked_reader).
    std::vector<bool> feeds_blocked;
    // Blocked values a convolution computes, directly or through elementwise
    // ops: an elementwise op on them fuses into the convolution's epilogue.
    std::set<int> epilogue;
    bool changed = false;

    explicit Rewriter(const Graph& g)
        : in(g), out(g), names(g), blocked(g.values.size(), -1), has_nchw(g.values.size(), false) {
        out.nodes.clear();
        for (graph::Value& v : out.values) v.producer = -1;
        for (size_t v = 0; v < g.values.size(); ++v)
            has_nchw[v] = g.values[v].producer < 0;  // inputs and constants
        feeds_blocked = reaches_blocked_reader();
    }

    // An elementwise op that can run blocked: one padded_result knows (it
    // gives a value for operands of 1 in every op it lists).
    static bool elementwise_op(const Node& n) {
        return padded_result(n, std::vector<double>(n.inputs.size(), 1.0)).has_value();
    }

    std::vector<bool> reaches_blocked_reader() const {
        std::vector<bool> reach(in.values.size(), false);
        for (auto n = in.nodes.rbegin(); n != in.nodes.rend(); ++n) {
            const bool blocked_reader = convertible_conv(*n) || convertible_depthwise(*n) ||
                                        n->op == "nn.max_pool2d" || n->op == "nn.global_avg_pool2d";
            const bool passes_on =
                elementwise_op(*n) && n->outputs.size() == 1 && reach[size_t(n->outputs[0])];
            if (blocked_reader && !n->inputs.empty()) reach[size_t(n->inputs[0])] = true;
            if (passes_on)
                for (int v : n->inputs) reach[size_t(v)] = true;
        }
        return reach;
    }

    int64_t block_of(int b) const { return out.values[size_t(b)].type.shape[4]; }
    double pad_of(int b) const {
        auto it = pads.find(b);
        return it == pads.end() ? 0.0 : it->second;
    }

    /// The NCHW version of original value v (unpacking its blocked twin once).
    int nchw(int v) {
        if (has_nchw[size_t(v)]) return v;
        int b = blocked[size_t(v)];
        TS_CHECK(b >= 0) << "convert_layout: value '" << in.values[size_t(v)].name
                         << "' has no producer";
        Node t;
        t.op = "layout_transform";
        t.name = names.fresh(in.values[size_t(v)].name + "_unpack");
        t.attrs["src_layout"] = layout_name(block_of(b));
        t.attrs["dst_layout"] = std::string("NCHW");
        t.attrs["channels"] = in.values[size_t(v)].type.shape[1];
        t.inputs = {b};
        t.outputs = {v};
        out.add_node(t);
        has_nchw[size_t(v)] = true;
        return v;
    }

    /// The blocked version of original value v with channel block `block`.
    int blocked_of(int v, int64_t block) {
        int b = blocked[size_t(v)];
        if (b >= 0 && block_of(b) == block) return b;
        const TensorType& t = in.values[size_t(v)].type;
        graph::Value nv;
        nv.name = names.fresh(in.values[size_t(v)].name + "_" + layout_name(block));
        nv.type = {t.dtype,
                   {t.shape[0], ceil_div(t.shape[1], block), t.shape[2], t.shape[3], block}};
        int nb = out.add_value(nv);
        Node p;
        p.op = "layout_transform";
        p.name = names.fresh(in.values[size_t(v)].name + "_pack");
        p.attrs["src_layout"] = std::string("NCHW");
        p.attrs["dst_layout"] = layout_name(block);
        p.inputs = {nchw(v)};
        p.outputs = {nb};
        out.add_node(p);
        if (b < 0) blocked[size_t(v)] = nb;
        return nb;
    }

    /// A new blocked output value for original value v.
    int new_blocked(int v, int64_t block) {
        const TensorType& t = in.values[size_t(v)].type;
        graph::Value nv;
        nv.name = names.fresh(in.values[size_t(v)].name + "_" + layout_name(block));
        nv.type = {t.dtype,
                   {t.shape[0], ceil_div(t.shape[1], block), t.shape[2], t.shape[3], block}};
        int nb = out.add_value(nv);
        blocked[size_t(v)] = nb;
        return nb;
    }

    bool convertible_conv(const Node& n) const {
        if (n.op != "nn.conv2d" || n.attr_int("groups", 1) != 1 || n.inputs.size() < 2)
            return false;
        for (size_t i = 1; i < n.inputs.size(); ++i)
            if (!is_float_constant(in, n.inputs[i])) return false;
        const TensorType& x = in.values[size_t(n.inputs[0])].type;
        const auto& ws = in.values[size_t(n.inputs[1])].type.shape;
        // Fewer than 4 input channels and fewer output channels than a vector
        // (the bundled example's 3 -> 8 first conv): its NCHW[x]c blocks
        // would be mostly padding (37 GFLOP/s against 88 in NCHW, vectorized
        // along the output rows, on AVX-512); it stays NCHW.
        if (ws.size() == 4 && ws[1] < 4 && ws[0] < layout_lanes()) return false;
        return x.dtype == graph::DType::Float32 && x.shape.size() == 4;
    }

    // Depthwise: groups == input channels == output channels (multiplier 1).
    bool convertible_depthwise(const Node& n) const {
        if (n.op != "nn.conv2d" || n.inputs.size() < 2) return false;
        for (size_t i = 1; i < n.inputs.size(); ++i)
            if (!is_float_constant(in, n.inputs[i])) return false;
        const TensorType& x = in.values[size_t(n.inputs[0])].type;
        const auto& ws = in.values[size_t(n.inputs[1])].type.shape;
        if (x.dtype != graph::DType::Float32 || x.shape.size() != 4 || ws.size() != 4) return false;
        const int64_t groups = n.attr_int("groups", 1);
        return groups > 1 && groups == x.shape[1] && ws[0] == groups && ws[1] == 1;
    }

    void depthwise(const Node& n) {
        const int x = n.inputs[0], y = n.outputs[0];
        const auto& ws = in.values[size_t(n.inputs[1])].type.shape;
        const int64_t C = ws[0], KH = ws[2], KW = ws[3];
        const int64_t b = blocked[size_t(x)] >= 0 ? block_of(blocked[size_t(x)]) : layout_block(C);
        Node c;
        c.op = "nn.conv2d_NCHWc";
        c.name = n.name;
        for (const char* key : {"strides", "padding", "dilation"})
            if (n.attrs.count(key)) c.attrs[key] = n.attrs.at(key);
        c.attrs["groups"] = C;
        c.attrs["channels"] = C;  // the logical channels (graph::node_flops counts these)
        c.attrs["in_channels"] = C;
        int xb = blocked_of(x, b);
        const graph::Value& wv = in.values[size_t(n.inputs[1])];
        int w = add_float_constant(out, names.fresh(wv.name + "_dw" + std::to_string(b) + "c"),
                                   {ceil_div(C, b), 1, KH, KW, 1, b},
                                   pack_depthwise_weight(constant_floats(wv), C, KH, KW, b));
        c.inputs = {xb, w};
        if (n.inputs.size() == 3) {
            const graph::Value& bv = in.values[size_t(n.inputs[2])];
            std::vector<float> bias = constant_floats(bv);
            bias.resize(size_t(ceil_div(C, b) * b), 0.f);
            c.inputs.push_back(add_float_constant(out, names.fresh(bv.name + "_blocked"),
                                                  {ceil_div(C, b), b}, bias));
        }
        c.outputs = {new_blocked(y, b)};
        epilogue.insert(c.outputs[0]);
        out.add_node(c);
        changed = true;
    }

    void conv(const Node& n) {
        const int x = n.inputs[0], y = n.outputs[0];
        const auto& ws = in.values[size_t(n.inputs[1])].type.shape;
        const int64_t K = ws[0], C = ws[1], KH = ws[2], KW = ws[3];
        const int64_t ib = blocked[size_t(x)] >= 0 ? block_of(blocked[size_t(x)]) : layout_block(C);
        const int64_t ob = output_block(K);
        Node c;
        c.op = "nn.conv2d_NCHWc";
        c.name = n.name;
        for (const char* key : {"strides", "padding", "dilation"})
            if (n.attrs.count(key)) c.attrs[key] = n.attrs.at(key);
        c.attrs["channels"] = K;  // the logical channels (graph::node_flops counts these)
        c.attrs["in_channels"] = C;
        int xb = blocked_of(x, ib);
        const graph::Value& wv = in.values[size_t(n.inputs[1])];
        int w = add_float_constant(
            out,
            names.fresh(wv.name + "_OIHW" + std::to_string(ib) + "i" + std::to_string(ob) + "o"),
            {ceil_div(K, ob), ceil_div(C, ib), KH, KW, ib, ob},
            pack_conv2d_weight(constant_floats(wv), K, C, KH, KW, ib, ob));
        c.inputs = {xb, w};
        if (n.inputs.size() == 3) {
            const graph::Value& bv = in.values[size_t(n.inputs[2])];
            std::vector<float> bias = constant_floats(bv);
            bias.resize(size_t(ceil_div(K, ob) * ob), 0.f);
            c.inputs.push_back(add_float_constant(out, names.fresh(bv.name + "_blocked"),
                                                  {ceil_div(K, ob), ob}, bias));
        }
        c.outputs = {new_blocked(y, ob)};
        epilogue.insert(c.outputs[0]);
        out.add_node(c);
        changed = true;
    }

    // What an elementwise op computes on its operands' padded channels
    // (nullopt: an op not listed, or not finite there).
    static std::optional<double> padded_result(const Node& n, const std::vector<double>& a) {
        double r = 0;
        const double x = a[0];
        if (a.size() == 1) {
            if (n.op == "nn.relu") {
                r = std::max(x, 0.0);
            } else if (n.op == "clip") {
                r = x;
                if (n.attrs.count("a_min")) r = std::max(r, n.attr_float("a_min", 0));
                if (n.attrs.count("a_max")) r = std::min(r, n.attr_float("a_max", 0));
            } else if (n.op == "sigmoid") {
                r = 1.0 / (1.0 + std::exp(-x));
            } else if (n.op == "tanh") {
                r = std::tanh(x);
            } else if (n.op == "nn.hard_sigmoid") {
                r = std::clamp(x * n.attr_float("alpha", 0.2) + n.attr_float("beta", 0.5), 0.0,
                               1.0);
            } else if (n.op == "nn.hard_swish") {
                r = x * std::clamp(x / 6 + 0.5, 0.0, 1.0);
            } else {
                return std::nullopt;
            }
        } else if (a.size() == 2) {
            const double y = a[1];
            if (n.op == "add")
                r = x + y;
            else if (n.op == "subtract")
                r = x - y;
            else if (n.op == "multiply")
                r = x * y;
            else if (n.op == "divide" && y != 0)
                r = x / y;
            else
                return std::nullopt;
        } else {
            return std::nullopt;
        }
        if (!std::isfinite(r) || std::fabs(r) > 1e30) return std::nullopt;
        return r;
    }

    // Elementwise ops of same-shaped blocked values and scalar constants
    // (which broadcast the same in any layout) run in the blocked layout when
    // the padded channels stay finite (pads, above).
    bool elementwise(const Node& n) {
        const TensorType& t = in.values[size_t(n.outputs[0])].type;
        if (n.outputs.size() != 1 || t.shape.size() != 4) return false;
        std::vector<int> ins;
        std::vector<double> padded;
        int first = -1;
        for (int v : n.inputs) {
            int b = blocked[size_t(v)];
            if (b < 0) {
                if (!is_float_constant(in, v) || in.values[size_t(v)].type.num_elements() != 1)
                    return false;
                ins.push_back(v);
                padded.push_back(double(constant_floats(in.values[size_t(v)])[0]));
                continue;
            }
            if (in.values[size_t(v)].type != t) return false;
            if (first >= 0 && block_of(b) != block_of(first)) return false;
            if (first < 0) first = b;
            ins.push_back(b);
            padded.push_back(pad_of(b));
        }
        if (first < 0) return false;
        const std::optional<double> pad = padded_result(n, padded);
        if (!pad) return false;
        // Ops that keep zero padded channels at zero (relu, clip around 0,
        // add / subtract / multiply of blocked values, multiply by a scalar)
        // always run blocked: their result unpacks where an NCHW reader needs
        // it. The others in a convolution's epilogue (SiLU after a YOLO conv:
        // 11-13 % of nudenet and ddddocr det when it ran in NCHW) or on the
        // way to a blocked conv or pool; not after a pool that an NCHW reader
        // unpacks anyway (a quantization's x / scale before an im2col would
        // unpack the max pool a second time).
        const auto nblocked = std::count_if(n.inputs.begin(), n.inputs.end(),
                                            [&](int v) { return blocked[size_t(v)] >= 0; });
        const bool clip_zero = n.op == "clip" && n.attr_float("a_min", 0.0) <= 0.0 &&
                               n.attr_float("a_max", 0.0) >= 0.0;
        const bool always =
            (ins.size() == 1 && (n.op == "nn.relu" || clip_zero)) ||
            (ins.size() == 2 && (n.op == "add" || n.op == "subtract" || n.op == "multiply") &&
             (nblocked == 2 || n.op == "multiply"));
        const bool in_epilogue =
            std::any_of(ins.begin(), ins.end(), [&](int b) { return epilogue.count(b) > 0; });
        if (!always && !in_epilogue && !feeds_blocked[size_t(n.outputs[0])]) return false;
        Node e = n;
        e.attrs.erase("fuse_group");
        e.attrs["channels"] = t.shape[1];  // the logical channels
        e.inputs = ins;
        e.outputs = {new_blocked(n.outputs[0], block_of(first))};
        if (*pad != 0.0) pads[e.outputs[0]] = *pad;
        if (in_epilogue) epilogue.insert(e.outputs[0]);
        out.add_node(e);
        return true;
    }

    // Max pooling and global average pooling of a blocked value stay blocked
    // (padded channels keep their value: a max of equal values, their mean).
    bool pool(const Node& n) {
        if ((n.op != "nn.max_pool2d" && n.op != "nn.global_avg_pool2d") || n.inputs.size() != 1 ||
            n.outputs.size() != 1)
            return false;
        const int x = n.inputs[0];
        const int b = blocked[size_t(x)];
        const TensorType& t = in.values[size_t(x)].type;
        if (b < 0 || t.dtype != graph::DType::Float32 || t.shape.size() != 4) return false;
        Node p = n;
        p.op = n.op + "_NCHWc";
        p.attrs.erase("fuse_group");
        p.attrs["channels"] = t.shape[1];  // the logical channels
        p.inputs = {b};
        p.outputs = {new_blocked(n.outputs[0], block_of(b))};
        if (pad_of(b) != 0.0) pads[p.outputs[0]] = pad_of(b);
        out.add_node(p);
        return true;
    }

    // nn.gemm with a constant transposed B ([N, K]): B is stored as [K, N] at
    // compile time, so the kernel's vector loop over N reads contiguous rows.
    bool gemm_weight(const Node& n) {
        if (n.op != "nn.gemm" || n.attr_int("transB", 0) == 0 || n.inputs.size() < 2 ||
            !is_float_constant(in, n.inputs[1]))
            return false;
        const graph::Value& bv = in.values[size_t(n.inputs[1])];
        if (bv.type.shape.size() != 2) return false;
        const int64_t N = bv.type.shape[0], K = bv.type.shape[1];
        std::vector<float> b = constant_floats(bv), t(b.size());
        for (int64_t j = 0; j < N; ++j)
            for (int64_t k = 0; k < K; ++k) t[size_t(k * N + j)] = b[size_t(j * K + k)];
        Node c = n;
        for (int& v : c.inputs) v = nchw(v);
        c.inputs[1] = add_float_constant(out, names.fresh(bv.name + "_KN"), {K, N}, t);
        c.attrs["transB"] = int64_t(0);
        for (int v : c.outputs) has_nchw[size_t(v)] = true;
        out.add_node(c);
        changed = true;
        return true;
    }

    void copy(const Node& n) {
        Node c = n;
        for (int& v : c.inputs) v = nchw(v);
        for (int v : c.outputs) has_nchw[size_t(v)] = true;
        out.add_node(c);
    }
};

}  // namespace

int64_t layout_lanes() {
#if defined(__x86_64__) || defined(__i386__)
    static const int64_t lanes = __builtin_cpu_supports("avx512f") ? 16 : 8;
    return lanes;
#else
    return 4;
#endif
}

int64_t layout_block(int64_t channels) {
    TS_CHECK(channels >= 1) << "layout_block: " << channels << " channels";
    return channels < 2 * layout_lanes() ? channels : layout_lanes();
}

int64_t output_block(int64_t channels) {
    return channels > layout_lanes() && channels < 2 * layout_lanes() ? channels : layout_lanes();
}

std::vector<float> pack_conv2d_weight(const std::vector<float>& w, int64_t K, int64_t C, int64_t KH,
                                      int64_t KW, int64_t ib, int64_t ob) {
    TS_CHECK(int64_t(w.size()) == K * C * KH * KW) << "pack_conv2d_weight: size";
    const int64_t OCo = ceil_div(K, ob), ICo = ceil_div(C, ib);
    std::vector<float> p(size_t(OCo * ICo * KH * KW * ib * ob), 0.f);
    for (int64_t k = 0; k < K; ++k)
        for (int64_t c = 0; c < C; ++c)
            for (int64_t r = 0; r < KH; ++r)
                for (int64_t s = 0; s < KW; ++s) {
                    int64_t dst =
                        ((((k / ob * ICo + c / ib) * KH + r) * KW + s) * ib + c % ib) * ob + k % ob;
                    p[size_t(dst)] = w[size_t(((k * C + c) * KH + r) * KW + s)];
                }
    return p;
}

std::vector<float> pack_depthwise_weight(const std::vector<float>& w, int64_t C, int64_t KH,
                                         int64_t KW, int64_t b) {
    TS_CHECK(int64_t(w.size()) == C * KH * KW) << "pack_depthwise_weight: size";
    std::vector<float> p(size_t(ceil_div(C, b) * KH * KW * b), 0.f);
    for (int64_t c = 0; c < C; ++c)
        for (int64_t r = 0; r < KH * KW; ++r)
            p[size_t(((c / b) * KH * KW + r) * b + c % b)] = w[size_t(c * KH * KW + r)];
    return p;
}

graph::Graph convert_layout(const graph::Graph& in, const PassContext&) {
    Rewriter r(in);
    for (const Node& n : in.nodes) {
        if (r.convertible_conv(n))
            r.conv(n);
        else if (r.convertible_depthwise(n))
            r.depthwise(n);
        else if (!r.elementwise(n) && !r.pool(n) && !r.gemm_weight(n))
            r.copy(n);
    }
    if (!r.changed) return in;
    for (int v : in.outputs) r.nchw(v);
    return compact(r.out, std::vector<bool>(r.out.nodes.size(), true));
}

}  // namespace tessera::passes
