// Import-time name tables shared by the sequence, optional, string and
// control-flow converters: aliases, string tensors and subgraph (body) import.
#include <functional>
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

// A copy of `n` with its value names resolved by `rename`, without its graph
// attributes (If branches, Loop and Scan bodies): those are read from `n`
// itself and renamed when, and only if, they are imported. Copying them for
// every unrolled iteration copied an If's untaken branch every time.
onnx::NodeProto renamed_without_graphs(const onnx::NodeProto& n,
                                       const std::function<std::string(const std::string&)>& rename) {
    onnx::NodeProto copy;
    copy.set_op_type(n.op_type());
    copy.set_name(n.name());
    copy.set_domain(n.domain());
    for (const auto& in : n.input()) copy.add_input(rename(in));
    for (const auto& out : n.output()) copy.add_output(rename(out));
    for (const auto& a : n.attribute())
        if (!a.has_g() && a.graphs_size() == 0) *copy.add_attribute() = a;
    return copy;
}

// Pushes a renaming onto the importer's scope stack for the life of a scope.
struct ScopeRenames {
    Importer& imp;
    ScopeRenames(Importer& i, const std::map<std::string, std::string>& names) : imp(i) {
        imp.scope_renames.push_back(&names);
    }
    ~ScopeRenames() { imp.scope_renames.pop_back(); }
};

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

    // A name is this graph's (renamed with its prefix) or an enclosing
    // graph's (renamed with that graph's), innermost first; else the main graph's.
    const ScopeRenames scope(imp, names);
    auto rename = [&imp](const std::string& n) {
        for (auto s = imp.scope_renames.rbegin(); s != imp.scope_renames.rend(); ++s)
            if (auto it = (*s)->find(n); it != (*s)->end()) return it->second;
        return n;
    };
    const ConverterTable& table = converters();
    for (int i = 0; i < body.node_size(); ++i) {
        const onnx::NodeProto& original = body.node(i);
        const onnx::NodeProto node = renamed_without_graphs(original, rename);
        std::string name = prefix + (node.name().empty() ? node.op_type() + "_" + std::to_string(i)
                                                         : node.name());
        NodeCtx ctx(imp, node, name, &original);
        // As in the main graph: ops of other domains are keyed "DOMAIN.OpType".
        bool default_domain = node.domain().empty() || node.domain() == "ai.onnx";
        std::string op = default_domain ? node.op_type() : node.domain() + "." + node.op_type();
        auto it = table.find(op);
        TS_USER_CHECK(it != table.end()) << ctx.where() << ": unsupported op " << op;
        it->second(ctx);
    }

    std::vector<std::string> outs;
    for (const auto& o : body.output()) {
        outs.push_back(rename(o.name()));
        TS_USER_CHECK(is_defined(imp, outs.back()))
            << where << ": subgraph '" << graph_name << "' output '" << o.name()
            << "' is not defined";
    }
    return outs;
}

}  // namespace tessera::frontend::onnx_import
