// The registry of graph operators: name, description, fusion pattern kind and
// shape/type rule. One entry per op; the ONNX frontend maps onto these names.
#pragma once

#include <functional>

#include "engine/graph/graph.h"

namespace tessera::graph {

/// TVM's fusion pattern kinds, from most to least fusable.
enum class OpPattern : uint8_t { ElemWise, Broadcast, Injective, CommReduce, OutEWiseFusable, Opaque };
const char* op_pattern_name(OpPattern p);

struct OpDef {
    std::string name;         // "nn.conv2d"
    std::string description;  // one line, shown in the studio
    OpPattern pattern = OpPattern::Opaque;
    /// Output types from the node's attributes and input types; throws
    /// UserError naming the node when inputs do not fit.
    std::function<std::vector<TensorType>(const Node&, const std::vector<TensorType>&)> infer;
};

/// nullptr when not registered.
const OpDef* find_op(const std::string& name);
std::vector<const OpDef*> all_ops();
/// Registers (or replaces) an op. Called from the registration table.
void register_op(OpDef def);

/// Output types of node `n` in graph `g` by its op's rule.
std::vector<TensorType> infer_types(const Graph& g, const Node& n);

}  // namespace tessera::graph
