// QDQ Conv / MatMul into ConvInteger / MatMulInteger (see onnx_qdq_fold.h).
#include "engine/frontend/onnx/onnx_qdq_fold.h"

#include <map>
#include <optional>
#include <set>

#include "engine/frontend/onnx/onnx_context.h"
#include "engine/frontend/onnx/onnx_index.h"
#include "engine/frontend/onnx/onnx_node_rewrite.h"

namespace tessera::frontend::onnx_import {

namespace {

using Nodes = std::vector<onnx::NodeProto>;

// Input channels from which a QDQ convolution runs as an integer GEMM
// (one grayscale channel is not measured).
constexpr int64_t kMinIntegerConvChannels = 3;
// Longest window whose float32 sums of 8-bit products are exact integers.
constexpr int64_t kMaxExactByteTerms = (int64_t(1) << 24) / (255 * 255);

// One DequantizeLinear input of a Conv / MatMul / Gemm.
struct Dequantized {
    std::string q, scale, zp;  // zp "" when omitted
    int64_t axis = 1;
    int64_t scale_elements = 1;
};

class Folder {
public:
    Folder(onnx::GraphProto& g, const std::string& origin) : m_g(g), m_r(origin, "", g) {
        for (const auto& t : g.initializer()) m_inits[t.name()] = &t;
        for (const auto& n : g.node())
            for (const auto& o : n.output()) m_producer[o] = &n;
    }

    int run() {
        Nodes out;
        int folded = 0;
        for (const onnx::NodeProto& n : m_g.node()) {
            const bool std_domain = n.domain().empty() || n.domain() == "ai.onnx";
            if (std_domain && n.op_type() == "MatMul" && fold_matmul(n, out)) {
                ++folded;
                continue;
            }
            if (std_domain && n.op_type() == "Gemm" && fold_gemm(n, out)) {
                ++folded;
                continue;
            }
            if (std_domain && n.op_type() == "Conv" && fold_conv(n, out)) {
                ++folded;
                continue;
            }
            out.push_back(n);
        }
        if (folded == 0) return 0;
        m_g.clear_node();
        for (auto& n : out) *m_g.add_node() = std::move(n);
        for (auto& t : m_new_inits) *m_g.add_initializer() = std::move(t);
        return folded;
    }

private:
    // The element type of 8-bit value `v`: an initializer's, or a
    // QuantizeLinear's output typed by its zero point (through a MaxPool);
    // 0 when unknown.
    int byte_type(const std::string& v) const {
        if (auto it = m_inits.find(v); it != m_inits.end()) return it->second->data_type();
        auto p = m_producer.find(v);
        // A MaxPool of 8-bit data (fold_byte_max_pools) keeps its type.
        if (p != m_producer.end() && p->second->op_type() == "MaxPool" &&
            p->second->input_size() == 1)
            return byte_type(p->second->input(0));
        if (p == m_producer.end() || p->second->op_type() != "QuantizeLinear" ||
            find_attr(*p->second, "output_dtype") || p->second->input_size() < 3)
            return 0;
        auto z = m_inits.find(p->second->input(2));
        return z == m_inits.end() ? 0 : z->second->data_type();
    }

    int64_t elements(const std::string& v) const {
        auto it = m_inits.find(v);
        if (it == m_inits.end()) return -1;
        int64_t e = 1;
        for (int64_t d : it->second->dims()) e *= d;
        return e;
    }

    std::optional<Dequantized> dequantized(const std::string& v) const {
        auto p = m_producer.find(v);
        if (p == m_producer.end()) return std::nullopt;
        const onnx::NodeProto& dq = *p->second;
        if (dq.op_type() != "DequantizeLinear" ||
            !(dq.domain().empty() || dq.domain() == "ai.onnx") || dq.input_size() < 2)
            return std::nullopt;
        if (const auto* b = find_attr(dq, "block_size"); b && b->i() != 0) return std::nullopt;
        Dequantized d;
        d.q = dq.input(0);
        d.scale = dq.input(1);
        d.zp = dq.input_size() > 2 ? dq.input(2) : "";
        if (const auto* a = find_attr(dq, "axis")) d.axis = a->i();
        const int t = byte_type(d.q);
        if (t != onnx::TensorProto::UINT8 && t != onnx::TensorProto::INT8) return std::nullopt;
        d.scale_elements = elements(d.scale);
        // float32 scales only: the rescaling multiplies the float32 products by them.
        if (d.scale_elements < 1 || m_inits.at(d.scale)->data_type() != onnx::TensorProto::FLOAT)
            return std::nullopt;
        if (!d.zp.empty() && elements(d.zp) != d.scale_elements) return std::nullopt;
        return d;
    }

