// Private to the ONNX frontend: ONNX Runtime's com.microsoft transformer ops,
// as its transformers optimizer writes them into BERT-style models, expanded
// into the standard ops that define them (Tessera's fuse_attention,
// fuse_layer_norm and fuse_gelu passes fuse them again):
//  - Attention: one [hidden, Dq + Dk + Dv] projection of the input, heads,
//    scaled dot products, a mask (1-D end positions, 2 x batch end and start
//    positions, or a raw [batch, keys] / [batch, queries, keys] mask of 1s
//    and 0s; masked scores get mask_filter_value), a causal mask with
//    unidirectional = 1, an additive attention_bias, softmax, the heads
//    merged back.
//  - MultiHeadAttention: the same on separate query, key and value
//    ([batch, length, hidden] each, an optional packed bias; or key and
//    value already in heads, [batch, heads, length, size]), a key padding
//    mask of either form.
//  - EmbedLayerNormalization: word + position (+ segment) embeddings,
//    layer-normalized; its mask_index output (the mask's row sums, zeros
//    without a mask) and embedding_sum.
// Past key / value inputs, present outputs and rotary embeddings are refused
// by name. Checked against ONNX Runtime (tests/data/onnx_models/contrib_*).
#pragma once

#include <vector>

#include "engine/frontend/onnx/onnx_node_rewrite.h"

namespace tessera::frontend::onnx_import {

/// Appends the standard ops of `n` to `out` when it is one of the ops above
/// (true); false for any other op.
bool expand_contrib_attention(NodeRewriter& r, const Graphs& graphs, const onnx::NodeProto& n,
                              std::vector<onnx::NodeProto>& out);

}  // namespace tessera::frontend::onnx_import
