// com.microsoft fused ops as standard ONNX ops (see the header).
#include "engine/frontend/onnx/onnx_contrib_ops.h"

#include <map>

#include "engine/core/error.h"
#include "engine/frontend/onnx/onnx_contrib_attention.h"
#include "engine/frontend/onnx/onnx_node_rewrite.h"

namespace tessera::frontend::onnx_import {

namespace {

constexpr const char* kDomain = "com.microsoft";

float attr_float(const onnx::NodeProto& n, const std::string& name, float fallback) {
    const onnx::AttributeProto* a = find_attr(n, name);
    return a ? a->f() : fallback;
}

/// y = activation(x), as FusedConv and FusedGemm name it; `params` are its
/// alpha, beta (and for Clip min, max).
void activation(NodeRewriter& r, const onnx::NodeProto& n, const std::string& kind,
                const std::vector<float>& params, const std::string& x, const std::string& y,
                std::vector<onnx::NodeProto>& out) {
    auto param = [&](size_t i, float fallback) { return i < params.size() ? params[i] : fallback; };
    if (kind.empty()) {
        r.emit(n, "Identity", {x}, out, y);
    } else if (kind == "Relu" || kind == "Sigmoid" || kind == "Tanh") {
        r.emit(n, kind, {x}, out, y);
    } else if (kind == "LeakyRelu" || kind == "HardSigmoid") {
        const bool leaky = kind == "LeakyRelu";
        onnx::NodeProto& m = out.emplace_back();
        m.set_op_type(kind);
        m.set_name(r.fresh(node_name(n) + "_" + kind));
        m.add_input(x);
        m.add_output(y);
        auto* alpha = m.add_attribute();
        alpha->set_name("alpha");
        alpha->set_type(onnx::AttributeProto::FLOAT);
        alpha->set_f(param(0, leaky ? 0.01f : 0.2f));
        if (!leaky) {
            auto* beta = m.add_attribute();
            beta->set_name("beta");
            beta->set_type(onnx::AttributeProto::FLOAT);
            beta->set_f(param(1, 0.5f));
        }
    } else if (kind == "Clip") {
        TS_USER_CHECK(params.size() == 2) << r.where(n) << ": Clip activation needs min and max";
        r.emit(n, "Clip",
               {x, r.scalar_like(n, x, params[0], out), r.scalar_like(n, x, params[1], out)}, out, y);
    } else {
        TS_USER_FAIL() << r.where(n) << ": activation '" << kind << "' is not supported";
    }
}

std::string attr_string(const onnx::NodeProto& n, const std::string& name) {
    const onnx::AttributeProto* a = find_attr(n, name);
    return a ? a->s() : std::string();
}

void fused_conv(NodeRewriter& r, const onnx::NodeProto& n, std::vector<onnx::NodeProto>& out) {
    onnx::NodeProto conv = n;
    conv.clear_domain();
    conv.set_op_type("Conv");
    conv.set_name(r.fresh(node_name(n) + "_Conv"));
    erase_attr(conv, "activation");
    erase_attr(conv, "activation_params");
    while (conv.input_size() > 3) conv.mutable_input()->RemoveLast();
    conv.clear_output();
    conv.add_output(r.fresh(node_name(n) + "_conv"));
    std::string y = conv.output(0);
    out.push_back(conv);
    if (has_input(n, 3)) y = r.emit(n, "Add", {y, n.input(3)}, out);
    std::vector<float> params;
    if (const onnx::AttributeProto* p = find_attr(n, "activation_params"))
        params.assign(p->floats().begin(), p->floats().end());
    activation(r, n, attr_string(n, "activation"), params, y, n.output(0), out);
}

void fused_gemm(NodeRewriter& r, const onnx::NodeProto& n, std::vector<onnx::NodeProto>& out) {
    onnx::NodeProto gemm = n;
    gemm.clear_domain();
    gemm.set_op_type("Gemm");
    gemm.set_name(r.fresh(node_name(n) + "_Gemm"));
    for (const char* a : {"activation", "activation_alpha", "activation_beta", "activation_gamma"})
        erase_attr(gemm, a);
    gemm.clear_output();
    gemm.add_output(r.fresh(node_name(n) + "_gemm"));
    out.push_back(gemm);
    const std::string kind = attr_string(n, "activation");
    std::vector<float> params;
    if (kind == "LeakyRelu") params = {attr_float(n, "activation_alpha", 0.01f)};
    if (kind == "HardSigmoid")
        params = {attr_float(n, "activation_alpha", 0.2f), attr_float(n, "activation_beta", 0.5f)};
    activation(r, n, kind, params, gemm.output(0), n.output(0), out);
}

/// input + skip (+ bias), layer-normalized over the last axis with gamma
/// (and beta); output 3, when asked for, is the sum.
void skip_layer_norm(NodeRewriter& r, const onnx::NodeProto& n, std::vector<onnx::NodeProto>& out) {
    TS_USER_CHECK(n.input_size() >= 3) << r.where(n) << ": needs input, skip and gamma";
    for (int i : {1, 2}) refuse_output(r, n, i, "mean / inverse std");
    std::string s = r.emit(n, "Add", {n.input(0), n.input(1)}, out);
    if (has_input(n, 4)) s = r.emit(n, "Add", {s, n.input(4)}, out);
    if (n.output_size() > 3 && !n.output(3).empty()) r.emit(n, "Identity", {s}, out, n.output(3));
    r.layer_norm(n, s, n.input(2), has_input(n, 3) ? n.input(3) : "",
                 attr_float(n, "epsilon", 1e-12f), n.output(0), out);
}

/// ONNX Runtime's LayerNormalization before opset 17 (ONNX's definition,
/// over the last axis): Scale and B inputs, epsilon; the Mean and
/// InvStdDev outputs are refused.
void ort_layer_norm(NodeRewriter& r, const onnx::NodeProto& n, std::vector<onnx::NodeProto>& out) {
    TS_USER_CHECK(has_input(n, 0) && has_input(n, 1)) << r.where(n) << ": needs X and Scale";
    refuse_axis_but_last(r, n);
    for (int i : {1, 2}) refuse_output(r, n, i, "mean / inverse std");
    r.layer_norm(n, n.input(0), n.input(1), has_input(n, 2) ? n.input(2) : "",
                 attr_float(n, "epsilon", 1e-5f), n.output(0), out);
}

/// RMS normalization over the last axis (SimplifiedLayerNormalization, and
/// with SkipSimplifiedLayerNormalization of input + skip (+ bias), output 3
/// the sum): y = x / sqrt(mean(x^2) + epsilon) * scale.
void rms_norm(NodeRewriter& r, const onnx::NodeProto& n, bool skip, std::vector<onnx::NodeProto>& out) {
    TS_USER_CHECK(has_input(n, 0) && has_input(n, 1) && (!skip || has_input(n, 2)))
        << r.where(n) << (skip ? ": needs input, skip and gamma" : ": needs X and scale");
    if (!skip) refuse_axis_but_last(r, n);
    for (int i = 1; i < (skip ? 3 : 2); ++i) refuse_output(r, n, i, "mean / inverse std");
    std::string x = n.input(0);
    if (skip) {
        x = r.emit(n, "Add", {x, n.input(1)}, out);
        if (has_input(n, 3)) x = r.emit(n, "Add", {x, n.input(3)}, out);
        if (n.output_size() > 3 && !n.output(3).empty()) r.emit(n, "Identity", {x}, out, n.output(3));
    }
    const std::string mean_square = r.reduce(n, "ReduceMean", r.emit(n, "Mul", {x, x}, out), {-1}, true, out);
    const float eps = attr_float(n, "epsilon", skip ? 1e-12f : 1e-5f);
    const std::string rms =
        r.emit(n, "Sqrt", {r.emit(n, "Add", {mean_square, r.scalar_like(n, x, eps, out)}, out)}, out);
    r.emit(n, "Mul", {r.emit(n, "Div", {x, rms}, out), n.input(skip ? 2 : 1)}, out, n.output(0));
}

// ORT's quantized elementwise ops (QLinearAdd, QLinearMul, QLinearSigmoid,
// QLinearLeakyRelu, QLinearGlobalAveragePool, QLinearConcat), as their
// definition: dequantize the inputs, the float op, quantize the result.

/// DequantizeLinear(x, scale[, zero_point]) of the operands at inputs i..i+2.
std::string dequantized(NodeRewriter& r, const onnx::NodeProto& n, int i,
                        std::vector<onnx::NodeProto>& out) {
    TS_USER_CHECK(has_input(n, i) && has_input(n, i + 1))
        << r.where(n) << ": input " << i << " or its scale is missing";
    std::vector<std::string> in = {n.input(i), n.input(i + 1)};
    if (has_input(n, i + 2)) in.push_back(n.input(i + 2));
    return r.emit(n, "DequantizeLinear", in, out);
}

/// QuantizeLinear(y, scale, zero_point) into the node's output, the scale and
/// zero point at inputs i, i + 1; without a zero point, a zero of `like`'s
/// type (uint8 or int8, as the op's inputs).
void quantized(NodeRewriter& r, const onnx::NodeProto& n, const std::string& y, int i,
               const std::string& like, std::vector<onnx::NodeProto>& out) {
    TS_USER_CHECK(has_input(n, i)) << r.where(n) << ": the output scale (input " << i
                                   << ") is missing";
    std::string zero_point;
    if (has_input(n, i + 1)) {
        zero_point = n.input(i + 1);
    } else {
        TS_USER_CHECK(r.cast_like) << r.where(n)
                                   << ": an output without a zero point needs opset 15 or newer";
        zero_point = r.scalar_like(n, like, 0.0f, out);
    }
    r.emit(n, "QuantizeLinear", {y, n.input(i), zero_point}, out, n.output(0));
}

/// (A - a_zero_point) @ (B - b_zero_point) * a_scale * b_scale (+ bias) in
/// the ops ONNX Runtime's quantize_dynamic writes (MatMulInteger, Cast, Mul,
/// Add), which Tessera compiles to integer GEMMs: MatMulIntegerToFloat with
/// A's quantization as inputs 2 and 4, DynamicQuantizeMatMul with A float,
/// quantized at run time by DynamicQuantizeLinear (uint8), as ORT does.
void integer_matmul_to_float(NodeRewriter& r, const onnx::NodeProto& n, bool dynamic,
                             std::vector<onnx::NodeProto>& out) {
    // Inputs: MatMulIntegerToFloat A, B, a_scale, b_scale, a_zero_point,
    // b_zero_point, bias; DynamicQuantizeMatMul A, B, b_scale,
    // b_zero_point, bias.
    const int b_scale = dynamic ? 2 : 3, b_zero = dynamic ? 3 : 5, bias = dynamic ? 4 : 6;
    std::string a = n.input(0), a_scale, a_zero;
    if (dynamic) {
        onnx::NodeProto& q = out.emplace_back();
        q.set_op_type("DynamicQuantizeLinear");
        q.set_name(r.fresh(node_name(n) + "_quantize_A"));
        q.add_input(a);
        a = r.fresh(node_name(n) + "_A_quantized");
        a_scale = r.fresh(node_name(n) + "_A_scale");
        a_zero = r.fresh(node_name(n) + "_A_zero_point");
        for (const std::string& o : {a, a_scale, a_zero}) q.add_output(o);
    } else {
        a_scale = n.input(2);
        if (has_input(n, 4)) a_zero = n.input(4);
    }
    const std::string b_zero_point = has_input(n, b_zero) ? n.input(b_zero) : "";
    std::vector<std::string> operands = {a, n.input(1)};
    if (!a_zero.empty() || !b_zero_point.empty()) operands.push_back(a_zero);
    if (!b_zero_point.empty()) operands.push_back(b_zero_point);
    const std::string product = r.emit(n, "MatMulInteger", operands, out);
    onnx::AttributeProto to;
    to.set_name("to");
    to.set_type(onnx::AttributeProto::INT);
    to.set_i(onnx::TensorProto::FLOAT);
    const std::string real = r.emit(n, "Cast", {product}, out, "", {to});
    const std::string scale = r.emit(n, "Mul", {a_scale, n.input(b_scale)}, out);
    if (!has_input(n, bias)) {
        r.emit(n, "Mul", {real, scale}, out, n.output(0));
        return;
    }
    r.emit(n, "Add", {r.emit(n, "Mul", {real, scale}, out), n.input(bias)}, out, n.output(0));
}

bool qlinear(NodeRewriter& r, onnx::NodeProto& n, std::vector<onnx::NodeProto>& out) {
    const std::string& op = n.op_type();
    if (op == "QLinearAdd" || op == "QLinearMul") {
        const std::string a = dequantized(r, n, 0, out), b = dequantized(r, n, 3, out);
        quantized(r, n, r.emit(n, op == "QLinearAdd" ? "Add" : "Mul", {a, b}, out), 6, n.input(0),
                  out);
    } else if (op == "QLinearSigmoid" || op == "QLinearLeakyRelu") {
        const std::string x = dequantized(r, n, 0, out);
        std::string y;
        if (op == "QLinearSigmoid") {
            y = r.emit(n, "Sigmoid", {x}, out);
        } else {
            y = r.fresh(node_name(n) + "_leaky");
            activation(r, n, "LeakyRelu", {attr_float(n, "alpha", 0.01f)}, x, y, out);
        }
        quantized(r, n, y, 3, n.input(0), out);
    } else if (op == "QLinearGlobalAveragePool") {
        const onnx::AttributeProto* last = find_attr(n, "channels_last");
        TS_USER_CHECK(!last || last->i() == 0)
            << r.where(n) << ": channels_last = 1 is not supported";
        const std::string x = dequantized(r, n, 0, out);
        quantized(r, n, r.emit(n, "GlobalAveragePool", {x}, out), 3, n.input(0), out);
    } else if (op == "QLinearConcat") {
        // Y_scale, Y_zero_point, then (X, X_scale, X_zero_point) per operand.
        TS_USER_CHECK(n.input_size() >= 5 && (n.input_size() - 2) % 3 == 0)
            << r.where(n) << ": needs Y_scale, Y_zero_point and triples of X, scale, zero point";
        const onnx::AttributeProto* axis = find_attr(n, "axis");
        TS_USER_CHECK(axis != nullptr) << r.where(n) << ": attribute 'axis' is missing";
        std::vector<std::string> xs;
        for (int i = 2; i < n.input_size(); i += 3) xs.push_back(dequantized(r, n, i, out));
        const std::string y = r.emit(n, "Concat", xs, out, "", {*axis});
        TS_USER_CHECK(has_input(n, 1)) << r.where(n) << ": Y_zero_point is missing";
        r.emit(n, "QuantizeLinear", {y, n.input(0), n.input(1)}, out, n.output(0));
    } else {
        return false;
    }
    return true;
}

/// The inputs each expanded op reads unchecked (the others check theirs)
/// and, for all of them, an output: what a crafted node must have before it
/// is written out in standard ops (an opset-18 Mish without inputs crashed
/// the same way).
void check_arity(NodeRewriter& r, const onnx::NodeProto& n) {
    // clang-format off
    static const std::map<std::string, int> kInputs = {
        {"FusedConv", 2}, {"FusedGemm", 2}, {"Gelu", 1}, {"FastGelu", 1}, {"BiasGelu", 2},
        {"QuickGelu", 1}, {"SkipLayerNormalization", 0},
        {"QLinearAdd", 0}, {"QLinearMul", 0}, {"QLinearSigmoid", 0}, {"QLinearLeakyRelu", 0},
        {"QLinearGlobalAveragePool", 0}, {"QLinearConcat", 0},
        {"SkipSimplifiedLayerNormalization", 0}, {"Attention", 0}, {"MultiHeadAttention", 0},
        {"EmbedLayerNormalization", 0}, {"MatMulIntegerToFloat", 4}, {"DynamicQuantizeMatMul", 3}};
    // clang-format on
    auto it = kInputs.find(n.op_type());
    if (it == kInputs.end()) return;  // not one of ours: unsupported later
    for (int i = 0; i < it->second; ++i)
        TS_USER_CHECK(has_input(n, i)) << r.where(n) << ": input " << i << " is missing";
    TS_USER_CHECK(n.output_size() >= 1 && !n.output(0).empty())
        << r.where(n) << ": the node has no output";
}

bool expand(NodeRewriter& r, const Graphs& graphs, onnx::NodeProto& n,
            std::vector<onnx::NodeProto>& out) {
    // ORT registers SimplifiedLayerNormalization in the default domain, and
    // LayerNormalization there for opsets before ONNX's own (17): its
    // optimizer writes both into models of any opset.
    if (n.op_type() == "SimplifiedLayerNormalization" && (n.domain().empty() || n.domain() == kDomain)) {
        rms_norm(r, n, false, out);
        return true;
    }
    if (n.op_type() == "LayerNormalization" && n.domain().empty() && r.opset < 17) {
        ort_layer_norm(r, n, out);
        return true;
    }
    if (n.domain() != kDomain) return false;
    check_arity(r, n);
    if (expand_contrib_attention(r, graphs, n, out)) return true;
    const std::string& op = n.op_type();
    if (op == "FusedConv") {
        fused_conv(r, n, out);
    } else if (op == "FusedGemm") {
        fused_gemm(r, n, out);
    } else if (op == "Gelu") {
        r.gelu(n, n.input(0), n.output(0), false, out);
    } else if (op == "FastGelu") {
        const std::string x = has_input(n, 1) ? r.emit(n, "Add", {n.input(0), n.input(1)}, out) : n.input(0);
        r.gelu(n, x, n.output(0), true, out);
    } else if (op == "BiasGelu") {
        r.gelu(n, r.emit(n, "Add", {n.input(0), n.input(1)}, out), n.output(0), false, out);
    } else if (op == "QuickGelu") {
        const std::string ax =
            r.emit(n, "Mul", {n.input(0), r.scalar_like(n, n.input(0), attr_float(n, "alpha", 1.702f), out)}, out);
        r.emit(n, "Mul", {n.input(0), r.emit(n, "Sigmoid", {ax}, out)}, out, n.output(0));
    } else if (op == "SkipLayerNormalization") {
        skip_layer_norm(r, n, out);
    } else if (op == "SkipSimplifiedLayerNormalization") {
        rms_norm(r, n, true, out);
    } else if (op == "MatMulIntegerToFloat" || op == "DynamicQuantizeMatMul") {
        integer_matmul_to_float(r, n, op == "DynamicQuantizeMatMul", out);
    } else {
        return qlinear(r, n, out);
    }
    return true;
}

}  // namespace

void expand_contrib_ops(onnx::ModelProto& model, const std::string& origin) {
    // Most models have none: no name collection, no copy of the node lists.
    int64_t opset = 0;
    for (const auto& op : model.opset_import())
        if (op.domain().empty() || op.domain() == "ai.onnx") opset = op.version();
    if (!uses_domain(model.graph(), kDomain) && !uses_op(model.graph(), "SimplifiedLayerNormalization") &&
        !(opset < 17 && uses_op(model.graph(), "LayerNormalization")))
        return;
    NodeRewriter r(origin, "", model.graph());
    r.cast_like = opset >= 15;
    r.opset = opset;
    rewrite_nodes(r, *model.mutable_graph(), expand);
}

}  // namespace tessera::frontend::onnx_import