    const onnx::TensorProto* weight(const Dequantized& d, size_t rank) const {
        auto it = m_inits.find(d.q);
        return it != m_inits.end() && size_t(it->second->dims_size()) == rank ? it->second
                                                                              : nullptr;
    }

    // A float32 initializer of `shape`'s int64 values, named after `base`.
    std::string shape_constant(const std::string& base, const std::vector<int64_t>& values) {
        onnx::TensorProto t;
        t.set_name(m_r.fresh(base + "_shape"));
        t.set_data_type(onnx::TensorProto::INT64);
        t.add_dims(int64_t(values.size()));
        for (int64_t v : values) t.add_int64_data(v);
        m_new_inits.push_back(t);
        return t.name();
    }

    // acc (int32) -> float * scale (+ bias); the last node takes n's name and output.
    void rescale(const onnx::NodeProto& n, const std::string& acc, const std::string& scale,
                 const std::string& bias, Nodes& out) {
        onnx::NodeProto cast;
        cast.set_op_type("Cast");
        cast.set_name(m_r.fresh(node_name(n) + "_to_float"));
        cast.add_input(acc);
        cast.add_output(m_r.fresh(node_name(n) + "_accf"));
        auto* to = cast.add_attribute();
        to->set_name("to");
        to->set_type(onnx::AttributeProto::INT);
        to->set_i(onnx::TensorProto::FLOAT);
        out.push_back(cast);
        std::string y =
            m_r.emit(n, "Mul", {cast.output(0), scale}, out, bias.empty() ? n.output(0) : "");
        if (!bias.empty()) y = m_r.emit(n, "Add", {y, bias}, out, n.output(0));
        out.back().set_name(node_name(n));
    }

    bool fold_matmul(const onnx::NodeProto& n, Nodes& out) {
        if (n.input_size() != 2) return false;
        auto x = dequantized(n.input(0)), w = dequantized(n.input(1));
        if (!x || !w || x->scale_elements != 1) return false;
        const onnx::TensorProto* wt = weight(*w, 2);
        if (!wt) return false;
        // Per column of the weight (axis 1) or per tensor.
        if (w->scale_elements != 1 &&
            !(w->scale_elements == wt->dims(1) && (w->axis == 1 || w->axis == -1)))
            return false;
        const std::string acc = m_r.emit(n, "MatMulInteger", {x->q, w->q, x->zp, w->zp}, out);
        const std::string scale = m_r.emit(n, "Mul", {x->scale, w->scale}, out);
        rescale(n, acc, scale, "", out);
        return true;
    }

    // A classifier's Gemm (alpha = beta = 1, A not transposed): B's weight
    // as [K, N] (a Transpose of the constant when transB), per tensor or per
    // output column; C the bias. MobileNetV2's 1280 x 1000 layer read its
    // dequantized floats (5 MB) on every run.
    bool fold_gemm(const onnx::NodeProto& n, Nodes& out) {
        if (n.input_size() < 2) return false;
        for (const char* a : {"alpha", "beta"})
            if (const auto* f = find_attr(n, a); f && f->f() != 1.0f) return false;
        if (const auto* t = find_attr(n, "transA"); t && t->i() != 0) return false;
        const auto* tb = find_attr(n, "transB");
        const bool trans_b = tb && tb->i() != 0;
        auto x = dequantized(n.input(0)), w = dequantized(n.input(1));
        if (!x || !w || x->scale_elements != 1) return false;
        const onnx::TensorProto* wt = weight(*w, 2);
        if (!wt) return false;
        const int64_t columns = wt->dims(trans_b ? 0 : 1);
        const int64_t column_axis = trans_b ? 0 : 1;
        if (w->scale_elements != 1 && !(w->scale_elements == columns &&
                                        (w->axis == column_axis || w->axis == column_axis - 2)))
            return false;
        std::string wq = w->q;
        if (trans_b) {
            onnx::AttributeProto perm;
            perm.set_name("perm");
            perm.set_type(onnx::AttributeProto::INTS);
            perm.add_ints(1);
            perm.add_ints(0);
            wq = m_r.emit(n, "Transpose", {w->q}, out, "", {perm});
        }
        const std::string acc = m_r.emit(n, "MatMulInteger", {x->q, wq, x->zp, w->zp}, out);
        const std::string scale = m_r.emit(n, "Mul", {x->scale, w->scale}, out);
        rescale(n, acc, scale, n.input_size() > 2 ? n.input(2) : "", out);
        return true;
    }

