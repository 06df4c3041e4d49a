// QDQ rewriting of an ONNX model (see onnx_qdq.h).
#include "engine/frontend/onnx/onnx_qdq.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <optional>
#include <set>

#include "engine/core/atomic_file.h"
#include "engine/core/error.h"
#include "engine/frontend/onnx/onnx_context.h"
#include "engine/frontend/onnx/onnx_node_rewrite.h"
#include "onnx/checker.h"
#include "onnx/shape_inference/implementation.h"
#include "onnx/version_converter/convert.h"

namespace tessera::frontend {

namespace {

int default_opset(const onnx::ModelProto& m) {
    for (const auto& o : m.opset_import())
        if (o.domain().empty() || o.domain() == "ai.onnx") return int(o.version());
    return 0;
}

bool standard_domain(const onnx::NodeProto& n) {
    return n.domain().empty() || n.domain() == "ai.onnx";
}

/// Conv, MatMul and Gemm: their constant float operands become int8 weights.
bool has_weights(const onnx::NodeProto& n) {
    return standard_domain(n) &&
           (n.op_type() == "Conv" || n.op_type() == "MatMul" || n.op_type() == "Gemm");
}

/// A node of one of the op types whose inputs are quantized.
bool quantizable(const onnx::NodeProto& n, const std::vector<std::string>& ops) {
    return standard_domain(n) && std::find(ops.begin(), ops.end(), n.op_type()) != ops.end();
}

/// Input positions of a quantized node that are quantized: Conv's X and W,
/// MatMul's and Gemm's A and B (Conv's and Gemm's bias become int32 when
/// their operands are quantized), Add's two operands, a pool's input.
std::vector<int> operand_positions(const onnx::NodeProto& n) {
    if (n.op_type() == "MaxPool" || n.op_type() == "AveragePool" ||
        n.op_type() == "GlobalAveragePool")
        return {0};
    return {0, 1};
}

bool is_operand(const onnx::NodeProto& n, int pos) {
    const std::vector<int> ps = operand_positions(n);
    return std::find(ps.begin(), ps.end(), pos) != ps.end();
}

/// The constant tensors of a graph by value name: its initializers and the
/// `value` tensors of its Constant nodes (exporters write weights as either).
std::map<std::string, const onnx::TensorProto*> constant_tensors(const onnx::GraphProto& g) {
    std::map<std::string, const onnx::TensorProto*> out;
    for (const auto& t : g.initializer()) out[t.name()] = &t;
    for (const auto& n : g.node())
        if (n.op_type() == "Constant" && (n.domain().empty() || n.domain() == "ai.onnx") &&
            n.output_size() == 1)
            for (const auto& a : n.attribute())
                if (a.name() == "value" && a.has_t()) out[n.output(0)] = &a.t();
    return out;
}

/// The output-channel axis of weight input `pos` of node `n` (rank `rank`),
/// or -1 when it has none that DequantizeLinear can scale per channel.
int channel_axis(const onnx::NodeProto& n, int pos, int rank) {
    if (pos != 1) return -1;
    if (n.op_type() == "Conv") return 0;
    if (rank != 2) return -1;
    if (n.op_type() == "MatMul") return 1;
    for (const auto& a : n.attribute())
        if (a.name() == "transB" && a.i() != 0) return 0;
    return 1;
}

bool is_graph_output(const onnx::GraphProto& g, const std::string& name) {
    for (const auto& v : g.output())
        if (v.name() == name) return true;
    return false;
}

/// The float elements of weight `t` (UserError naming it and the file).
std::vector<float> float_data(const onnx::TensorProto& t, const std::string& name,
                              const std::string& path) {
    const onnx_import::ConstTensor c =
        onnx_import::decode_tensor(t, "model '" + path + "': weight '" + name + "'");
    const float* p = c.data->as<float>();
    return std::vector<float>(p, p + c.type.num_elements());
}

/// Names not used anywhere in the model yet (readable ones: base, base_1, ...).
class Names {
public:
    explicit Names(const onnx::GraphProto& g) { onnx_import::collect_names(g, m_used); }
    std::string fresh(const std::string& base) {
        std::string name = base;
        for (int i = 1; m_used.count(name); ++i) name = base + "_" + std::to_string(i);
        m_used.insert(name);
        return name;
    }

private:
    std::set<std::string> m_used;
};

/// An initializer: `values` of `dtype` as a scalar, or a vector when `vector`.
template <typename T>
onnx::TensorProto initializer(const std::string& name, graph::DType dtype,
                              const std::vector<T>& values, bool vector) {
    graph::TensorType type{dtype, vector ? std::vector<int64_t>{int64_t(values.size())}
                                         : std::vector<int64_t>{}};
    onnx::TensorProto t;
    onnx_import::encode_tensor(type, values.data(), name, &t);
    return t;
}

onnx::NodeProto make_node(const std::string& op, const std::vector<std::string>& in,
                          const std::string& out, const std::string& name) {
    onnx::NodeProto n;
    n.set_op_type(op);
    n.set_name(name);
    for (const auto& s : in) n.add_input(s);
    n.add_output(out);
    return n;
}

/// A DequantizeLinear of constant `q` with per-channel scales along `axis`
/// (no axis attribute when axis < 0: one scale).
onnx::NodeProto dequantize_constant(const std::string& q, const std::vector<std::string>& scale_zp,
                                    const std::string& out, const std::string& name, int axis) {
    std::vector<std::string> in = {q};
    in.insert(in.end(), scale_zp.begin(), scale_zp.end());
    onnx::NodeProto d = make_node("DequantizeLinear", in, out, name);
    if (axis >= 0) {
        onnx::AttributeProto* a = d.add_attribute();
        a->set_name("axis");
        a->set_type(onnx::AttributeProto::INT);
        a->set_i(axis);
    }
    return d;
}

/// `model` converted to opset 13 (where DequantizeLinear takes an axis: one
/// scale per output channel), when ONNX's version converter can, the result
/// passes the checker and every activation to quantize keeps its calibrated
/// range (the converter may rename what it rewrites); else nothing.
std::optional<onnx::ModelProto> at_opset_13(
    const onnx::ModelProto& model, const std::map<std::string, TensorRange>& ranges,
    const std::map<std::string, std::vector<int64_t>>& float_shapes,
    const std::vector<std::string>& ops) {
    try {
        // The adapters need shapes (Softmax's rank): the float tensors'
        // shapes from the calibration runs; the original types put back.
        onnx::ModelProto shaped = model;
        auto set_shape = [](onnx::TypeProto* t, const std::vector<int64_t>& dims) {
            auto* tt = t->mutable_tensor_type();
            tt->set_elem_type(onnx::TensorProto::FLOAT);
            tt->mutable_shape()->clear_dim();
            for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
        };
        std::set<std::string> typed;
        for (auto& in : *shaped.mutable_graph()->mutable_input()) {
            typed.insert(in.name());
            auto it = float_shapes.find(in.name());
            if (it != float_shapes.end()) set_shape(in.mutable_type(), it->second);
        }
        for (auto& out : *shaped.mutable_graph()->mutable_output()) {
            typed.insert(out.name());
            auto it = float_shapes.find(out.name());
            if (it != float_shapes.end()) set_shape(out.mutable_type(), it->second);
        }
        shaped.mutable_graph()->clear_value_info();
        for (const auto& [name, dims] : float_shapes) {
            if (typed.count(name)) continue;
            onnx::ValueInfoProto* vi = shaped.mutable_graph()->add_value_info();
            vi->set_name(name);
            set_shape(vi->mutable_type(), dims);
        }
        onnx::shape_inference::InferShapes(shaped);
        onnx::ModelProto up = onnx::version_conversion::ConvertVersion(shaped, 13);
        up.mutable_graph()->clear_value_info();
        for (int i = 0; i < up.graph().input_size() && i < model.graph().input_size(); ++i)
            if (up.graph().input(i).name() == model.graph().input(i).name())
                *up.mutable_graph()->mutable_input(i)->mutable_type() = model.graph().input(i).type();
        for (int i = 0; i < up.graph().output_size() && i < model.graph().output_size(); ++i)
            if (up.graph().output(i).name() == model.graph().output(i).name())
                *up.mutable_graph()->mutable_output(i)->mutable_type() = model.graph().output(i).type();
        onnx::shape_inference::InferShapes(up);
        onnx::checker::check_model(up);
        const auto init = constant_tensors(up.graph());
        for (const auto& n : up.graph().node()) {
            if (!quantizable(n, ops)) continue;
            for (int pos : operand_positions(n))
                if (pos < n.input_size() && !n.input(pos).empty() && !init.count(n.input(pos)) &&
                    !ranges.count(n.input(pos)))
                    return std::nullopt;
        }
        return up;
    } catch (const std::exception&) {  // the converter or the checker refused
        return std::nullopt;
    }
}

}  // namespace

const std::vector<std::string>& qdq_op_types() {
    static const std::vector<std::string> all = {
        "Conv", "MatMul", "Gemm", "Add", "Mul", "MaxPool", "AveragePool", "GlobalAveragePool"};
    return all;
}

void check_qdq_ops(const std::vector<std::string>& ops) {
    TS_USER_CHECK(!ops.empty()) << "no op types to quantize";
    for (const std::string& op : ops) {
        const auto& all = qdq_op_types();
        if (std::find(all.begin(), all.end(), op) != all.end()) continue;
        std::string names;
        for (const std::string& a : all) names += (names.empty() ? "" : ", ") + a;
        TS_USER_FAIL() << "cannot quantize the inputs of op type '" << op << "': the op types are "
                       << names;
    }
}

std::vector<std::string> qdq_activations(const std::string& model_path,
                                         const std::vector<std::string>& ops) {
    check_qdq_ops(ops);
    onnx::ModelProto model = onnx_import::read_model_proto(model_path);
    const auto init = constant_tensors(model.graph());
    std::vector<std::string> out;
    std::set<std::string> seen;
    for (const auto& n : model.graph().node()) {
        if (!quantizable(n, ops)) continue;
        for (int pos : operand_positions(n)) {
            if (pos >= n.input_size() || n.input(pos).empty() || init.count(n.input(pos))) continue;
            if (seen.insert(n.input(pos)).second) out.push_back(n.input(pos));
        }
    }
    return out;
}

/// The clip bounds of a Relu (0, +inf) or a Clip node (its min / max
/// attributes before opset 11, constant inputs from it; absent = unbounded);
/// nullopt for other nodes or bounds that are not constants.
std::optional<std::pair<float, float>> activation_bounds(
    const onnx::NodeProto& n, const std::map<std::string, const onnx::TensorProto*>& init,
    const std::string& path) {
    if (!(n.domain().empty() || n.domain() == "ai.onnx") || n.input_size() < 1) return std::nullopt;
    if (n.op_type() == "Relu") return std::pair{0.f, INFINITY};
    if (n.op_type() != "Clip") return std::nullopt;
    float lo = -INFINITY, hi = INFINITY;
    for (const auto& a : n.attribute()) {
        if (a.name() == "min") lo = a.f();
        if (a.name() == "max") hi = a.f();
    }
    for (int i = 1; i < n.input_size() && i <= 2; ++i) {
        if (n.input(i).empty()) continue;
        auto t = init.find(n.input(i));
        if (t == init.end() || t->second->data_type() != onnx::TensorProto::FLOAT)
            return std::nullopt;
        const std::vector<float> v = float_data(*t->second, n.input(i), path);
        if (v.size() != 1) return std::nullopt;
        (i == 1 ? lo : hi) = v[0];
    }
    return std::pair{lo, hi};
}

/// Activation outputs whose Relu / Clip folds into the quantization of the
/// operands that read them (see write_qdq_model): output -> the producer's
/// input it clips. Only where the activation reads a Conv / MatMul / Gemm
/// output nothing else reads, every reader of it is a quantized operand, its
/// calibrated range starts at 0 and ends inside the clip, and it is no graph
/// output.
std::map<std::string, std::string> foldable_activations(
    const onnx::GraphProto& g, const std::map<std::string, const onnx::TensorProto*>& init,
    const std::map<std::string, TensorRange>& ranges, const std::string& path,
    const std::vector<std::string>& ops) {
    std::map<std::string, int> readers, operand_readers;
    std::map<std::string, const onnx::NodeProto*> producer;
    for (const auto& n : g.node()) {
        for (const auto& o : n.output()) producer[o] = &n;
        for (int i = 0; i < n.input_size(); ++i) {
            ++readers[n.input(i)];
            if (quantizable(n, ops) && is_operand(n, i)) ++operand_readers[n.input(i)];
        }
    }
    std::map<std::string, std::string> out;
    for (const auto& n : g.node()) {
        if (n.output_size() != 1 || n.input_size() < 1) continue;
        const auto bounds = activation_bounds(n, init, path);
        const std::string& x = n.output(0);
        const std::string& y = n.input(0);
        auto r = ranges.find(x);
        auto p = producer.find(y);
        if (!bounds || bounds->first != 0.f || r == ranges.end() || r->second.lo < 0.f ||
            !(r->second.hi <= bounds->second) || readers[x] == 0 ||
            readers[x] != operand_readers[x] || is_graph_output(g, x) || is_graph_output(g, y) ||
            readers[y] != 1 || p == producer.end() || !quantizable(*p->second, ops))
            continue;
        out[x] = y;
    }
    return out;
}

QdqSummary write_qdq_model(const std::string& in_path, const std::string& out_path,
                           const std::map<std::string, TensorRange>& ranges,
                           const QdqOptions& options) {
    std::error_code ec;
    TS_USER_CHECK(!std::filesystem::equivalent(in_path, out_path, ec))
        << "the quantized model would replace '" << in_path << "': give another output file";
    onnx::ModelProto model = onnx_import::read_model_proto(in_path);
    QdqSummary summary;
    summary.opset = default_opset(model);
    // Per-channel weights need opset 13, QuantizeLinear / DequantizeLinear
    // 10: an older model is converted when ONNX's converter can (the PP-OCR
    // direction classifier, opset 11: top-1 agreement with fp32 93.0 -> 95.3
    // % of 1,200 rows; opset-9 models as tf2onnx and PyTorch 1.x wrote them).
    if ((options.per_channel || summary.opset < 10) && summary.opset < 13) {
        if (std::optional<onnx::ModelProto> up =
                at_opset_13(model, ranges, options.float_shapes, options.ops)) {
            model = std::move(*up);
            summary.upgraded_from = summary.opset;
            summary.opset = 13;
        }
    }
    TS_USER_CHECK(summary.opset >= 10)
        << "model '" << in_path << "' uses opset " << summary.opset
        << "; QuantizeLinear / DequantizeLinear need opset 10 or newer, and ONNX's version "
           "converter could not bring it to opset 13";
    const bool per_channel = options.per_channel && summary.opset >= 13;
    summary.per_channel = per_channel;
    onnx::GraphProto* g = model.mutable_graph();
    Names names(*g);
    check_qdq_ops(options.ops);
    const std::vector<std::string>& ops = options.ops;
    const std::map<std::string, const onnx::TensorProto*> init = constant_tensors(*g);

    // How often each initializer is read, and by a quantized weight operand.
    std::map<std::string, int> reads, weight_reads;
    for (const auto& n : g->node()) {
        for (int i = 0; i < n.input_size(); ++i) ++reads[n.input(i)];
        if (!quantizable(n, ops) || !has_weights(n)) continue;
        for (int pos : operand_positions(n))
            if (pos < n.input_size() && init.count(n.input(pos)) &&
                init.at(n.input(pos))->data_type() == onnx::TensorProto::FLOAT)
                ++weight_reads[n.input(pos)];
    }

    // A Relu or Clip(0, c) between a Conv / MatMul / Gemm and the quantized
    // operands that alone read its output is folded into their quantization
    // (as quantize_static writes it): the producer's output is quantized
    // with the activation's range, whose zero point is 0 and whose top is
    // at most c, so QuantizeLinear's saturation is the activation exactly.
    // Then a runtime (ONNX Runtime's QLinearConv) sees DQ -> Conv -> Q.
    const std::map<std::string, std::string> folded =
        foldable_activations(*g, init, ranges, in_path, ops);
    std::map<std::string, const onnx::NodeProto*> producer;
    for (const auto& n : g->node())
        for (const auto& o : n.output()) producer[o] = &n;

    std::vector<onnx::NodeProto> weight_nodes, nodes;
    std::vector<onnx::TensorProto> new_init;
    std::map<std::string, std::string> dequantized;  // tensor -> its DequantizeLinear output
    std::map<std::string, std::vector<float>> scales;  // DequantizeLinear output -> its scales
    std::set<std::string> dropped;  // float initializers the quantized model no longer reads
    // Each quantized activation's scale and zero point initializers.
    std::map<std::string, std::pair<std::string, std::string>> params;
    auto add_activation = [&](const std::string& x) {
        // A MaxPool's output keeps its quantized input's scale and zero point
        // (the maximum commutes with the quantization; as quantize_static
        // writes it, so that runtimes pool the bytes themselves).
        const auto p = producer.find(x);
        const bool pooled = !folded.count(x) && p != producer.end() &&
                            p->second->op_type() == "MaxPool" && quantizable(*p->second, ops) &&
                            p->second->output_size() == 1 && dequantized.count(p->second->input(0));
        std::string s, z;
        float scale = 1.f;
        if (pooled) {
            const std::string& in = p->second->input(0);
            std::tie(s, z) = params.at(in);
            scale = scales.at(dequantized.at(in))[0];
        } else {
            auto r = ranges.find(x);
            TS_USER_CHECK(r != ranges.end())
                << "model '" << in_path << "': activation '" << x << "' has no calibrated range";
            const float lo = std::min(r->second.lo, 0.f), hi = std::max(r->second.hi, 0.f);
            TS_USER_CHECK(std::isfinite(lo) && std::isfinite(hi))
                << "model '" << in_path << "': activation '" << x
                << "' has a range that is not finite [" << lo << ", " << hi << "]";
            scale = (hi - lo) / 255.f;
            if (!(scale > 0)) scale = 1.f;
            const int zp = int(std::clamp(std::nearbyint(-lo / scale), 0.f, 255.f));
            s = names.fresh(x + "_scale");
            z = names.fresh(x + "_zero_point");
            new_init.push_back(
                initializer(s, graph::DType::Float32, std::vector<float>{scale}, false));
            new_init.push_back(
                initializer(z, graph::DType::UInt8, std::vector<uint8_t>{uint8_t(zp)}, false));
        }
        params[x] = {s, z};
        const std::string q = names.fresh(x + "_quantized"), dq = names.fresh(x + "_dequantized");
        const auto f = folded.find(x);
        nodes.push_back(make_node("QuantizeLinear", {f == folded.end() ? x : f->second, s, z}, q,
                                  names.fresh(q)));
        nodes.push_back(make_node("DequantizeLinear", {q, s, z}, dq, names.fresh(dq)));
        dequantized[x] = dq;
        scales[dq] = {scale};
        ++summary.activations;
    };
    auto add_weight = [&](const onnx::NodeProto& n, int pos) {
        const onnx::TensorProto& w = *init.at(n.input(pos));
        const std::vector<float> data = float_data(w, n.input(pos), in_path);
        const int rank = w.dims_size();
        const int axis = per_channel ? channel_axis(n, pos, rank) : -1;
        const int64_t channels = axis >= 0 ? w.dims(axis) : 1;
        int64_t inner = 1;  // elements after the channel axis
        for (int d = axis + 1; axis >= 0 && d < rank; ++d) inner *= w.dims(d);
        std::vector<float> amax(size_t(std::max<int64_t>(channels, 1)), 0.f);
        auto channel_of = [&](size_t i) { return axis < 0 ? 0 : size_t((int64_t(i) / inner) % channels); };
        for (size_t i = 0; i < data.size(); ++i)
            amax[channel_of(i)] = std::max(amax[channel_of(i)], std::fabs(data[i]));
        std::vector<float> scale(amax.size());
        for (size_t c = 0; c < amax.size(); ++c) scale[c] = amax[c] > 0 ? amax[c] / 127.f : 1.f;
        std::vector<int8_t> q8(data.size());
        for (size_t i = 0; i < data.size(); ++i)
            q8[i] = int8_t(std::clamp(std::nearbyint(data[i] / scale[channel_of(i)]), -127.f, 127.f));
        const std::string base = n.input(pos);
        onnx::TensorProto q;
        onnx_import::encode_tensor(graph::TensorType{graph::DType::Int8, {w.dims().begin(), w.dims().end()}},
                                   q8.data(), names.fresh(base + "_quantized"), &q);
        new_init.push_back(q);
        const std::string s = names.fresh(base + "_scale"), z = names.fresh(base + "_zero_point");
        new_init.push_back(initializer(s, graph::DType::Float32, scale, axis >= 0));
        new_init.push_back(initializer(z, graph::DType::Int8, std::vector<int8_t>(scale.size(), 0), axis >= 0));
        const std::string dq = names.fresh(base + "_dequantized");
        weight_nodes.push_back(dequantize_constant(q.name(), {s, z}, dq, names.fresh(dq), axis));
        dequantized[base] = dq;
        scales[dq] = scale;
        ++summary.weights;
    };
    // A Conv's or Gemm's constant float bias (one value per output channel,
    // read by this node only) as int32 with the scale x_scale * w_scale[c]
    // and a DequantizeLinear, as quantize_static writes it: ONNX Runtime
    // fuses DQ -> Conv -> Q into its integer QLinearConv only with such a
    // bias. (The bias moves by at most half of x_scale * w_scale.)
    auto add_bias = [&](onnx::NodeProto& n) {
        if (n.input_size() < 3 || n.input(2).empty() || !init.count(n.input(2)) ||
            reads[n.input(2)] != 1 || is_graph_output(*g, n.input(2)))
            return;
        const onnx::TensorProto& b = *init.at(n.input(2));
        if (b.data_type() != onnx::TensorProto::FLOAT || b.dims_size() != 1) return;
        auto xs = scales.find(n.input(0)), ws = scales.find(n.input(1));
        if (xs == scales.end() || ws == scales.end()) return;
        const std::vector<float> data = float_data(b, n.input(2), in_path);
        const std::vector<float>& w_scale = ws->second;
        if (w_scale.size() != 1 && w_scale.size() != data.size()) return;
        // One scale with per-tensor weights (a DequantizeLinear without an
        // axis, any opset), else one per output channel.
        const bool per_channel_bias = w_scale.size() > 1;
        std::vector<float> scale(per_channel_bias ? data.size() : 1);
        for (size_t c = 0; c < scale.size(); ++c) {
            scale[c] = xs->second[0] * w_scale[c];
            if (!(scale[c] > 0)) return;
        }
        std::vector<int32_t> q(data.size());
        for (size_t c = 0; c < data.size(); ++c) {
            const double v = std::nearbyint(double(data[c]) / scale[per_channel_bias ? c : 0]);
            if (std::fabs(v) > 2147483647.0) return;
            q[c] = int32_t(v);
        }
        const std::string base = n.input(2);
        onnx::TensorProto qt;
        onnx_import::encode_tensor(graph::TensorType{graph::DType::Int32, {int64_t(q.size())}},
                                   q.data(), names.fresh(base + "_quantized"), &qt);
        new_init.push_back(qt);
        const std::string s = names.fresh(base + "_scale");
        new_init.push_back(initializer(s, graph::DType::Float32, scale, per_channel_bias));
        const std::string dq = names.fresh(base + "_dequantized");
        weight_nodes.push_back(
            dequantize_constant(qt.name(), {s}, dq, names.fresh(dq), per_channel_bias ? 0 : -1));
        dropped.insert(base);
        n.set_input(2, dq);
        ++summary.biases;
    };

    // Float weights no other node reads are dropped (initializers with their
    // input entry, Constant nodes).
    for (const auto& [name, k] : weight_reads)
        if (reads[name] == k && !is_graph_output(*g, name)) dropped.insert(name);

    for (const onnx::NodeProto& original : g->node()) {
        if (original.output_size() == 1 && folded.count(original.output(0))) {
            ++summary.folded_activations;
            continue;
        }
        if (!quantizable(original, ops)) {
            nodes.push_back(original);
            continue;
        }
        onnx::NodeProto n = original;
        for (int pos : operand_positions(n)) {
            if (pos >= n.input_size() || n.input(pos).empty()) continue;
            const std::string x = n.input(pos);
            if (!dequantized.count(x)) {
                if (!init.count(x) && !has_weights(n) && !ranges.count(x))
                    continue;  // an Add's, Mul's or pool's operand that is not float
                if (!init.count(x))
                    add_activation(x);
                else if (has_weights(n) && init.at(x)->data_type() == onnx::TensorProto::FLOAT)
                    add_weight(n, pos);
                else
                    continue;  // an Add's constant operand stays float
            }
            n.set_input(pos, dequantized.at(x));
        }
        if (n.op_type() == "Conv" || n.op_type() == "Gemm") add_bias(n);
        nodes.push_back(n);
        ++summary.nodes;
    }

    // Constant nodes of dropped float weights and of biases now stored as
    // int32 (decided when their conv was reached).
    nodes.erase(std::remove_if(nodes.begin(), nodes.end(),
                               [&](const onnx::NodeProto& n) {
                                   return n.op_type() == "Constant" && n.output_size() == 1 &&
                                          dropped.count(n.output(0));
                               }),
                nodes.end());
    std::vector<onnx::TensorProto> kept;
    for (const auto& t : g->initializer())
        if (!dropped.count(t.name())) kept.push_back(t);
    kept.insert(kept.end(), new_init.begin(), new_init.end());
    g->clear_initializer();
    for (auto& t : kept) *g->add_initializer() = std::move(t);
    std::vector<onnx::ValueInfoProto> inputs;
    for (const auto& v : g->input())
        if (!dropped.count(v.name())) inputs.push_back(v);
    g->clear_input();
    for (auto& v : inputs) *g->add_input() = std::move(v);
    g->clear_node();
    for (auto& n : weight_nodes) *g->add_node() = std::move(n);
    for (auto& n : nodes) *g->add_node() = std::move(n);

    // Debian's checker knows the opsets up to 17 and IR versions up to 8: a
    // model of a newer IR (written by a newer exporter, with nothing the
    // quantization adds depending on it) is checked as IR 8, as the importer
    // reads it, and keeps its own version in the file.
    if (summary.opset <= 17) {
        onnx::ModelProto checked = model;
        if (checked.ir_version() > onnx::Version::IR_VERSION)
            checked.set_ir_version(onnx::Version::IR_VERSION);
        try {
            onnx::checker::check_model(checked);
        } catch (const std::exception& e) {
            TS_FAIL() << "the quantized model of '" << in_path << "' fails the ONNX checker: " << e.what();
        }
    }
    std::string bytes;
    TS_CHECK(model.SerializeToString(&bytes)) << "cannot serialize the quantized model";
    write_file_atomically(out_path, bytes);
    return summary;
}

}  // namespace tessera::frontend
