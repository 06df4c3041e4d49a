// Internal to topi: the per-family compute functions and shared helpers
// (broadcast indexing, attribute checks, error context).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "engine/core/error.h"
#include "engine/topi/topi.h"

namespace tessera::topi::detail {

using Tensors = std::vector<te::Tensor>;
using Types = std::vector<graph::TensorType>;

/// One op family's compute: input tensors and output types to output tensors.
using ComputeFn = Tensors (*)(const graph::Node&, const Tensors&, const Types&);
/// Graph op name -> compute (topi_registry.cpp builds it from the add_*_computes below).
using ComputeTable = std::map<std::string, ComputeFn>;
void add_layout_computes(ComputeTable& t);  // topi_conv_nchwc.cpp: blocked conv and pools
void add_winograd_computes(ComputeTable& t);  // topi_conv_winograd.cpp: Winograd 3x3 conv
void add_math_signal_computes(ComputeTable& t);  // topi_math_signal.cpp: extra elementwise/unary/window/quantization ops
void add_index_computes(ComputeTable& t);  // topi_index.cpp: indexing, scatter and data-dependent-shape ops
void add_dtype_computes(ComputeTable& t);  // topi_dtype.cpp: narrow and half-precision dtypes at the graph boundary

/// "node 'conv1' (nn.conv2d)": the prefix of every UserError about a node.
std::string where(const graph::Node& n);

/// Checks the input count is in [lo, hi] and exactly one output type.
void check_arity(const graph::Node& n, const Tensors& in, const Types& out, size_t lo, size_t hi);

/// Indices into a tensor of shape `in_shape` that is numpy-broadcast to an
/// output of shape `out_shape` indexed by `out_idx` (right-aligned; size-1
/// dims read index 0).
std::vector<tir::Expr> broadcast_index(const std::vector<tir::Expr>& out_idx,
                                       const std::vector<int64_t>& out_shape,
                                       const std::vector<int64_t>& in_shape);

/// Copies loop variables into an index list.
std::vector<tir::Expr> as_exprs(const std::vector<tir::Var>& vars);

/// min(max(e, 0), extent - 1): an index that is always in bounds, for reads
/// under a Select whose both branches are evaluated.
tir::Expr clamp_index(tir::Expr e, int64_t extent);

/// e * c, or e itself when c == 1 (keeps index expressions readable).
tir::Expr mul_const(tir::Expr e, int64_t c);

/// e + c, or e itself when c == 0.
tir::Expr add_const(tir::Expr e, int64_t c);

/// An int-list attribute of exactly `size` entries (or `dflt` if absent).
std::vector<int64_t> attr_ints_sized(const graph::Node& n, const std::string& key, size_t size,
                                     std::vector<int64_t> dflt);

/// 4 pads (top, left, bottom, right) from "padding" given as 2 or 4 entries.
std::vector<int64_t> attr_padding(const graph::Node& n);

Tensors conv2d(const graph::Node& n, const Tensors& in, const Types& out);
Tensors conv2d_nchwc(const graph::Node& n, const Tensors& in, const Types& out);  // topi_conv_nchwc.cpp
Tensors layout_transform(const graph::Node& n, const Tensors& in, const Types& out);
Tensors matmul(const graph::Node& n, const Tensors& in, const Types& out);
Tensors gemm(const graph::Node& n, const Tensors& in, const Types& out);
/// sum_k product(a[.., i, k], b[.., k, j]) with nn.matmul's batching and
/// 1-D rules, output shape `os` (topi_matmul.cpp).
te::Tensor matrix_product(const graph::Node& n, const te::Tensor& a, const te::Tensor& b,
                          const std::vector<int64_t>& os,
                          const std::function<tir::Expr(tir::Expr, tir::Expr)>& product);
// topi_int8.cpp
Tensors pack_int8x4(const graph::Node& n, const Tensors& in, const Types& out);
Tensors matmul_u8i8(const graph::Node& n, const Tensors& in, const Types& out);
Tensors matmul_i8u8(const graph::Node& n, const Tensors& in, const Types& out);
Tensors im2col_int8x4(const graph::Node& n, const Tensors& in, const Types& out);
Tensors binary(const graph::Node& n, const Tensors& in, const Types& out);
Tensors relu(const graph::Node& n, const Tensors& in, const Types& out);
Tensors max_pool2d(const graph::Node& n, const Tensors& in, const Types& out);
Tensors global_avg_pool2d(const graph::Node& n, const Tensors& in, const Types& out);
Tensors reshape(const graph::Node& n, const Tensors& in, const Types& out);
Tensors softmax(const graph::Node& n, const Tensors& in, const Types& out);
/// nn.attention (topi_attention.cpp).
Tensors attention(const graph::Node& n, const Tensors& in, const Types& out);

// topi_unary.cpp / topi_elemwise.cpp
bool is_unary_op(const std::string& op);
bool is_binary_op(const std::string& op);
Tensors unary(const graph::Node& n, const Tensors& in, const Types& out);
Tensors where_op(const graph::Node& n, const Tensors& in, const Types& out);
// topi_reduce.cpp
Tensors reduce(const graph::Node& n, const Tensors& in, const Types& out);
Tensors arg_reduce(const graph::Node& n, const Tensors& in, const Types& out);
Tensors cumsum(const graph::Node& n, const Tensors& in, const Types& out);
Tensors topk(const graph::Node& n, const Tensors& in, const Types& out);
Tensors log_softmax(const graph::Node& n, const Tensors& in, const Types& out);
// topi_norm.cpp
Tensors batch_norm(const graph::Node& n, const Tensors& in, const Types& out);
Tensors instance_norm(const graph::Node& n, const Tensors& in, const Types& out);
Tensors layer_norm(const graph::Node& n, const Tensors& in, const Types& out);
// topi_transform.cpp
Tensors transpose(const graph::Node& n, const Tensors& in, const Types& out);
Tensors concatenate(const graph::Node& n, const Tensors& in, const Types& out);
Tensors strided_slice(const graph::Node& n, const Tensors& in, const Types& out);
Tensors take(const graph::Node& n, const Tensors& in, const Types& out);
Tensors gather_elements(const graph::Node& n, const Tensors& in, const Types& out);
Tensors broadcast_to(const graph::Node& n, const Tensors& in, const Types& out);
Tensors tile(const graph::Node& n, const Tensors& in, const Types& out);
Tensors pad(const graph::Node& n, const Tensors& in, const Types& out);
// topi_pool_deconv.cpp
Tensors avg_pool2d(const graph::Node& n, const Tensors& in, const Types& out);
Tensors global_max_pool2d(const graph::Node& n, const Tensors& in, const Types& out);
Tensors conv2d_transpose(const graph::Node& n, const Tensors& in, const Types& out);
// topi_nn_nd.cpp
Tensors conv3d(const graph::Node& n, const Tensors& in, const Types& out);
Tensors max_pool3d(const graph::Node& n, const Tensors& in, const Types& out);
Tensors avg_pool3d(const graph::Node& n, const Tensors& in, const Types& out);
Tensors conv3d_transpose(const graph::Node& n, const Tensors& in, const Types& out);
Tensors max_pool2d_indices(const graph::Node& n, const Tensors& in, const Types& out);
Tensors einsum(const graph::Node& n, const Tensors& in, const Types& out);
// topi_resize.cpp
Tensors resize(const graph::Node& n, const Tensors& in, const Types& out);

}  // namespace tessera::topi::detail