    bool fold_conv(const onnx::NodeProto& n, Nodes& out) {
        if (n.input_size() < 2) return false;
        auto x = dequantized(n.input(0)), w = dequantized(n.input(1));
        if (!x || !w || x->scale_elements != 1) return false;
        const onnx::TensorProto* wt = weight(*w, 4);
        if (!wt) return false;
        // Grouped (depthwise) convolutions run on their 8-bit data with
        // exact float sums (grouped_byte_conv) where a window's sum fits 24
        // bits; the dequantized float data would be 4x the bytes and, in
        // NCHW[x]c, two layout copies around every depthwise conv.
        const auto* group = find_attr(n, "group");
        if (group && group->i() != 1) {
            if (wt->dims(1) * wt->dims(2) * wt->dims(3) > kMaxExactByteTerms) return false;
        } else if (wt->dims(1) < kMinIntegerConvChannels) {
            // From an RGB stem on the integer GEMM pays, since its windows'
            // padded rows are read plainly (clamped-index vector reads;
            // ResNet-18's 7x7/2 stem took 1.6 ms as an integer GEMM before):
            // QDQ ResNet-18 6.9 -> 6.4 ms, QDQ MobileNetV2 3.3 -> 3.2 ms (1
            // thread) with their stems integer instead of float convs and a
            // layout copy. Fewer channels are not measured: they stay float.
            return false;
        }
        const int64_t oc = wt->dims(0);
        if (w->scale_elements != 1 && !(w->scale_elements == oc && w->axis == 0)) return false;
        onnx::NodeProto conv;
        conv.set_op_type("ConvInteger");
        conv.set_name(m_r.fresh(node_name(n) + "_ConvInteger"));
        for (const std::string& i : {x->q, w->q, x->zp, w->zp}) conv.add_input(i);
        conv.add_output(m_r.fresh(node_name(n) + "_acc"));
        for (const auto& a : n.attribute()) *conv.add_attribute() = a;
        out.push_back(conv);
        std::string scale = m_r.emit(n, "Mul", {x->scale, w->scale}, out);
        const std::string per_channel = shape_constant(node_name(n), {-1, 1, 1});
        if (w->scale_elements != 1) scale = m_r.emit(n, "Reshape", {scale, per_channel}, out);
        std::string bias;
        if (n.input_size() > 2 && !n.input(2).empty())
            bias = m_r.emit(n, "Reshape", {n.input(2), per_channel}, out);
        rescale(n, conv.output(0), scale, bias, out);
        return true;
    }

