// Newer-opset models rewritten into their opset-17 forms (see the header).
#include "engine/frontend/onnx/onnx_opset_adapter.h"

#include <functional>
#include <map>
#include <vector>

#include "engine/core/error.h"
#include "engine/frontend/onnx/onnx_node_rewrite.h"
#include "onnx/defs/schema.h"

namespace tessera::frontend::onnx_import {

namespace {

using Rewriter = NodeRewriter;

struct OpVersion {
    const char* op;
    int64_t since;
    bool same_signature;  // only type constraints changed from the version before
};

constexpr OpVersion kHistory[] = {
#include "engine/frontend/onnx/opset_history.inc"
};

bool is_default_domain(const onnx::NodeProto& n) {
    return n.domain().empty() || n.domain() == "ai.onnx";
}

/// Drops attribute `name` when it holds its default; otherwise refuses the node.
void drop_default_attr(const Rewriter& r, onnx::NodeProto& n, const std::string& name,
                       const std::function<bool(const onnx::AttributeProto&)>& is_default,
                       const std::string& why) {
    if (const onnx::AttributeProto* a = find_attr(n, name)) {
        TS_USER_CHECK(is_default(*a))
            << r.where(n) << ": attribute " << name << " " << why << " is not supported";
        erase_attr(n, name);
    }
}

bool int_is(const onnx::AttributeProto& a, int64_t v) { return a.i() == v; }
bool string_is(const onnx::AttributeProto& a, const std::string& v) { return a.s() == v; }
bool ints_all_one(const onnx::AttributeProto& a) {
    for (int64_t v : a.ints())
        if (v != 1) return false;
    return true;
}

// ---- adapters: each rewrites one node into opset-17 nodes (appended to `out`)

/// Leaves `n` for the importer in its newer form (kImportTimeDomain): its
/// inputs are values the importer knows and ONNX 1.12 does not (a Reduce's
/// axes computed from shapes, a Pad's axes).
void defer_to_import(onnx::NodeProto n, std::vector<onnx::NodeProto>& out) {
    n.set_domain(kImportTimeDomain);
    out.push_back(std::move(n));
}

/// Ops the importer converts in their newer form: new ops it composes of
/// opset-17 ops (onnx_attention.cpp, onnx_composed_ops.cpp), CumProd-26,
/// SpaceToDepth-28's mode.
void adapt_at_import(Rewriter&, const Graphs&, onnx::NodeProto n,
                     std::vector<onnx::NodeProto>& out) {
    defer_to_import(std::move(n), out);
}

/// Range-27: stash_type 1 (float) is how Tessera computes float16 ranges.
void adapt_range(Rewriter& r, const Graphs&, onnx::NodeProto n, std::vector<onnx::NodeProto>& out) {
    drop_default_attr(
        r, n, "stash_type", [](const auto& a) { return int_is(a, 1); }, "other than 1 (float)");
    out.push_back(std::move(n));
}

/// Reduce*-18: axes moved from an attribute to an optional input.
void adapt_reduce(Rewriter&, const Graphs& graphs, onnx::NodeProto n,
                  std::vector<onnx::NodeProto>& out) {
    std::vector<int64_t> axes;
    if (n.input_size() > 1 && !n.input(1).empty() && !constant_ints(graphs, n.input(1), axes)) {
        defer_to_import(std::move(n), out);  // axes computed in the graph
        return;
    }
    const onnx::AttributeProto* noop = find_attr(n, "noop_with_empty_axes");
    const bool identity = axes.empty() && noop && noop->i() != 0;
    erase_attr(n, "noop_with_empty_axes");
    while (n.input_size() > 1) n.mutable_input()->RemoveLast();
    if (identity) {
        n.set_op_type("Identity");
        n.clear_attribute();
    } else if (!axes.empty()) {
        onnx::AttributeProto* a = n.add_attribute();
        a->set_name("axes");
        a->set_type(onnx::AttributeProto::INTS);
        for (int64_t v : axes) a->add_ints(v);
    }
    out.push_back(std::move(n));
}

/// Split-18: num_outputs (equal to the outputs' count) is implied at 13.
void adapt_split(Rewriter& r, const Graphs&, onnx::NodeProto n, std::vector<onnx::NodeProto>& out) {
    if (const onnx::AttributeProto* a = find_attr(n, "num_outputs")) {
        TS_USER_CHECK(a->i() == n.output_size())
            << r.where(n) << ": num_outputs " << a->i() << " differs from its " << n.output_size()
            << " outputs";
    }
    erase_attr(n, "num_outputs");
    out.push_back(std::move(n));
}

/// Resize-18/19: axes, keep_aspect_ratio_policy, half_pixel_symmetric and
/// antialias are read by the importer.
void adapt_resize(Rewriter& r, const Graphs&, onnx::NodeProto n,
                  std::vector<onnx::NodeProto>& out) {
    const onnx::AttributeProto* antialias = find_attr(n, "antialias");
    const onnx::AttributeProto* axes = find_attr(n, "axes");
    const onnx::AttributeProto* policy = find_attr(n, "keep_aspect_ratio_policy");
    const onnx::AttributeProto* ctm = find_attr(n, "coordinate_transformation_mode");
    if ((antialias && antialias->i() != 0) || (axes && axes->ints_size() > 0) ||
        (policy && policy->s() != "stretch") || (ctm && ctm->s() == "half_pixel_symmetric")) {
        defer_to_import(std::move(n), out);
        return;
    }
    drop_default_attr(
        r, n, "antialias", [](const auto& a) { return int_is(a, 0); }, "(antialiasing)");
    drop_default_attr(
        r, n, "axes", [](const auto& a) { return a.ints_size() == 0; }, "(a subset of axes)");
    drop_default_attr(
        r, n, "keep_aspect_ratio_policy", [](const auto& a) { return string_is(a, "stretch"); },
        "other than stretch");
    out.push_back(std::move(n));
}

/// Pad-18: an optional axes input (the pads of a subset of axes).
void adapt_pad(Rewriter&, const Graphs&, onnx::NodeProto n, std::vector<onnx::NodeProto>& out) {
    if (n.input_size() > 3 && !n.input(3).empty()) {
        defer_to_import(std::move(n), out);
        return;
    }
    while (n.input_size() > 3) n.mutable_input()->RemoveLast();
    out.push_back(std::move(n));
}

/// AveragePool-19 and LpPool-18: dilations (and LpPool's ceil_mode), which
/// ONNX 1.12 does not know, are read by the importer.
void adapt_pool(Rewriter&, const Graphs&, onnx::NodeProto n, std::vector<onnx::NodeProto>& out) {
    const onnx::AttributeProto* dilations = find_attr(n, "dilations");
    const onnx::AttributeProto* ceil = find_attr(n, "ceil_mode");
    if ((dilations && !ints_all_one(*dilations)) ||
        (n.op_type() == "LpPool" && ceil && ceil->i() != 0)) {
        defer_to_import(std::move(n), out);
        return;
    }
    erase_attr(n, "dilations");
    if (n.op_type() == "LpPool") erase_attr(n, "ceil_mode");
    out.push_back(std::move(n));
}

/// Cast/CastLike-19/25: saturate and round_mode only change float8/float4
/// results; a Cast that sets them is left for the importer, which reads them
/// (onnx_dtype.cpp).
void adapt_cast(Rewriter&, const Graphs&, onnx::NodeProto n, std::vector<onnx::NodeProto>& out) {
    const onnx::AttributeProto* saturate = find_attr(n, "saturate");
    const onnx::AttributeProto* mode = find_attr(n, "round_mode");
    if ((saturate && saturate->i() != 1) || (mode && mode->s() != "up")) {
        defer_to_import(std::move(n), out);
        return;
    }
    erase_attr(n, "saturate");
    erase_attr(n, "round_mode");
    out.push_back(std::move(n));
}

/// QuantizeLinear-19/21/23, DequantizeLinear-19/21/23: left for the importer,
/// which reads block_size, output_dtype and saturate and takes the float8,
/// int4/uint4, int2/uint2 and float16 scales ONNX 1.12's shape inference
/// rejects; precision stays at its default.
void adapt_quant(Rewriter& r, const Graphs&, onnx::NodeProto n, std::vector<onnx::NodeProto>& out) {
    drop_default_attr(
        r, n, "precision", [](const auto& a) { return int_is(a, 0); }, "(an explicit precision)");
    defer_to_import(std::move(n), out);
}

/// An activation's one input and one output, checked before it is written
/// out in other ops (a Mish without inputs crashed, found by fuzz_import_fold).
void check_unary(Rewriter& r, const onnx::NodeProto& n) {
    TS_USER_CHECK(n.input_size() == 1 && !n.input(0).empty() && n.output_size() == 1 &&
                  !n.output(0).empty())
        << r.where(n) << ": " << n.op_type() << " takes one input and gives one output (the node has "
        << n.input_size() << " and " << n.output_size() << ")";
}

/// Gelu-20: 0.5 x (1 + erf(x / sqrt 2)), or with approximate = "tanh"
/// 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))).
void adapt_gelu(Rewriter& r, const Graphs&, onnx::NodeProto n, std::vector<onnx::NodeProto>& out) {
    check_unary(r, n);
    const onnx::AttributeProto* a = find_attr(n, "approximate");
    const std::string mode = a ? a->s() : "none";
    TS_USER_CHECK(mode == "none" || mode == "tanh")
        << r.where(n) << ": approximate '" << mode << "' is not none or tanh";
    r.gelu(n, n.input(0), n.output(0), mode == "tanh", out);
}

/// Mish-18: x tanh(softplus(x)).
void adapt_mish(Rewriter& r, const Graphs&, onnx::NodeProto n, std::vector<onnx::NodeProto>& out) {
    check_unary(r, n);
    std::string t = r.emit(n, "Tanh", {r.emit(n, "Softplus", {n.input(0)}, out)}, out);
    r.emit(n, "Mul", {n.input(0), t}, out, n.output(0));
}

/// Swish-24: x sigmoid(alpha x).
void adapt_swish(Rewriter& r, const Graphs&, onnx::NodeProto n, std::vector<onnx::NodeProto>& out) {
    check_unary(r, n);
    const onnx::AttributeProto* a = find_attr(n, "alpha");
    const float alpha = a ? a->f() : 1.0f;
    std::string ax =
        alpha == 1.0f
            ? n.input(0)
            : r.emit(n, "Mul", {n.input(0), r.scalar_like(n, n.input(0), alpha, out)}, out);
    r.emit(n, "Mul", {n.input(0), r.emit(n, "Sigmoid", {ax}, out)}, out, n.output(0));
}

using Adapter = void (*)(Rewriter&, const Graphs&, onnx::NodeProto, std::vector<onnx::NodeProto>&);

const std::map<std::string, Adapter>& adapters() {
    static const std::map<std::string, Adapter> table = {
        {"ReduceL1", adapt_reduce},
        {"ReduceL2", adapt_reduce},
        {"ReduceLogSum", adapt_reduce},
        {"ReduceLogSumExp", adapt_reduce},
        {"ReduceMax", adapt_reduce},
        {"ReduceMean", adapt_reduce},
        {"ReduceMin", adapt_reduce},
        {"ReduceProd", adapt_reduce},
        {"ReduceSumSquare", adapt_reduce},
        {"Split", adapt_split},
        {"Resize", adapt_resize},
        {"Pad", adapt_pad},
        {"AveragePool", adapt_pool},
        {"LpPool", adapt_pool},
        {"Cast", adapt_cast},
        {"CastLike", adapt_cast},
        {"QuantizeLinear", adapt_quant},
        {"DequantizeLinear", adapt_quant},
        {"Gelu", adapt_gelu},
        {"Mish", adapt_mish},
        {"Swish", adapt_swish},
        {"Range", adapt_range},
    };
    static const std::map<std::string, Adapter> all = [] {
        std::map<std::string, Adapter> t = table;
        for (const std::string& op : ops_adapted_at_import())
            if (!t.count(op)) t[op] = adapt_at_import;
        return t;
    }();
    return all;
}

/// The first version in (17, opset] of `op` that changed its signature, or 0.
int64_t first_changed_version(const std::string& op, int64_t opset) {
    for (const OpVersion& v : kHistory)
        if (op == v.op && v.since > kOnnx112Opset && v.since <= opset && !v.same_signature)
            return v.since;
    return 0;
}

bool adapt_node(NodeRewriter& r, int64_t opset, const Graphs& graphs, onnx::NodeProto& n,
                std::vector<onnx::NodeProto>& out) {
    if (!is_default_domain(n)) return false;
    int64_t changed = first_changed_version(n.op_type(), opset);
    auto it = adapters().find(n.op_type());
    const bool known_at_17 = onnx::OpSchemaRegistry::Schema(n.op_type(), int(kOnnx112Opset), "");
    // An op new since 17 whose first version the table does not list
    // (GroupNormalization-18, deprecated since) is adapted all the same.
    if (!changed && !known_at_17 && it != adapters().end()) changed = opset;
    if (!changed) return false;
    TS_USER_CHECK(it != adapters().end())
        << r.where(n) << ": unsupported op " << n.op_type() << " ("
        << (known_at_17 ? "its form changed in opset " : "new in opset ") << changed
        << "; Tessera reads opsets above 17 through their opset-17 forms)";
    it->second(r, graphs, std::move(n), out);
    return true;
}

}  // namespace

int64_t newest_adaptable_opset() {
    int64_t newest = kOnnx112Opset;
    for (const OpVersion& v : kHistory) newest = std::max(newest, v.since);
    return newest;
}

void adapt_to_opset17(onnx::ModelProto& model, const std::string& origin) {
    int64_t opset = 0;
    for (const auto& op : model.opset_import())
        if (op.domain().empty() || op.domain() == "ai.onnx") opset = op.version();
    NodeRewriter r(origin, ", opset " + std::to_string(opset), model.graph());
    rewrite_nodes(r, *model.mutable_graph(),
                  [opset](NodeRewriter& r, const Graphs& graphs, onnx::NodeProto& n,
                          std::vector<onnx::NodeProto>& out) {
                      return adapt_node(r, opset, graphs, n, out);
                  });
    for (auto& op : *model.mutable_opset_import())
        if (op.domain().empty() || op.domain() == "ai.onnx") op.set_version(kOnnx112Opset);
    if (uses_domain(model.graph(), kImportTimeDomain)) {
        onnx::OperatorSetIdProto* op = model.add_opset_import();
        op->set_domain(kImportTimeDomain);
        op->set_version(1);
    }
}

const std::vector<std::string>& ops_adapted_at_import() {
    // clang-format off
    static const std::vector<std::string> ops = {
        // Reduce*-18 with computed axes, Pad-18 with axes.
        "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax", "ReduceMean",
        "ReduceMin", "ReduceProd", "ReduceSumSquare", "Pad",
        // New ops the importer composes of opset-17 ops or converts itself.
        "Attention", "RMSNormalization", "RotaryEmbedding", "LinearAttention", "GroupNormalization",
        "CenterCropPad", "SwiGLU", "AffineGrid", "CausalConvWithState", "TensorScatter", "Col2Im",
        "CumProd", "BitwiseAnd", "BitwiseOr", "BitwiseXor", "BitwiseNot",
        // Newer attributes or inputs of older ops.
        "SpaceToDepth", "Cast", "CastLike", "Resize", "DFT", "AveragePool", "LpPool", "GridSample",
        "OptionalHasElement", "BitCast", "QuantizeLinear", "DequantizeLinear"};
    // clang-format on
    return ops;
}

}  // namespace tessera::frontend::onnx_import
