// Newer-opset models rewritten into their opset-17 forms (see the header).
#include "engine/frontend/onnx/onnx_opset_adapter.h"

#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <set>
#include <vector>

#include "engine/core/error.h"
#include "onnx/defs/schema.h"

namespace tessera::frontend::onnx_import {

namespace {

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

/// Where the rewrite is, for errors and fresh names.
struct Rewriter {
    const std::string& origin;
    int64_t opset;
    std::set<std::string> names;
    int counter = 0;

    std::string fresh(const std::string& base) {
        std::string n;
        do {
            n = base + "_opset17_" + std::to_string(counter++);
        } while (names.count(n));
        names.insert(n);
        return n;
    }
};

std::string node_name(const onnx::NodeProto& n) {
    return n.name().empty() ? n.output_size() ? n.output(0) : n.op_type() : n.name();
}

std::string where(const Rewriter& r, const onnx::NodeProto& n) {
    return r.origin + ": node '" + node_name(n) + "' (op " + n.op_type() + ", opset " +
           std::to_string(r.opset) + ")";
}

const onnx::AttributeProto* find_attr(const onnx::NodeProto& n, const std::string& name) {
    for (const auto& a : n.attribute())
        if (a.name() == name) return &a;
    return nullptr;
}

void erase_attr(onnx::NodeProto& n, const std::string& name) {
    auto* attrs = n.mutable_attribute();
    for (int i = 0; i < attrs->size(); ++i)
        if (attrs->Get(i).name() == name) {
            attrs->DeleteSubrange(i, 1);
            return;
        }
}

/// Drops attribute `name` when it holds its default; otherwise refuses the node.
void drop_default_attr(const Rewriter& r, onnx::NodeProto& n, const std::string& name,
                       const std::function<bool(const onnx::AttributeProto&)>& is_default,
                       const std::string& why) {
    if (const onnx::AttributeProto* a = find_attr(n, name)) {
        TS_USER_CHECK(is_default(*a)) << where(r, n) << ": attribute " << name << " " << why
                                      << " is not supported";
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

/// The int64 values of constant `name` (an initializer or a Constant node of
/// `graphs`, innermost last), or false when it is not a constant.
bool constant_ints(const std::vector<const onnx::GraphProto*>& graphs, const std::string& name,
                   std::vector<int64_t>& out) {
    auto read = [&](const onnx::TensorProto& t) {
        if (t.data_type() != onnx::TensorProto::INT64) return false;
        out.clear();
        if (t.has_raw_data()) {
            const std::string& raw = t.raw_data();
            if (raw.size() % 8) return false;
            out.resize(raw.size() / 8);
            std::memcpy(out.data(), raw.data(), raw.size());
        } else {
            out.assign(t.int64_data().begin(), t.int64_data().end());
        }
        return true;
    };
    for (auto g = graphs.rbegin(); g != graphs.rend(); ++g) {
        for (const auto& init : (*g)->initializer())
            if (init.name() == name) return read(init);
        for (const auto& n : (*g)->node())
            if (n.op_type() == "Constant" && n.output_size() == 1 && n.output(0) == name) {
                const onnx::AttributeProto* v = find_attr(n, "value");
                if (v && v->has_t()) return read(v->t());
                const onnx::AttributeProto* vs = find_attr(n, "value_ints");
                if (vs) {
                    out.assign(vs->ints().begin(), vs->ints().end());
                    return true;
                }
                return false;
            }
    }
    return false;
}

// ---- adapters: each rewrites one node into opset-17 nodes (appended to `out`)

using Graphs = std::vector<const onnx::GraphProto*>;

/// Reduce*-18: axes moved from an attribute to an optional input.
void adapt_reduce(Rewriter& r, const Graphs& graphs, onnx::NodeProto n,
                  std::vector<onnx::NodeProto>& out) {
    std::vector<int64_t> axes;
    if (n.input_size() > 1 && !n.input(1).empty()) {
        TS_USER_CHECK(constant_ints(graphs, n.input(1), axes))
            << where(r, n) << ": axes '" << n.input(1)
            << "' must be a constant int64 tensor (Tessera compiles static reductions)";
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
            << where(r, n) << ": num_outputs " << a->i() << " differs from its "
            << n.output_size() << " outputs";
    }
    erase_attr(n, "num_outputs");
    out.push_back(std::move(n));
}

void adapt_resize(Rewriter& r, const Graphs&, onnx::NodeProto n, std::vector<onnx::NodeProto>& out) {
    drop_default_attr(r, n, "antialias", [](const auto& a) { return int_is(a, 0); }, "(antialiasing)");
    drop_default_attr(r, n, "axes", [](const auto& a) { return a.ints_size() == 0; }, "(a subset of axes)");
    drop_default_attr(r, n, "keep_aspect_ratio_policy",
                      [](const auto& a) { return string_is(a, "stretch"); }, "other than stretch");
    out.push_back(std::move(n));
}

void adapt_pad(Rewriter& r, const Graphs&, onnx::NodeProto n, std::vector<onnx::NodeProto>& out) {
    TS_USER_CHECK(n.input_size() < 4 || n.input(3).empty())
        << where(r, n) << ": the axes input (padding a subset of axes) is not supported";
    while (n.input_size() > 3) n.mutable_input()->RemoveLast();
    out.push_back(std::move(n));
}

void adapt_pool(Rewriter& r, const Graphs&, onnx::NodeProto n, std::vector<onnx::NodeProto>& out) {
    drop_default_attr(r, n, "dilations", ints_all_one, "other than 1");
    if (n.op_type() == "LpPool")
        drop_default_attr(r, n, "ceil_mode", [](const auto& a) { return int_is(a, 0); }, "(ceil)");
    out.push_back(std::move(n));
}

/// Cast/CastLike-19/24: saturate and round_mode only change float8/float4 results.
void adapt_cast(Rewriter&, const Graphs&, onnx::NodeProto n, std::vector<onnx::NodeProto>& out) {
    erase_attr(n, "saturate");
    erase_attr(n, "round_mode");
    out.push_back(std::move(n));
}

/// QuantizeLinear-19/21/23, DequantizeLinear-21/23: block quantization and
/// output_dtype/precision left at their defaults; saturate only for float8.
void adapt_quant(Rewriter& r, const Graphs&, onnx::NodeProto n, std::vector<onnx::NodeProto>& out) {
    auto zero = [](const onnx::AttributeProto& a) { return int_is(a, 0); };
    drop_default_attr(r, n, "block_size", zero, "(block quantization)");
    drop_default_attr(r, n, "output_dtype", zero, "(an explicit output type)");
    drop_default_attr(r, n, "precision", zero, "(an explicit precision)");
    erase_attr(n, "saturate");
    out.push_back(std::move(n));
}

/// A scalar float constant of x's dtype: Constant + CastLike.
std::string scalar_like(Rewriter& r, const onnx::NodeProto& n, float v,
                        std::vector<onnx::NodeProto>& out) {
    onnx::NodeProto c;
    c.set_op_type("Constant");
    c.set_name(r.fresh(node_name(n) + "_c"));
    c.add_output(r.fresh(node_name(n) + "_c"));
    onnx::AttributeProto* a = c.add_attribute();
    a->set_name("value_float");
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(v);
    onnx::NodeProto cast;
    cast.set_op_type("CastLike");
    cast.set_name(r.fresh(node_name(n) + "_cast"));
    cast.add_input(c.output(0));
    cast.add_input(n.input(0));
    cast.add_output(r.fresh(node_name(n) + "_c"));
    out.push_back(std::move(c));
    out.push_back(cast);
    return cast.output(0);
}

/// Appends `op(inputs)` and returns its output name (`result` when given).
std::string emit(Rewriter& r, const onnx::NodeProto& n, const std::string& op,
                 std::vector<std::string> inputs, std::vector<onnx::NodeProto>& out,
                 const std::string& result = "") {
    onnx::NodeProto m;
    m.set_op_type(op);
    m.set_name(r.fresh(node_name(n) + "_" + op));
    for (const auto& i : inputs) m.add_input(i);
    m.add_output(result.empty() ? r.fresh(node_name(n) + "_" + op) : result);
    out.push_back(m);
    return m.output(0);
}

/// Gelu-20: 0.5 x (1 + erf(x / sqrt 2)), or with approximate = "tanh"
/// 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))).
void adapt_gelu(Rewriter& r, const Graphs&, onnx::NodeProto n, std::vector<onnx::NodeProto>& out) {
    const onnx::AttributeProto* a = find_attr(n, "approximate");
    const std::string mode = a ? a->s() : "none";
    TS_USER_CHECK(mode == "none" || mode == "tanh")
        << where(r, n) << ": approximate '" << mode << "' is not none or tanh";
    const std::string x = n.input(0);
    std::string inner;
    if (mode == "none") {
        inner = emit(r, n, "Erf", {emit(r, n, "Mul", {x, scalar_like(r, n, float(M_SQRT1_2), out)}, out)}, out);
    } else {
        std::string x3 = emit(r, n, "Mul", {emit(r, n, "Mul", {x, x}, out), x}, out);
        std::string sum = emit(r, n, "Add", {x, emit(r, n, "Mul", {x3, scalar_like(r, n, 0.044715f, out)}, out)}, out);
        inner = emit(r, n, "Tanh", {emit(r, n, "Mul", {sum, scalar_like(r, n, float(std::sqrt(2.0 / M_PI)), out)}, out)}, out);
    }
    std::string one_plus = emit(r, n, "Add", {inner, scalar_like(r, n, 1.0f, out)}, out);
    std::string half_x = emit(r, n, "Mul", {x, scalar_like(r, n, 0.5f, out)}, out);
    emit(r, n, "Mul", {half_x, one_plus}, out, n.output(0));
}

/// Mish-18: x tanh(softplus(x)).
void adapt_mish(Rewriter& r, const Graphs&, onnx::NodeProto n, std::vector<onnx::NodeProto>& out) {
    std::string t = emit(r, n, "Tanh", {emit(r, n, "Softplus", {n.input(0)}, out)}, out);
    emit(r, n, "Mul", {n.input(0), t}, out, n.output(0));
}

/// Swish-24: x sigmoid(alpha x).
void adapt_swish(Rewriter& r, const Graphs&, onnx::NodeProto n, std::vector<onnx::NodeProto>& out) {
    const onnx::AttributeProto* a = find_attr(n, "alpha");
    const float alpha = a ? a->f() : 1.0f;
    std::string ax = alpha == 1.0f ? n.input(0)
                                   : emit(r, n, "Mul", {n.input(0), scalar_like(r, n, alpha, out)}, out);
    emit(r, n, "Mul", {n.input(0), emit(r, n, "Sigmoid", {ax}, out)}, out, n.output(0));
}

using Adapter = void (*)(Rewriter&, const Graphs&, onnx::NodeProto, std::vector<onnx::NodeProto>&);

const std::map<std::string, Adapter>& adapters() {
    static const std::map<std::string, Adapter> table = {
        {"ReduceL1", adapt_reduce},        {"ReduceL2", adapt_reduce},
        {"ReduceLogSum", adapt_reduce},    {"ReduceLogSumExp", adapt_reduce},
        {"ReduceMax", adapt_reduce},       {"ReduceMean", adapt_reduce},
        {"ReduceMin", adapt_reduce},       {"ReduceProd", adapt_reduce},
        {"ReduceSumSquare", adapt_reduce}, {"Split", adapt_split},
        {"Resize", adapt_resize},          {"Pad", adapt_pad},
        {"AveragePool", adapt_pool},       {"LpPool", adapt_pool},
        {"Cast", adapt_cast},              {"CastLike", adapt_cast},
        {"QuantizeLinear", adapt_quant},   {"DequantizeLinear", adapt_quant},
        {"Gelu", adapt_gelu},              {"Mish", adapt_mish},
        {"Swish", adapt_swish},
    };
    return table;
}

/// The first version in (17, opset] of `op` that changed its signature, or 0.
int64_t first_changed_version(const std::string& op, int64_t opset) {
    for (const OpVersion& v : kHistory)
        if (op == v.op && v.since > kOnnx112Opset && v.since <= opset && !v.same_signature)
            return v.since;
    return 0;
}

void adapt_graph(Rewriter& r, onnx::GraphProto& g, Graphs& graphs) {
    graphs.push_back(&g);
    std::vector<onnx::NodeProto> out;
    out.reserve(size_t(g.node_size()));
    for (onnx::NodeProto& n : *g.mutable_node()) {
        for (auto& a : *n.mutable_attribute()) {
            if (a.has_g()) adapt_graph(r, *a.mutable_g(), graphs);
            for (auto& sub : *a.mutable_graphs()) adapt_graph(r, sub, graphs);
        }
        const int64_t changed = is_default_domain(n) ? first_changed_version(n.op_type(), r.opset) : 0;
        if (!changed) {
            out.push_back(std::move(n));
            continue;
        }
        auto it = adapters().find(n.op_type());
        const bool known_at_17 = onnx::OpSchemaRegistry::Schema(n.op_type(), int(kOnnx112Opset), "");
        TS_USER_CHECK(it != adapters().end())
            << where(r, n) << ": unsupported op " << n.op_type() << " ("
            << (known_at_17 ? "its form changed in opset " : "new in opset ") << changed
            << "; Tessera reads opsets above 17 through their opset-17 forms)";
        it->second(r, graphs, std::move(n), out);
    }
    g.clear_node();
    for (auto& n : out) *g.add_node() = std::move(n);
    graphs.pop_back();
}

void collect_names(const onnx::GraphProto& g, std::set<std::string>& names) {
    for (const auto& v : g.input()) names.insert(v.name());
    for (const auto& v : g.output()) names.insert(v.name());
    for (const auto& v : g.initializer()) names.insert(v.name());
    for (const auto& n : g.node()) {
        names.insert(n.name());
        for (const auto& o : n.output()) names.insert(o);
        for (const auto& a : n.attribute()) {
            if (a.has_g()) collect_names(a.g(), names);
            for (const auto& sub : a.graphs()) collect_names(sub, names);
        }
    }
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
    Rewriter r{origin, opset, {}, 0};
    collect_names(model.graph(), r.names);
    Graphs graphs;
    adapt_graph(r, *model.mutable_graph(), graphs);
    for (auto& op : *model.mutable_opset_import())
        if (op.domain().empty() || op.domain() == "ai.onnx") op.set_version(kOnnx112Opset);
}

}  // namespace tessera::frontend::onnx_import