    onnx::GraphProto& m_g;
    NodeRewriter m_r;
    std::map<std::string, const onnx::TensorProto*> m_inits;
    std::map<std::string, const onnx::NodeProto*> m_producer;
    std::vector<onnx::TensorProto> m_new_inits;
};

// The values of initializer `name` (nullopt when it is not one).
std::optional<std::vector<double>> initializer_values(
    const std::map<std::string, const onnx::TensorProto*>& inits, const std::string& name) {
    auto it = inits.find(name);
    if (it == inits.end()) return std::nullopt;
    return constant_values(decode_tensor(*it->second, name));
}

// DequantizeLinear -> MaxPool -> QuantizeLinear with one scale and zero
// point on both sides (ONNX Runtime's quantize_static writes MaxPool so, its
// output quantized as its input): the MaxPool on the 8-bit tensor itself,
// its output the QuantizeLinear's. Exact: the maximum commutes with the
// increasing dequantization, Q(DQ(v)) = v, and topi's windows clamp instead
// of padding. ResNet-18's pool over 64 x 112 x 112 dequantized its input to
// floats (3.2 MB) and quantized the result again. Returns how many.
int fold_byte_max_pools(onnx::GraphProto& g) {
    std::map<std::string, const onnx::TensorProto*> inits;
    for (const auto& t : g.initializer()) inits[t.name()] = &t;
    std::map<std::string, int> producer, readers;
    for (int i = 0; i < g.node_size(); ++i) {
        for (const std::string& out : g.node(i).output()) producer[out] = i;
        for (const std::string& in : g.node(i).input()) readers[in]++;
    }
    for (const auto& o : g.output()) readers[o.name()]++;
    auto node_of = [&](const std::string& v, const char* op) -> const onnx::NodeProto* {
        auto it = producer.find(v);
        if (it == producer.end()) return nullptr;
        const onnx::NodeProto& n = g.node(it->second);
        const bool std_domain = n.domain().empty() || n.domain() == "ai.onnx";
        return std_domain && n.op_type() == op ? &n : nullptr;
    };
    // Scale and zero point of a Q or DQ node: one value each, the zero
    // point's initializer type (the 8-bit type) given (quantize_static writes
    // it; without one a DequantizeLinear's type would be its input's).
    struct Params {
        double scale = 0, zero = 0;
        int type = 0;
    };
    auto params = [&](const onnx::NodeProto& n) -> std::optional<Params> {
        if (n.input_size() < 3 || n.input(2).empty() || find_attr(n, "output_dtype") ||
            find_attr(n, "block_size"))
            return std::nullopt;
        Params p;
        const auto s = initializer_values(inits, n.input(1));
        const auto z = initializer_values(inits, n.input(2));
        if (!s || s->size() != 1 || !((*s)[0] > 0) || !z || z->size() != 1) return std::nullopt;
        p.scale = (*s)[0];
        p.zero = (*z)[0];
        p.type = inits.at(n.input(2))->data_type();
        if (p.type != onnx::TensorProto::UINT8 && p.type != onnx::TensorProto::INT8)
            return std::nullopt;
        return p;
    };
    std::map<int, std::string> pool_input;  // MaxPool node -> the 8-bit tensor it reads
    std::map<int, int> quantize_of;         // MaxPool node -> the QuantizeLinear it replaces
    for (int i = 0; i < g.node_size(); ++i) {
        const onnx::NodeProto& q = g.node(i);
        if (q.op_type() != "QuantizeLinear" || !(q.domain().empty() || q.domain() == "ai.onnx") ||
            q.output_size() != 1)
            continue;
        const onnx::NodeProto* pool = node_of(q.input(0), "MaxPool");
        if (!pool || pool->input_size() != 1 || readers[q.input(0)] != 1 ||
            (pool->output_size() > 1 && !pool->output(1).empty()))
            continue;
        const onnx::NodeProto* dq = node_of(pool->input(0), "DequantizeLinear");
        if (!dq || dq->output_size() != 1) continue;
        const auto a = params(*dq), b = params(q);
        if (!a || !b || a->scale != b->scale || a->zero != b->zero || a->type != b->type) continue;
        const int p = producer.at(q.input(0));
        pool_input[p] = dq->input(0);
        quantize_of[p] = i;
    }
    if (pool_input.empty()) return 0;
    std::set<int> dropped;
    for (const auto& [p, qi] : quantize_of) {
        onnx::NodeProto& pool = *g.mutable_node(p);
        pool.set_input(0, pool_input.at(p));
        pool.set_output(0, g.node(qi).output(0));
        dropped.insert(qi);
    }
    onnx::GraphProto kept;
    for (int i = 0; i < g.node_size(); ++i)
        if (!dropped.count(i)) *kept.add_node() = g.node(i);
    g.mutable_node()->Swap(kept.mutable_node());
    return int(dropped.size());
}

}  // namespace

int fold_qdq_into_integer_ops(onnx::ModelProto& model, const std::string& origin) {
    int64_t opset = 0;
    for (const auto& o : model.opset_import())
        if (o.domain().empty() || o.domain() == "ai.onnx") opset = o.version();
    if (opset < 10) return 0;  // MatMulInteger / ConvInteger are opset 10
    // MaxPool takes 8-bit tensors from opset 12.
    const int pools = opset >= 12 ? fold_byte_max_pools(*model.mutable_graph()) : 0;
    return pools + Folder(*model.mutable_graph(), origin).run();
}

namespace {

// The float tensor a QuantizeLinear -> DequantizeLinear pair stands for
// without its rounding: q's input clipped to the range the pair represents,
// [(qmin - zp) * s, (qmax - zp) * s] (a Relu or Clip(0, 6) folded into the
// quantization clips there), as a Clip appended to clips[input]; the input
// itself when the scale and zero point are not one constant each or the
// type is not 8-bit.
std::string clipped_to_range(onnx::GraphProto& g, const onnx::NodeProto& q, int64_t opset,
                             const std::map<std::string, const onnx::TensorProto*>& inits,
                             std::map<std::string, std::vector<onnx::NodeProto>>& clips) {
    const std::string& x = q.input(0);
    if (q.input_size() < 2 || find_attr(q, "output_dtype") || opset < 11) return x;
    auto find = [&](int i) -> const onnx::TensorProto* {
        auto it = q.input_size() > i ? inits.find(q.input(i)) : inits.end();
        return it == inits.end() ? nullptr : it->second;
    };
    const onnx::TensorProto *scale = find(1), *zp = find(2);
    if (!scale || scale->data_type() != onnx::TensorProto::FLOAT) return x;
    const std::vector<double> s = constant_values(decode_tensor(*scale, q.input(1)));
    double z = 0, qmin = 0, qmax = 255;
    if (q.input_size() > 2 && !q.input(2).empty()) {
        if (!zp) return x;
        const std::vector<double> zv = constant_values(decode_tensor(*zp, q.input(2)));
        if (zv.size() != 1) return x;
        z = zv[0];
        if (zp->data_type() == onnx::TensorProto::INT8)
            qmin = -128, qmax = 127;
        else if (zp->data_type() != onnx::TensorProto::UINT8)
            return x;
    }
    if (s.size() != 1 || !(s[0] > 0)) return x;
    const std::string base =
        x + "_qdq_range" + (clips.count(x) ? "_" + std::to_string(clips[x].size()) : "");
    onnx::TensorProto lo, hi;
    lo.set_name(base + "_min");
    lo.set_data_type(onnx::TensorProto::FLOAT);
    lo.add_float_data(float((qmin - z) * s[0]));
    hi.set_name(base + "_max");
    hi.set_data_type(onnx::TensorProto::FLOAT);
    hi.add_float_data(float((qmax - z) * s[0]));
    *g.add_initializer() = lo;
    *g.add_initializer() = hi;
    onnx::NodeProto clip;
    clip.set_op_type("Clip");
    clip.set_name(base);
    clip.add_input(x);
    clip.add_input(lo.name());
    clip.add_input(hi.name());
    clip.add_output(base);
    clips[x].push_back(clip);
    return base;
}

}  // namespace

int read_activation_qdq_as_float(onnx::ModelProto& model) {
    onnx::GraphProto& g = *model.mutable_graph();
    int64_t opset = 0;
    for (const auto& o : model.opset_import())
        if (o.domain().empty() || o.domain() == "ai.onnx") opset = o.version();
    std::map<std::string, std::vector<onnx::NodeProto>> clips;  // Q input -> its Clip
    std::map<std::string, const onnx::TensorProto*> inits;      // (the Clips' bounds join after)
    for (const auto& t : g.initializer()) inits[t.name()] = &t;
    std::map<std::string, int> producer, readers;
    std::set<std::string> graph_outputs;
    for (const auto& o : g.output()) graph_outputs.insert(o.name());
    for (int i = 0; i < g.node_size(); ++i) {
        for (const std::string& out : g.node(i).output()) producer[out] = i;
        for (const std::string& in : g.node(i).input()) readers[in]++;
    }
    std::map<std::string, std::string> renamed;  // DQ output -> the float tensor it stands for
    std::set<int> dropped;
    for (int i = 0; i < g.node_size(); ++i) {
        const onnx::NodeProto& dq = g.node(i);
        if (dq.op_type() != "DequantizeLinear" || dq.input_size() < 1 || dq.output_size() != 1)
            continue;
        auto q = producer.find(dq.input(0));
        if (q == producer.end()) continue;  // a constant (weight) or a graph input
        const onnx::NodeProto& qn = g.node(q->second);
        if (qn.op_type() != "QuantizeLinear" || qn.input_size() < 1 || qn.output_size() != 1 ||
            graph_outputs.count(dq.output(0)))
            continue;
        renamed[dq.output(0)] = clipped_to_range(g, qn, opset, inits, clips);
        dropped.insert(i);
        // The quantized tensor read by this pair alone: its QuantizeLinear goes too.
        if (readers[qn.output(0)] == 1 && !graph_outputs.count(qn.output(0))) dropped.insert(q->second);
    }
    if (renamed.empty()) return 0;
    onnx::GraphProto kept;
    for (int i = 0; i < g.node_size(); ++i) {
        if (dropped.count(i)) {
            // The pair's Clip goes where its QuantizeLinear was.
            const onnx::NodeProto& n = g.node(i);
            if (n.op_type() == "QuantizeLinear")
                if (auto c = clips.find(n.input(0)); c != clips.end())
                    for (onnx::NodeProto& clip : c->second) *kept.add_node() = std::move(clip);
            continue;
        }
        onnx::NodeProto* n = kept.add_node();
        *n = g.node(i);
        for (std::string& in : *n->mutable_input())
            if (auto r = renamed.find(in); r != renamed.end()) in = r->second;
    }
    g.mutable_node()->Swap(kept.mutable_node());
    return int(renamed.size());
}

}  // namespace tessera::frontend::onnx_import
