// Graph edits: copy, change, re-infer, verify, then commit (or throw and keep).
#include "engine/graph/graph_edit.h"

#include <algorithm>
#include <sstream>

#include "engine/core/error.h"
#include "engine/graph/op_registry.h"

namespace tessera::graph {
namespace {

std::string where(const Graph& g, int node) {
    const Node& n = g.nodes[size_t(node)];
    return "node '" + n.name + "' (" + n.op + ")";
}

void check_node(const Graph& g, int node) {
    TS_USER_CHECK(node >= 0 && size_t(node) < g.nodes.size())
        << "graph '" << g.name << "': no node with index " << node;
}

// Runs `change` on a copy; commits the copy only when it re-infers and verifies.
template <typename F>
void edit_copy(Graph& g, F change) {
    Graph copy = g;
    change(copy);
    infer_all_types(copy);
    verify(copy);
    g = std::move(copy);
}

// Removes value `v` (no longer referenced) and renumbers value indices above it.
void erase_value(Graph& g, int v) {
    g.values.erase(g.values.begin() + v);
    auto fix = [v](std::vector<int>& list) {
        for (int& x : list)
            if (x > v) --x;
    };
    for (Node& n : g.nodes) {
        fix(n.inputs);
        fix(n.outputs);
    }
    fix(g.inputs);
    fix(g.outputs);
}

std::string shape_text(const std::vector<int64_t>& s) {
    std::ostringstream os;
    os << "(";
    for (size_t i = 0; i < s.size(); ++i) os << (i ? ", " : "") << s[i];
    os << ")";
    return os.str();
}

}  // namespace

void infer_all_types(Graph& g) {
    for (Node& n : g.nodes) {
        TS_USER_CHECK(find_op(n.op) != nullptr)
            << "node '" << n.name << "': op '" << n.op << "' is not registered";
        std::vector<TensorType> types = infer_types(g, n);
        TS_USER_CHECK(types.size() == n.outputs.size())
            << "node '" << n.name << "' (" << n.op << "): op gives " << types.size()
            << " outputs, node has " << n.outputs.size();
        for (size_t i = 0; i < types.size(); ++i) {
            const int v = n.outputs[i];
            TS_USER_CHECK(v >= 0 && size_t(v) < g.values.size())
                << "node '" << n.name << "': output index " << v << " out of range";
            g.values[size_t(v)].type = types[i];
        }
    }
}

void set_attribute(Graph& g, int node, const std::string& key, const AttrValue& value) {
    check_node(g, node);
    TS_USER_CHECK(!key.empty()) << where(g, node) << ": attribute name is empty";
    edit_copy(g, [&](Graph& c) { c.nodes[size_t(node)].attrs[key] = value; });
}

void remove_attribute(Graph& g, int node, const std::string& key) {
    check_node(g, node);
    TS_USER_CHECK(g.nodes[size_t(node)].attrs.count(key))
        << where(g, node) << ": has no attribute '" << key << "'";
    edit_copy(g, [&](Graph& c) { c.nodes[size_t(node)].attrs.erase(key); });
}

void delete_node(Graph& g, int node) {
    check_node(g, node);
    const Node& n = g.nodes[size_t(node)];
    std::vector<int> data_inputs;
    for (int v : n.inputs)
        if (v >= 0 && size_t(v) < g.values.size() && !g.values[size_t(v)].is_constant())
            data_inputs.push_back(v);
    TS_USER_CHECK(data_inputs.size() == 1 && n.outputs.size() == 1)
        << where(g, node) << ": only a node with one data input and one output can be deleted "
        << "(it has " << data_inputs.size() << " data inputs and " << n.outputs.size()
        << " outputs)";
    const int in = data_inputs[0], out = n.outputs[0];
    TS_USER_CHECK(g.values[size_t(in)].type == g.values[size_t(out)].type)
        << where(g, node) << ": cannot delete it: its input " << g.values[size_t(in)].type.str()
        << " and output " << g.values[size_t(out)].type.str()
        << " differ, so consumers would see another type";
    edit_copy(g, [&](Graph& c) {
        for (Node& m : c.nodes)
            std::replace(m.inputs.begin(), m.inputs.end(), out, in);
        std::replace(c.outputs.begin(), c.outputs.end(), out, in);
        c.nodes.erase(c.nodes.begin() + node);
        for (Value& v : c.values)
            if (v.producer > node) --v.producer;
        erase_value(c, out);
    });
}

void insert_node_after(Graph& g, int node, const std::string& op, const std::string& name,
                       const std::map<std::string, AttrValue>& attrs) {
    check_node(g, node);
    TS_USER_CHECK(find_op(op) != nullptr)
        << where(g, node) << ": cannot insert '" << op << "' after it: no such op";
    TS_USER_CHECK(!name.empty() && g.find_node(name) < 0)
        << where(g, node) << ": cannot insert '" << name << "' after it: "
        << (name.empty() ? "the new node needs a name" : "a node of that name exists");
    TS_USER_CHECK(!g.nodes[size_t(node)].outputs.empty()) << where(g, node) << ": has no output";
    edit_copy(g, [&](Graph& c) {
        const int from = c.nodes[size_t(node)].outputs[0];
        std::string value_name = name;
        auto taken = [&](const std::string& v) {
            return std::any_of(c.values.begin(), c.values.end(),
                               [&](const Value& x) { return x.name == v; });
        };
        while (taken(value_name)) value_name += "_out";
        for (Value& v : c.values)
            if (v.producer > node) ++v.producer;
        Value out;
        out.name = value_name;
        out.type = c.values[size_t(from)].type;  // re-inferred below
        out.producer = node + 1;
        const int to = c.add_value(std::move(out));
        for (size_t m = size_t(node) + 1; m < c.nodes.size(); ++m)
            std::replace(c.nodes[m].inputs.begin(), c.nodes[m].inputs.end(), from, to);
        std::replace(c.outputs.begin(), c.outputs.end(), from, to);
        Node n;
        n.op = op;
        n.name = name;
        n.attrs = attrs;
        n.inputs = {from};
        n.outputs = {to};
        c.nodes.insert(c.nodes.begin() + node + 1, std::move(n));
    });
}

void replace_op(Graph& g, int node, const std::string& new_op) {
    check_node(g, node);
    TS_USER_CHECK(find_op(new_op) != nullptr)
        << where(g, node) << ": cannot replace by '" << new_op << "': no such op";
    Graph copy = g;
    Node& n = copy.nodes[size_t(node)];
    std::vector<TensorType> before;
    for (int v : n.outputs) before.push_back(copy.values[size_t(v)].type);
    const std::string old_op = n.op;
    n.op = new_op;
    std::vector<TensorType> after;
    try {
        after = infer_types(copy, n);
    } catch (const UserError& e) {
        TS_USER_FAIL() << where(g, node) << ": cannot replace " << old_op << " by " << new_op
                       << ": " << e.what();
    }
    TS_USER_CHECK(after == before)
        << where(g, node) << ": cannot replace " << old_op << " by " << new_op
        << ": the output types would change";
    infer_all_types(copy);
    verify(copy);
    g = std::move(copy);
}

void rename_node(Graph& g, int node, const std::string& new_name) {
    check_node(g, node);
    TS_USER_CHECK(!new_name.empty()) << where(g, node) << ": a node name cannot be empty";
    const int other = g.find_node(new_name);
    TS_USER_CHECK(other < 0 || other == node)
        << where(g, node) << ": cannot rename to '" << new_name << "': node " << other
        << " already has that name";
    g.nodes[size_t(node)].name = new_name;
}

void set_input_shape(Graph& g, const std::string& input, const std::vector<int64_t>& shape) {
    int value = -1;
    for (int v : g.inputs)
        if (v >= 0 && size_t(v) < g.values.size() && g.values[size_t(v)].name == input) value = v;
    TS_USER_CHECK(value >= 0) << "graph '" << g.name << "': no graph input named '" << input << "'";
    for (size_t i = 0; i < shape.size(); ++i)
        TS_USER_CHECK(shape[i] > 0)
            << "input '" << input << "': dimension " << i << " of " << shape_text(shape) << " is "
            << shape[i] << "; every dimension must be positive";
    // A shape whose tensors could never be allocated is refused here, not
    // at the first Run (std::bad_alloc): at most 2^31 elements per input.
    int64_t elements = 1;
    for (int64_t d : shape) {
        TS_USER_CHECK(d <= (int64_t(1) << 31) / elements)
            << "input '" << input << "': shape " << shape_text(shape)
            << " has more than 2^31 elements (" << shape_text(shape)
            << " is too large to run; give a smaller size)";
        elements *= d;
    }
    try {
        edit_copy(g, [&](Graph& c) { c.values[size_t(value)].type.shape = shape; });
    } catch (const UserError& e) {
        TS_USER_FAIL() << "input '" << input << "': shape " << shape_text(shape)
                       << " does not fit the model: " << e.what();
    }
}

const char* edit_kind_name(GraphEdit::Kind kind) {
    switch (kind) {
        case GraphEdit::Kind::SetAttribute:
            return "set_attribute";
        case GraphEdit::Kind::RemoveAttribute:
            return "remove_attribute";
        case GraphEdit::Kind::DeleteNode:
            return "delete_node";
        case GraphEdit::Kind::ReplaceOp:
            return "replace_op";
        case GraphEdit::Kind::Rename:
            return "rename";
        case GraphEdit::Kind::SetInputShape:
            return "set_input_shape";
        case GraphEdit::Kind::InsertAfter:
            return "insert_after";
    }
    return "unknown";
}

GraphEdit::Kind edit_kind_from_name(const std::string& name) {
    for (auto k : {GraphEdit::Kind::SetAttribute, GraphEdit::Kind::RemoveAttribute,
                   GraphEdit::Kind::DeleteNode, GraphEdit::Kind::ReplaceOp,
                   GraphEdit::Kind::Rename, GraphEdit::Kind::SetInputShape,
                   GraphEdit::Kind::InsertAfter})
        if (name == edit_kind_name(k)) return k;
    TS_USER_FAIL() << "unknown graph edit '" << name << "'";
}

void apply_edit(Graph& g, const GraphEdit& e) {
    if (e.kind == GraphEdit::Kind::SetInputShape) {
        set_input_shape(g, e.target, e.shape);
        return;
    }
    const int node = g.find_node(e.target);
    TS_USER_CHECK(node >= 0) << "edit '" << describe(e) << "': no node named '" << e.target << "'";
    switch (e.kind) {
        case GraphEdit::Kind::SetAttribute:
            set_attribute(g, node, e.key, e.value);
            break;
        case GraphEdit::Kind::RemoveAttribute:
            remove_attribute(g, node, e.key);
            break;
        case GraphEdit::Kind::DeleteNode:
            delete_node(g, node);
            break;
        case GraphEdit::Kind::ReplaceOp:
            replace_op(g, node, e.key);
            break;
        case GraphEdit::Kind::Rename:
            rename_node(g, node, e.key);
            break;
        case GraphEdit::Kind::InsertAfter:
            insert_node_after(g, node, e.key, e.name, e.attrs);
            break;
        case GraphEdit::Kind::SetInputShape:
            break;
    }
}

std::string describe(const GraphEdit& e) {
    switch (e.kind) {
        case GraphEdit::Kind::SetAttribute:
            return "set " + e.key + " of " + e.target;
        case GraphEdit::Kind::RemoveAttribute:
            return "remove " + e.key + " of " + e.target;
        case GraphEdit::Kind::DeleteNode:
            return "delete " + e.target;
        case GraphEdit::Kind::ReplaceOp:
            return "make " + e.target + " a " + e.key;
        case GraphEdit::Kind::Rename:
            return "rename " + e.target + " to " + e.key;
        case GraphEdit::Kind::SetInputShape:
            return "set shape of " + e.target + " to " + shape_text(e.shape);
        case GraphEdit::Kind::InsertAfter:
            return "insert " + e.key + " " + e.name + " after " + e.target;
    }
    return "edit";
}

}  // namespace tessera::graph
