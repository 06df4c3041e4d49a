// Helpers for rewriting ONNX nodes (see the header).
#include "engine/frontend/onnx/onnx_node_rewrite.h"

#include <cmath>
#include <cstring>
#include <map>

#include "engine/core/error.h"

namespace tessera::frontend::onnx_import {

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

namespace {

bool uses_node(const onnx::GraphProto& g, const std::function<bool(const onnx::NodeProto&)>& is) {
    for (const auto& n : g.node()) {
        if (is(n)) return true;
        for (const auto& a : n.attribute()) {
            if (a.has_g() && uses_node(a.g(), is)) return true;
            for (const auto& sub : a.graphs())
                if (uses_node(sub, is)) return true;
        }
    }
    return false;
}

}  // namespace

bool uses_domain(const onnx::GraphProto& g, const std::string& domain) {
    return uses_node(g, [&](const onnx::NodeProto& n) { return n.domain() == domain; });
}

bool uses_op(const onnx::GraphProto& g, const std::string& op_type) {
    return uses_node(g, [&](const onnx::NodeProto& n) { return n.op_type() == op_type; });
}

namespace {

void rewrite_graph(NodeRewriter& r, onnx::GraphProto& g, Graphs& graphs,
                   const NodeRewrite& rewrite) {
    graphs.push_back(&g);
    // Every node stays in `g` until all are rewritten: a rewrite reads the
    // graph's Constant nodes (constant_ints), also those before it.
    std::map<int, std::vector<onnx::NodeProto>> rewritten;
    for (int i = 0; i < g.node_size(); ++i) {
        onnx::NodeProto& n = *g.mutable_node(i);
        for (auto& a : *n.mutable_attribute()) {
            if (a.has_g()) rewrite_graph(r, *a.mutable_g(), graphs, rewrite);
            for (auto& sub : *a.mutable_graphs()) rewrite_graph(r, sub, graphs, rewrite);
        }
        std::vector<onnx::NodeProto> replacement;
        if (rewrite(r, graphs, n, replacement)) rewritten[i] = std::move(replacement);
    }
    if (!rewritten.empty()) {
        google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
        nodes.Swap(g.mutable_node());
        for (int i = 0; i < nodes.size(); ++i) {
            auto r_it = rewritten.find(i);
            if (r_it == rewritten.end()) {
                *g.add_node() = std::move(*nodes.Mutable(i));
            } else {
                for (auto& m : r_it->second) *g.add_node() = std::move(m);
            }
        }
    }
    graphs.pop_back();
}

}  // namespace

NodeRewriter::NodeRewriter(std::string origin_, std::string context_, const onnx::GraphProto& g)
    : origin(std::move(origin_)), context(std::move(context_)) {
    collect_names(g, names);
}

std::string NodeRewriter::fresh(const std::string& base) {
    std::string n;
    do {
        n = base + "_rw" + std::to_string(counter++);
    } while (names.count(n));
    names.insert(n);
    return n;
}

std::string NodeRewriter::where(const onnx::NodeProto& n) const {
    const std::string in = n.domain().empty() ? context : ", " + n.domain();
    return origin + ": node '" + node_name(n) + "' (op " + n.op_type() + in + ")";
}

std::string NodeRewriter::emit(const onnx::NodeProto& n, const std::string& op,
                               const std::vector<std::string>& inputs,
                               std::vector<onnx::NodeProto>& out, const std::string& result,
                               const std::vector<onnx::AttributeProto>& attrs) {
    onnx::NodeProto m;
    m.set_op_type(op);
    m.set_name(fresh(node_name(n) + "_" + op));
    for (const auto& i : inputs) m.add_input(i);
    m.add_output(result.empty() ? fresh(node_name(n) + "_" + op) : result);
    for (const onnx::AttributeProto& a : attrs) *m.add_attribute() = a;
    out.push_back(m);
    return m.output(0);
}

std::string NodeRewriter::constant(const onnx::NodeProto& n, const onnx::TensorProto& value,
                                   std::vector<onnx::NodeProto>& out) {
    onnx::AttributeProto a;
    a.set_name("value");
    a.set_type(onnx::AttributeProto::TENSOR);
    *a.mutable_t() = value;
    onnx::NodeProto& c = out.emplace_back();
    c.set_op_type("Constant");
    c.set_name(fresh(node_name(n) + "_c"));
    c.add_output(fresh(node_name(n) + "_c"));
    *c.add_attribute() = std::move(a);
    return c.output(0);
}

std::string NodeRewriter::scalar_like(const onnx::NodeProto& n, const std::string& like, float v,
                                      std::vector<onnx::NodeProto>& out) {
    onnx::TensorProto t;
    t.set_data_type(onnx::TensorProto::FLOAT);
    t.add_float_data(v);
    const std::string value = constant(n, t, out);
    return cast_like ? emit(n, "CastLike", {value, like}, out) : value;
}

std::string NodeRewriter::ints(const onnx::NodeProto& n, const std::vector<int64_t>& values,
                              std::vector<onnx::NodeProto>& out, bool scalar) {
    onnx::TensorProto t;
    t.set_data_type(onnx::TensorProto::INT64);
    if (!scalar) t.add_dims(int64_t(values.size()));
    for (int64_t v : values) t.add_int64_data(v);
    return constant(n, t, out);
}

std::string NodeRewriter::reduce(const onnx::NodeProto& n, const std::string& op,
                                 const std::string& x, const std::vector<int64_t>& axes,
                                 bool keepdims, std::vector<onnx::NodeProto>& out) {
    onnx::AttributeProto keep;
    keep.set_name("keepdims");
    keep.set_type(onnx::AttributeProto::INT);
    keep.set_i(keepdims ? 1 : 0);
    // Axes became an input in opset 13 (ReduceSum) and 18 (the others).
    if (opset >= (op == "ReduceSum" ? 13 : 18)) return emit(n, op, {x, ints(n, axes, out)}, out, "", {keep});
    onnx::AttributeProto a;
    a.set_name("axes");
    a.set_type(onnx::AttributeProto::INTS);
    for (int64_t v : axes) a.add_ints(v);
    return emit(n, op, {x}, out, "", {a, keep});
}

void NodeRewriter::layer_norm(const onnx::NodeProto& n, const std::string& x,
                              const std::string& gamma, const std::string& beta, float eps,
                              const std::string& y, std::vector<onnx::NodeProto>& out) {
    const std::string d = emit(n, "Sub", {x, reduce(n, "ReduceMean", x, {-1}, true, out)}, out);
    const std::string var = reduce(n, "ReduceMean", emit(n, "Mul", {d, d}, out), {-1}, true, out);
    const std::string std_dev =
        emit(n, "Sqrt", {emit(n, "Add", {var, scalar_like(n, x, eps, out)}, out)}, out);
    const std::string normed = emit(n, "Div", {d, std_dev}, out);
    if (beta.empty()) {
        emit(n, "Mul", {normed, gamma}, out, y);
    } else {
        emit(n, "Add", {emit(n, "Mul", {normed, gamma}, out), beta}, out, y);
    }
}

void NodeRewriter::gelu(const onnx::NodeProto& n, const std::string& x, const std::string& y,
                        bool tanh, std::vector<onnx::NodeProto>& out) {
    std::string inner;
    if (!tanh) {
        inner = emit(n, "Erf", {emit(n, "Mul", {x, scalar_like(n, x, float(M_SQRT1_2), out)}, out)}, out);
    } else {
        const std::string x3 = emit(n, "Mul", {emit(n, "Mul", {x, x}, out), x}, out);
        const std::string sum =
            emit(n, "Add", {x, emit(n, "Mul", {x3, scalar_like(n, x, 0.044715f, out)}, out)}, out);
        const float k = float(std::sqrt(2.0 / M_PI));
        inner = emit(n, "Tanh", {emit(n, "Mul", {sum, scalar_like(n, x, k, out)}, out)}, out);
    }
    const std::string one_plus = emit(n, "Add", {inner, scalar_like(n, x, 1.0f, out)}, out);
    const std::string half_x = emit(n, "Mul", {x, scalar_like(n, x, 0.5f, out)}, out);
    emit(n, "Mul", {half_x, one_plus}, out, y);
}

void refuse_output(const NodeRewriter& r, const onnx::NodeProto& n, int i, const char* what) {
    TS_USER_CHECK(n.output_size() <= i || n.output(i).empty())
        << r.where(n) << ": output " << i << " (" << what << ") is not supported";
}

void refuse_axis_but_last(const NodeRewriter& r, const onnx::NodeProto& n) {
    const onnx::AttributeProto* axis = find_attr(n, "axis");
    TS_USER_CHECK(!axis || axis->i() == -1)
        << r.where(n) << ": axis " << axis->i() << " is not supported (only the last, -1)";
}

std::string node_name(const onnx::NodeProto& n) {
    return n.name().empty() ? n.output_size() ? n.output(0) : n.op_type() : n.name();
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

bool constant_ints(const Graphs& graphs, const std::string& name, std::vector<int64_t>& out) {
    auto read = [&](const onnx::TensorProto& t) {
        if (t.data_type() != onnx::TensorProto::INT64) return false;
        out.clear();
        if (t.has_raw_data()) {
            const std::string& raw = t.raw_data();
            if (raw.size() % 8) return false;
            out.resize(raw.size() / 8);
            if (!raw.empty()) std::memcpy(out.data(), raw.data(), raw.size());
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

void rewrite_nodes(NodeRewriter& r, onnx::GraphProto& g, const NodeRewrite& rewrite) {
    Graphs graphs;
    rewrite_graph(r, g, graphs, rewrite);
}

}  // namespace tessera::frontend::onnx_import
