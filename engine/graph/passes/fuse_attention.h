// Recognises scaled dot-product attention written out as two matmuls around a
// softmax (what exporters write for every transformer) and replaces it by one
// nn.attention node, whose kernel computes a block of query rows at a time
// with the scores kept in cache (schedule_cpu_attention.h).
#pragma once

#include "engine/graph/passes/pass.h"

namespace tessera::passes {

/// Rewrites matmul(softmax(matmul(Q, K^T) [* s | / s] [+ mask]), V), softmax
/// over the last axis, into nn.attention(Q, K^T, V [, mask], scale = s or
/// 1 / s); with where(keep, scores, c) (c a scalar constant: a causal mask as
/// decoders write it) in place of the add, the bool `keep` is the mask and
/// mask_fill = c. Q [.., Sq, D], K^T [.., D, Sk] and V [.., Sk, Dv] must have the
/// same batch dims (no broadcasting), s a float32 scalar constant, the mask
/// (float32, or bool for where) broadcastable to the scores; every intermediate must have no
/// other reader and not be a graph output, and a head's scores at least
/// 256 x 256 (Sq x Sk; shorter sequences run faster unfused). The matched
/// nodes are removed. A causal attention (a constant keep mask, true exactly
/// where key <= query) over at least 1024 positions becomes blocks of 256
/// query rows, each an nn.attention against the keys up to its last row (Q,
/// K^T and V sliced, its part of the mask), concatenated: the all-masked
/// scores above the diagonal are not computed.
graph::Graph fuse_attention(const graph::Graph& g, const PassContext& ctx);

}  // namespace tessera::passes
