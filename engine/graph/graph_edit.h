// Graph edits that keep a Graph valid: the functions the studio's undo stack
// wraps. Every edit works on a copy, re-infers the types of all nodes and
// re-verifies; an invalid edit throws UserError with the reason and leaves the
// graph exactly as it was. Edits name nodes (not indices) so that a list of
// them replays on a freshly imported model (the studio's session file).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "engine/graph/graph.h"

namespace tessera::graph {

/// Sets (adds or replaces) attribute `key` of node `node`. Output types of the
/// node and everything downstream are re-inferred.
void set_attribute(Graph& g, int node, const std::string& key, const AttrValue& value);

/// Removes attribute `key` of `node` (the op's default applies again).
void remove_attribute(Graph& g, int node, const std::string& key);

/// Deletes a single-input pass-through node: a node with one non-constant
/// input whose type equals its single output's type. Its consumers (and the
/// graph outputs) read the input instead.
void delete_node(Graph& g, int node);

/// Replaces the op type of `node` by `new_op` (a registered op) when the new
/// op accepts the node's inputs and attributes and gives the same output types.
void replace_op(Graph& g, int node, const std::string& new_op);

/// Inserts node `name` applying `op` (with `attrs`) to the first output of
/// `node`: everything that read that output (and the graph outputs) reads the
/// new node's output instead. Refused when the op does not take that input,
/// or the name is empty or taken.
void insert_node_after(Graph& g, int node, const std::string& op, const std::string& name,
                       const std::map<std::string, AttrValue>& attrs = {});

/// Renames a node; the name must be non-empty and unique among nodes.
void rename_node(Graph& g, int node, const std::string& new_name);

/// Sets the shape of the graph input named `input`; all types downstream are
/// re-inferred (refused if some op does not accept the new shapes).
void set_input_shape(Graph& g, const std::string& input, const std::vector<int64_t>& shape);

/// Recomputes every node's output types in order with the op registry's rules.
/// Throws UserError naming the first node whose inputs do not fit.
void infer_all_types(Graph& g);

/// One edit as data, so that edits can be stored and replayed.
struct GraphEdit {
    enum class Kind {
        SetAttribute, RemoveAttribute, DeleteNode, ReplaceOp, Rename, SetInputShape, InsertAfter
    };
    Kind kind = Kind::SetAttribute;
    std::string target;          // node name, or the graph input name for SetInputShape
    std::string key;             // attribute key; new op (ReplaceOp, InsertAfter); new name (Rename)
    AttrValue value;             // attribute value (SetAttribute)
    std::vector<int64_t> shape;  // SetInputShape
    std::string name;                         // the inserted node's name (InsertAfter)
    std::map<std::string, AttrValue> attrs;   // its attributes (InsertAfter)
};

/// Applies `edit` (looking the node up by name); UserError if it is refused.
void apply_edit(Graph& g, const GraphEdit& edit);

/// "set attribute strides of conv1", "delete relu2", ... for undo menus and logs.
std::string describe(const GraphEdit& edit);

/// "set_attribute", "remove_attribute", "delete_node", "replace_op", "rename",
/// "set_input_shape", "insert_after".
const char* edit_kind_name(GraphEdit::Kind kind);
/// The inverse of edit_kind_name; UserError for an unknown name.
GraphEdit::Kind edit_kind_from_name(const std::string& name);

}  // namespace tessera::graph
