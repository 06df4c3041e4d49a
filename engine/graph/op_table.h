// Private to engine/graph: the built-in op table is filled by these functions
// (one per op family file) and shared shape-rule helpers.
#pragma once

#include <string>
#include <vector>

#include "engine/graph/op_registry.h"

namespace tessera::graph::detail {

/// nn.conv2d, nn.matmul, nn.gemm, nn.relu, nn.max_pool2d, nn.global_avg_pool2d, nn.softmax.
void add_nn_ops(std::vector<OpDef>& table);
/// add, subtract, multiply, divide, reshape.
void add_tensor_ops(std::vector<OpDef>& table);

/// "node 'NAME' (OP)" for error messages.
std::string where(const Node& n);
/// Throws UserError unless `types` has between lo and hi entries.
void expect_arity(const Node& n, const std::vector<TensorType>& types, size_t lo, size_t hi);
/// Throws UserError unless input `i` has rank `rank` (or any rank when -1) and dtype float32.
void expect_float(const Node& n, const std::vector<TensorType>& types, size_t i, int rank);
/// Numpy broadcasting of two shapes; throws UserError naming the node on a mismatch.
std::vector<int64_t> broadcast_shapes(const Node& n, const std::vector<int64_t>& a,
                                      const std::vector<int64_t>& b);
/// "(1, 3, 4)".
std::string shape_str(const std::vector<int64_t>& s);

}  // namespace tessera::graph::detail
