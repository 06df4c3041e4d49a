// Import-time name tables shared by the sequence, optional, string and
// control-flow converters: aliases, string tensors and subgraph (body) import.
#include <set>

#include "engine/core/error.h"
#include "engine/frontend/onnx/onnx_context.h"

namespace tessera::frontend::onnx_import {

namespace {

// Bounds on what unrolling control flow at import may copy in one model.
constexpr int64_t kMaxSubgraphNodes = int64_t(1) << 16;
constexpr int64_t kMaxSubgraphInitBytes = int64_t(1) << 28;

}  // namespace

bool is_defined(const Importer& imp, const std::string& name) {
    return imp.values.count(name) || imp.constants.count(name) || imp.sequences.count(name) ||
           imp.optionals.count(name) || imp.strings.count(name);
}

void alias_name(Importer& imp, const std::string& to, const std::string& from,
                const std::string& where) {
    TS_USER_CHECK(!is_defined(imp, to)) << where << ": output '" << to << "' is defined twice";
    bool found = false;
    if (auto it = imp.values.find(from); it != imp.values.end()) {
        int v = it->second;
        imp.values[to] = v;
        found = true;
    }
    if (auto it = imp.constants.find(from); it != imp.constants.end()) {
        ConstTensor c = it->second;
        imp.constants[to] = std::move(c);
        found = true;
    }
    if (auto it = imp.sequences.find(from); it != imp.sequences.end()) {
        std::vector<std::string> s = it->second;
        imp.sequences[to] = std::move(s);
        found = true;
    }
    if (auto it = imp.optionals.find(from); it != imp.optionals.end()) {
        std::string o = it->second;
        imp.optionals[to] = std::move(o);
        found = true;
    }
    if (auto it = imp.strings.find(from); it != imp.strings.end()) {
        StringTensor s = it->second;
        imp.strings[to] = std::move(s);
        found = true;
    }
    TS_USER_CHECK(found) << where << ": '" << from
                         << "' is not a graph input, an initializer or an earlier node's output";
}

StringTensor decode_strings(const onnx::TensorProto& t) {
    StringTensor s;
    s.shape.assign(t.dims().begin(), t.dims().end());
    s.data.assign(t.string_data().begin(), t.string_data().end());
    int64_t n = 1;
    for (int64_t d : s.shape) n *= d;
    TS_USER_CHECK(int64_t(s.data.size()) == n)
        << "string tensor '" << t.name() << "' has " << s.data.size() << " strings for "
        << n << " elements";
    return s;
}

namespace {

// Renames references to `names` in `g` and every graph nested in it. ONNX
// names are unique across scopes (SSA), so a nested graph never redefines one.
void rename_refs(onnx::GraphProto& g, const std::map<std::string, std::string>& names);

void rename_node(onnx::NodeProto& n, const std::map<std::string, std::string>& names) {
    for (auto& in : *n.mutable_input())
        if (auto it = names.find(in); it != names.end()) in = it->second;
    for (auto& out : *n.mutable_output())
        if (auto it = names.find(out); it != names.end()) out = it->second;
    for (auto& a : *n.mutable_attribute()) {
        if (a.has_g()) rename_refs(*a.mutable_g(), names);
        for (auto& g : *a.mutable_graphs()) rename_refs(g, names);
    }
}

void rename_refs(onnx::GraphProto& g, const std::map<std::string, std::string>& names) {
    for (auto& n : *g.mutable_node()) rename_node(n, names);
    for (auto& o : *g.mutable_output())
        if (auto it = names.find(o.name()); it != names.end()) o.set_name(it->second);
}

}  // namespace

std::vector<std::string> import_subgraph(Importer& imp, const onnx::GraphProto& body,
                                         const std::vector<std::string>& inputs,
                                         const std::string& where) {
    const std::string graph_name = body.name().empty() ? "body" : body.name();
    const std::string prefix = graph_name + "#" + std::to_string(imp.subgraphs++) + "/";
    std::map<std::string, std::string> names;
    for (const auto& vi : body.input()) names[vi.name()] = prefix + vi.name();
    for (const auto& init : body.initializer()) names[init.name()] = prefix + init.name();
    for (const auto& n : body.node())
        for (const auto& o : n.output())
            if (!o.empty()) names[o] = prefix + o;

    // Control flow is unrolled at import: bound the work (nested or long
    // loops) and the memory of the bodies' initializers (decoded per copy).
    imp.subgraph_nodes += body.node_size() + 1;
    TS_USER_CHECK(imp.subgraph_nodes <= kMaxSubgraphNodes)
        << where << ": unrolling control flow imports more than " << kMaxSubgraphNodes
        << " subgraph nodes (Tessera unrolls If, Loop and Scan at import)";
    for (const auto& init : body.initializer())
        imp.subgraph_init_bytes += int64_t(init.ByteSizeLong());
    TS_USER_CHECK(imp.subgraph_init_bytes <= kMaxSubgraphInitBytes)
        << where << ": unrolling control flow copies more than " << kMaxSubgraphInitBytes
        << " bytes of subgraph initializers";
    TS_USER_CHECK(int(inputs.size()) <= body.input_size())
        << where << ": subgraph '" << graph_name << "' takes " << body.input_size()
        << " inputs, " << inputs.size() << " given";
    for (int i = 0; i < body.input_size(); ++i) {
        if (size_t(i) >= inputs.size() || inputs[size_t(i)].empty()) continue;
        alias_name(imp, names[body.input(i).name()], inputs[size_t(i)], where);
    }
    for (const auto& init : body.initializer()) {
        const std::string& nm = names[init.name()];
        if (init.data_type() == onnx::TensorProto_DataType_STRING) {
            imp.strings[nm] = decode_strings(init);
        } else {
            imp.constants[nm] =
                decode_tensor(init, where + ": subgraph initializer '" + init.name() + "'");
        }
    }

    const ConverterTable& table = converters();
    for (int i = 0; i < body.node_size(); ++i) {
        onnx::NodeProto node = body.node(i);
        rename_node(node, names);
        std::string name = prefix + (node.name().empty() ? node.op_type() + "_" + std::to_string(i)
                                                         : node.name());
        NodeCtx ctx(imp, node, name);
        // As in the main graph: ops of other domains are keyed "DOMAIN.OpType".
        bool default_domain = node.domain().empty() || node.domain() == "ai.onnx";
        std::string op = default_domain ? node.op_type() : node.domain() + "." + node.op_type();
        auto it = table.find(op);
        TS_USER_CHECK(it != table.end()) << ctx.where() << ": unsupported op " << op;
        it->second(ctx);
    }

    std::vector<std::string> outs;
    for (const auto& o : body.output()) {
        auto it = names.find(o.name());
        outs.push_back(it != names.end() ? it->second : o.name());
        TS_USER_CHECK(is_defined(imp, outs.back()))
            << where << ": subgraph '" << graph_name << "' output '" << o.name()
            << "' is not defined";
    }
    return outs;
}

}  // namespace tessera::frontend::onnx_import
