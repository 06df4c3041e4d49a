// Import state helpers: value lookup, node inputs/attributes and emitting
// graph nodes with checked output types.
#include "engine/frontend/onnx/onnx_context.h"

#include <charconv>
#include <cstdlib>
#include <sstream>

#include "engine/core/checked_math.h"
#include "engine/core/error.h"
#include "engine/frontend/onnx/onnx_opset_adapter.h"
#include "engine/graph/op_registry.h"

namespace tessera::frontend::onnx_import {

int Importer::value(const std::string& name, const std::string& where) {
    auto it = values.find(name);
    if (it != values.end()) return it->second;
    // Import-time values (onnx_seq.cpp) are not tensors of the graph.
    TS_USER_CHECK(!strings.count(name))
        << where << ": input '" << name << "' is a string tensor: element type STRING is not "
        << "supported here (only by string ops evaluated at import)";
    TS_USER_CHECK(!sequences.count(name) && !optionals.count(name))
        << where << ": input '" << name << "' is a " << (sequences.count(name) ? "sequence" : "optional")
        << ", not a tensor; this op is not supported on it";
    auto c = constants.find(name);
    TS_USER_CHECK(c != constants.end())
        << where << ": input '" << name
        << "' is not a graph input, an initializer or an earlier node's output";
    graph::Value v;
    v.name = name;
    v.type = c->second.type;
    v.constant = c->second.data;
    int idx = g.add_value(std::move(v));
    values[name] = idx;
    return idx;
}

NodeCtx::NodeCtx(Importer& imp_, const onnx::NodeProto& node_, std::string name_,
                 const onnx::NodeProto* graphs_)
    : imp(imp_), node(node_), graphs(graphs_ ? *graphs_ : node_), name(std::move(name_)) {}

std::string NodeCtx::where() const {
    // Another vendor's domain is named (com.microsoft); ONNX's (ai.onnx,
    // ai.onnx.ml, ai.onnx.preview.training) are implied, Tessera's internal.
    const std::string& d = node.domain();
    const bool named = !d.empty() && !d.starts_with("ai.onnx") && !d.starts_with("ai.tessera");
    return imp.origin + ": node '" + name + "' (op " + node.op_type() + (named ? ", " + d : "") +
           ")";
}

bool NodeCtx::has_input(int i) const { return i < node.input_size() && !node.input(i).empty(); }

int NodeCtx::input(int i) {
    TS_USER_CHECK(has_input(i)) << where() << ": missing input " << i;
    return imp.value(node.input(i), where());
}

const graph::TensorType& NodeCtx::input_type(int i) {
    // Constants are looked up without creating a graph value: a folded input never appears in the
    // graph.
    if (const ConstTensor* c = constant_input(i)) return c->type;
    return imp.g.values[size_t(input(i))].type;
}

const ConstTensor* NodeCtx::constant_input(int i) const {
    if (!has_input(i)) return nullptr;
    auto it = imp.constants.find(node.input(i));
    return it == imp.constants.end() ? nullptr : &it->second;
}

std::vector<int64_t> NodeCtx::constant_ints(int i) const {
    const ConstTensor* c = constant_input(i);
    TS_USER_CHECK(c != nullptr) << where() << ": input " << i << " ('"
                                << (has_input(i) ? node.input(i) : "")
                                << "') must be a constant (an initializer or a Constant node)";
    std::vector<int64_t> out;
    int64_t n = c->type.num_elements();
    if (c->type.dtype == graph::DType::Int64) {
        out.assign(c->data->as<int64_t>(), c->data->as<int64_t>() + n);
    } else if (c->type.dtype == graph::DType::Int32) {
        out.assign(c->data->as<int32_t>(), c->data->as<int32_t>() + n);
    } else {
        TS_USER_FAIL() << where() << ": input " << i << " ('" << node.input(i)
                       << "') must hold integers, got " << c->type.str();
    }
    return out;
}

const onnx::AttributeProto* NodeCtx::attr(const std::string& key) const {
    for (const auto& a : node.attribute())
        if (a.name() == key) return &a;
    return nullptr;
}

bool NodeCtx::has_attr(const std::string& key) const { return attr(key) != nullptr; }

int64_t NodeCtx::attr_int(const std::string& key, int64_t dflt) const {
    const onnx::AttributeProto* a = attr(key);
    if (!a) return dflt;
    TS_USER_CHECK(a->type() == onnx::AttributeProto_AttributeType_INT)
        << where() << ": attribute '" << key << "' must be an integer";
    return a->i();
}

double NodeCtx::attr_float(const std::string& key, double dflt) const {
    const onnx::AttributeProto* a = attr(key);
    if (!a) return dflt;
    if (a->type() == onnx::AttributeProto_AttributeType_INT) return double(a->i());
    TS_USER_CHECK(a->type() == onnx::AttributeProto_AttributeType_FLOAT)
        << where() << ": attribute '" << key << "' must be a float";
    // The shortest decimal that reads back as this float: 0.35f becomes 0.35, not 0.349999994.
    char buf[32];
    auto res = std::to_chars(buf, buf + sizeof buf, a->f());
    return std::strtod(std::string(buf, res.ptr).c_str(), nullptr);
}

std::vector<int64_t> NodeCtx::attr_ints(const std::string& key, std::vector<int64_t> dflt) const {
    const onnx::AttributeProto* a = attr(key);
    if (!a) return dflt;
    TS_USER_CHECK(a->type() == onnx::AttributeProto_AttributeType_INTS)
        << where() << ": attribute '" << key << "' must be a list of integers";
    return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

std::string NodeCtx::attr_str(const std::string& key, const std::string& dflt) const {
    const onnx::AttributeProto* a = attr(key);
    if (!a) return dflt;
    TS_USER_CHECK(a->type() == onnx::AttributeProto_AttributeType_STRING)
        << where() << ": attribute '" << key << "' must be a string";
    return a->s();
}

void NodeCtx::expect_outputs(int n) const {
    for (int i = n; i < node.output_size(); ++i)
        TS_USER_CHECK(node.output(i).empty())
            << where() << ": output " << i << " ('" << node.output(i) << "') is not supported";
    TS_USER_CHECK(node.output_size() >= 1 && !node.output(0).empty())
        << where() << ": has no output";
}

namespace {

// The static type ONNX gives a value, if complete; false otherwise.
bool onnx_static_type(const onnx::TypeProto* t, graph::TensorType& out) {
    if (!t || !t->has_tensor_type() || !t->tensor_type().has_shape()) return false;
    const auto& tt = t->tensor_type();
    graph::TensorType r;
    try {
        r.dtype = dtype_from_onnx(tt.elem_type(), "");
    } catch (const UserError&) {
        return false;
    }
    for (const auto& d : tt.shape().dim()) {
        if (!d.has_dim_value() || d.dim_value() < 0) return false;
        r.shape.push_back(d.dim_value());
    }
    out = r;
    return true;
}

}  // namespace

int NodeCtx::emit(const std::string& op, std::vector<int> inputs,
                  std::map<std::string, graph::AttrValue> attrs) {
    expect_outputs(1);
    std::vector<int> out = emit_outputs({0}, op, std::move(inputs), std::move(attrs));
    return out[0] >= 0 ? out[0] : imp.value(node.output(0), where());
}

namespace {

// Folding evaluates a node in the interpreter: keep it to shape-sized data.
constexpr int64_t kMaxFoldElements = int64_t(1) << 16;
// The most elements any value of the imported graph may have.
constexpr int64_t kMaxValueElements = kMaxTensorElements;

std::string shape_str(const std::vector<int64_t>& shape) {
    std::ostringstream os;
    os << "(";
    for (size_t i = 0; i < shape.size(); ++i) os << (i ? ", " : "") << shape[i];
    os << ")";
    return os.str();
}

}  // namespace

std::string Importer::fresh_name(const std::string& base) {
    for (;;) {
        std::string n = base + "__" + std::to_string(internal_values++);
        if (!model_names.count(n) && !values.count(n) && !constants.count(n)) return n;
    }
}

std::string Importer::define_helper_constant(const std::string& base, ConstTensor c) {
    std::string n = fresh_name(base);
    constants[n] = std::move(c);
    return n;
}

std::vector<int> NodeCtx::emit_outputs(const std::vector<int>& onnx_outputs, const std::string& op,
                                       std::vector<int> inputs,
                                       std::map<std::string, graph::AttrValue> attrs) {
    std::vector<std::string> names;
    for (int o : onnx_outputs) {
        std::string out_name = o < node.output_size() ? node.output(o) : "";
        if (out_name.empty()) out_name = imp.fresh_name(name);
        TS_USER_CHECK(!imp.values.count(out_name) && !imp.constants.count(out_name))
            << where() << ": output '" << out_name << "' is defined twice";
        names.push_back(out_name);
    }
    graph::Node n;
    n.op = op;
    n.name = name;
    n.attrs = std::move(attrs);
    n.inputs = std::move(inputs);
    std::vector<graph::TensorType> types;
    try {
        types = graph::infer_types(imp.g, n);
    } catch (const UserError& e) {
        throw UserError(imp.origin + ": " + e.what());
    }
    TS_CHECK(types.size() == names.size())
        << "op " << op << " gives " << types.size() << " outputs, " << names.size() << " expected";
    for (size_t i = 0; i < types.size(); ++i)
        TS_USER_CHECK(checked_elements(types[i].shape, kMaxValueElements) >= 0)
            << where() << ": output '" << names[i] << "' would have shape "
            << shape_str(types[i].shape) << ", which is invalid or too large";
    for (size_t i = 0; i < names.size(); ++i) {
        auto t = imp.onnx_types.find(names[i]);
        graph::TensorType declared;
        if (t != imp.onnx_types.end() && onnx_static_type(t->second, declared)) {
            TS_USER_CHECK(declared == types[i])
                << where() << ": ONNX declares output '" << names[i] << "' as " << declared.str()
                << " but Tessera's " << op << " rule gives " << types[i].str();
        }
    }
    // Empty outputs need no kernel: they are (empty) constants.
    bool all_empty = true;
    for (const auto& t : types) all_empty = all_empty && t.num_elements() == 0;
    if (all_empty) {
        std::vector<int> out;
        for (size_t i = 0; i < names.size(); ++i) {
            imp.constants[names[i]] = {types[i], std::make_shared<graph::ConstantData>()};
            out.push_back(imp.value(names[i], where()));
        }
        return out;
    }
    bool foldable = bool(imp.options.fold);
    std::vector<graph::Value> in_values;
    for (int v : n.inputs) {
        in_values.push_back(imp.g.values[size_t(v)]);
        foldable = foldable && in_values.back().is_constant();
    }
    for (const auto& t : types) foldable = foldable && t.num_elements() <= kMaxFoldElements;
    if (foldable) {
        std::vector<std::shared_ptr<const graph::ConstantData>> data =
            imp.options.fold(n, in_values, types);
        TS_CHECK(data.size() == types.size()) << "folding " << op << " gave " << data.size();
        for (size_t i = 0; i < names.size(); ++i) imp.constants[names[i]] = {types[i], data[i]};
        std::vector<int> out;
        for (const auto& nm : names) out.push_back(imp.value(nm, where()));
        return out;
    }
    std::vector<int> out;
    for (size_t i = 0; i < names.size(); ++i) {
        graph::Value v;
        v.name = names[i];
        v.type = types[i];
        int vi = imp.g.add_value(std::move(v));
        n.outputs.push_back(vi);
        imp.values[names[i]] = vi;
        out.push_back(vi);
    }
    imp.g.add_node(std::move(n));
    return out;
}

int NodeCtx::emit_internal(const std::string& op, std::vector<int> inputs,
                           std::map<std::string, graph::AttrValue> attrs) {
    // An index past the node's outputs gets a generated name.
    return emit_outputs({1 << 20}, op, std::move(inputs), std::move(attrs))[0];
}

void NodeCtx::define_constant(ConstTensor c) {
    expect_outputs(1);
    const std::string& out_name = node.output(0);
    TS_USER_CHECK(!imp.values.count(out_name) && !imp.constants.count(out_name))
        << where() << ": output '" << out_name << "' is defined twice";
    imp.constants[out_name] = std::move(c);
}

const ConverterTable& converters() {
    static const ConverterTable table = [] {
        ConverterTable t;
        add_conv_converters(t);
        add_math_converters(t);
        add_pool_converters(t);
        add_tensor_converters(t);
        add_constant_converters(t);
        add_unary_converters(t);
        add_transform_converters(t);
        add_reduce_converters(t);
        add_shape_converters(t);
        add_rnn_converters(t);
        add_loss_converters(t);
        add_math_signal_converters(t);
        add_index_converters(t);
        add_attention_converters(t);
        add_composed_converters(t);
        add_optimizer_converters(t);
        add_dtype_converters(t);
        add_seq_converters(t);
        add_tessera_domain_converters(t);
        // Nodes the opset adapter left in their newer form (onnx_opset_adapter.h).
        for (const std::string& op : ops_adapted_at_import())
            t[std::string(kImportTimeDomain) + "." + op] = t.at(op);
        return t;
    }();
    return table;
}

int64_t check_constant_size(const NodeCtx& ctx, const std::vector<int64_t>& shape,
                            const std::string& what) {
    int64_t n = checked_elements(shape, kMaxImportConstantElements);
    TS_USER_CHECK(n >= 0) << ctx.where() << ": " << what << " of shape " << shape_str(shape)
                          << " is invalid or above the limit of " << kMaxImportConstantElements
                          << " elements for a constant computed at import";
    return n;
}

}  // namespace tessera::frontend::onnx_import
