// Rewriting ONNX nodes into other ONNX nodes before ONNX 1.12 checks a model:
// newer-opset forms into opset-17 ones (onnx_opset_adapter.h) and ONNX
// Runtime's com.microsoft fused ops into the standard ops that define them
// (onnx_contrib_ops.h). Helpers shared by both.
#pragma once

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "onnx/onnx_pb.h"

namespace tessera::frontend::onnx_import {

/// The graphs enclosing a node, outermost first (constants are looked up
/// from the innermost out).
using Graphs = std::vector<const onnx::GraphProto*>;

/// One rewrite of a model: where it is (for errors) and fresh value names.
struct NodeRewriter {
    std::string origin;   // the model file
    std::string context;  // ", opset 23": appended in errors to the op of a default-domain node
    std::set<std::string> names;
    int counter = 0;
    /// Scalar constants follow their operand's dtype with CastLike (opset
    /// 15 and newer); otherwise they are float32.
    bool cast_like = true;
    /// The model's default-domain opset: which form of Reduce* and
    /// Unsqueeze (axes as an attribute or an input) the rewrites emit.
    int64_t opset = 0;

    NodeRewriter(std::string origin, std::string context, const onnx::GraphProto& g);
    /// A name no value, node or earlier fresh name of the model has.
    std::string fresh(const std::string& base);
    /// "FILE: node 'N' (op OP, opset 23)", or with the node's domain
    /// instead of the context: "(op OP, com.microsoft)".
    std::string where(const onnx::NodeProto& n) const;

    /// Appends `op(inputs)` with `attrs` (a fresh output, or `result`) to
    /// `out`; returns the output.
    std::string emit(const onnx::NodeProto& n, const std::string& op,
                     const std::vector<std::string>& inputs, std::vector<onnx::NodeProto>& out,
                     const std::string& result = "",
                     const std::vector<onnx::AttributeProto>& attrs = {});
    /// A scalar constant `v` of `like`'s dtype (Constant + CastLike), or a
    /// float32 one when !cast_like.
    std::string scalar_like(const onnx::NodeProto& n, const std::string& like, float v,
                            std::vector<onnx::NodeProto>& out);
    /// A Constant node holding `value`; returns its output.
    std::string constant(const onnx::NodeProto& n, const onnx::TensorProto& value,
                         std::vector<onnx::NodeProto>& out);
    /// A Constant of int64 `values`: a 1-D tensor, or a scalar (one value).
    std::string ints(const onnx::NodeProto& n, const std::vector<int64_t>& values,
                     std::vector<onnx::NodeProto>& out, bool scalar = false);
    /// `op` (ReduceMean, ReduceSum...) of x over `axes`, in the opset's form.
    std::string reduce(const onnx::NodeProto& n, const std::string& op, const std::string& x,
                       const std::vector<int64_t>& axes, bool keepdims,
                       std::vector<onnx::NodeProto>& out);
    /// y = (x - mean) / sqrt(var + eps) * gamma (+ beta) over the last axis,
    /// in the ops fuse_layer_norm recognizes; `beta` may be empty.
    void layer_norm(const onnx::NodeProto& n, const std::string& x, const std::string& gamma,
                    const std::string& beta, float eps, const std::string& y,
                    std::vector<onnx::NodeProto>& out);
    /// y = Gelu(x): 0.5 x (1 + erf(x / sqrt 2)), or with `tanh`
    /// 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))).
    void gelu(const onnx::NodeProto& n, const std::string& x, const std::string& y, bool tanh,
              std::vector<onnx::NodeProto>& out);
};

/// A UserError naming `n` when its output i is asked for: "output i (what)
/// is not supported".
void refuse_output(const NodeRewriter& r, const onnx::NodeProto& n, int i, const char* what);
/// A UserError naming `n` when its attribute `axis` is not -1 (the last).
void refuse_axis_but_last(const NodeRewriter& r, const onnx::NodeProto& n);

/// Adds every value, initializer and node name of `g` and its subgraphs to `names`.
void collect_names(const onnx::GraphProto& g, std::set<std::string>& names);

std::string node_name(const onnx::NodeProto& n);
const onnx::AttributeProto* find_attr(const onnx::NodeProto& n, const std::string& name);
/// True when input i of `n` is given (present and not the empty name).
inline bool has_input(const onnx::NodeProto& n, int i) {
    return n.input_size() > i && !n.input(i).empty();
}
void erase_attr(onnx::NodeProto& n, const std::string& name);

/// True when a node of `g` or of its subgraphs is of `domain`.
bool uses_domain(const onnx::GraphProto& g, const std::string& domain);
/// True when a node of `g` or of its subgraphs is an `op_type` (any domain).
bool uses_op(const onnx::GraphProto& g, const std::string& op_type);

/// The int64 values of constant `name` (an initializer or a Constant node),
/// or false when it is not a constant.
bool constant_ints(const Graphs& graphs, const std::string& name, std::vector<int64_t>& out);

/// Rewrites every node of `g` and its subgraphs (subgraphs first) with
/// `rewrite`, which appends the node's replacement to `out` and returns true,
/// or returns false to keep the node as it is.
using NodeRewrite = std::function<bool(NodeRewriter&, const Graphs&, onnx::NodeProto&,
                                       std::vector<onnx::NodeProto>&)>;
void rewrite_nodes(NodeRewriter& r, onnx::GraphProto& g, const NodeRewrite& rewrite);

}  // namespace tessera::frontend::onnx_import
