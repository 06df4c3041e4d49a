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
/// Unary math and activations, binary arithmetic/comparison/logic, where, cast.
void add_math_ops(std::vector<OpDef>& table);
/// reduce_*, argmax/argmin, cumsum, topk, log_softmax, batch/layer/instance norm.
void add_reduce_ops(std::vector<OpDef>& table);
/// transpose, concatenate, strided_slice, take, gather_elements, broadcast_to, tile, pad, resize.
void add_transform_ops(std::vector<OpDef>& table);
/// avg_pool2d, global_max_pool2d, conv2d_transpose.
void add_pool_deconv_ops(std::vector<OpDef>& table);
/// nn.conv3d, nn.max_pool3d, nn.avg_pool3d, einsum (ops_nn_nd.cpp).
void add_nn_nd_ops(std::vector<OpDef>& table);
/// layout_transform, nn.conv2d_NCHWc (dense and depthwise), nn.max_pool2d_NCHWc,
/// nn.global_avg_pool2d_NCHWc (blocked layout for CPU conv; ops_layout.cpp).
void add_layout_ops(std::vector<OpDef>& table);
void add_winograd_ops(std::vector<OpDef>& table);  // ops_winograd.cpp: nn.conv2d_winograd_NCHWc
void add_math_signal_ops(std::vector<OpDef>& table);  // ops_math_signal.cpp: extra elementwise/unary/window/quantization ops
void add_index_ops(std::vector<OpDef>& table);  // ops_index.cpp: indexing, scatter and data-dependent-shape ops
void add_dtype_ops(std::vector<OpDef>& table);  // ops_dtype.cpp: narrow and half-precision dtypes at the graph boundary
/// ops_int8.cpp: pack_int8x4, nn.matmul_u8i8, nn.matmul_i8u8, nn.im2col_int8x4 (integer GEMMs).
void add_int8_ops(std::vector<OpDef>& table);
/// The dtype named by dtype_name() ("float32", ...); UserError naming the node otherwise.
DType dtype_from_name(const Node& n, const std::string& name);

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
/// The int list attribute `key` (default: `size` copies of `dflt`); throws
/// UserError naming the node unless it has exactly `size` values.
std::vector<int64_t> ints_of_size(const Node& n, const std::string& key, size_t size, int64_t dflt);
/// Output extent of a sliding window along one axis (conv/pool), with ONNX's
/// ceil_mode rule that drops a last window starting inside the end padding.
int64_t window_out(const Node& n, int64_t in, int64_t pad_lo, int64_t pad_hi, int64_t kernel,
                   int64_t stride, int64_t dilation, bool ceil_mode);

}  // namespace tessera::graph::detail
