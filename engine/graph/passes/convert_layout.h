// Layout conversion of conv2d to the blocked NCHW[x]c layout (TVM's conv2d_NCHWc).
#pragma once

#include <vector>

#include "engine/graph/passes/pass.h"

namespace tessera::passes {

/// Rewrites float32 nn.conv2d with constant weights (and bias) and groups == 1
/// into nn.conv2d_NCHWc with weights packed at compile time into constants;
/// depthwise convs (groups == channels, one filter per channel) become
/// nn.conv2d_NCHWc with groups set and weights (C/b, 1, KH, KW, 1, b).
/// Values stay blocked through following convs, relus and adds of two
/// blocked values, so layout_transform nodes appear only at the borders (a
/// blocked value is converted back at most once, where an NCHW reader or a
/// graph output needs it). Channels that do not fill the last block are
/// zero-padded; padded channels stay zero through relu/add/multiply, clip
/// with 0 in its bounds and multiply by a scalar constant, which also stay
/// blocked, and so do max pooling and global average pooling of a blocked
/// value (nn.max_pool2d_NCHWc, nn.global_avg_pool2d_NCHWc). nn.gemm with a
/// constant transposed B gets B stored as [K, N].
graph::Graph convert_layout(const graph::Graph& g, const PassContext& ctx);

/// The channel block for a tensor of `channels` channels on this CPU: the
/// fp32 lanes of a vector (16 with AVX-512, 8 otherwise), or `channels`
/// itself when fewer than two vectors (an RGB input stays one block of 3;
/// 20 channels one block of 20, not two of 16 with 12 of padding).
int64_t layout_block(int64_t channels);

/// The output channel block of a blocked conv with `channels` outputs: the
/// lanes of a vector, or `channels` itself between one and two vectors (a
/// consumer then reduces over 20 channels, not 32: brainmaze's conv whose
/// kernel spans its input's height 3.1 -> 1.4 ms).
int64_t output_block(int64_t channels);

/// The fp32 lanes of the host's vectors (16 with AVX-512F, 8 otherwise).
int64_t layout_lanes();

/// OIHW weights (K, C, KH, KW) packed into OIHW[ib]i[ob]o:
/// (ceil(K/ob), ceil(C/ib), KH, KW, ib, ob), zero where the channel is padded.
std::vector<float> pack_conv2d_weight(const std::vector<float>& oihw, int64_t K, int64_t C,
                                      int64_t KH, int64_t KW, int64_t ib, int64_t ob);

/// Depthwise weights (C, 1, KH, KW) packed into (ceil(C/b), 1, KH, KW, 1, b),
/// zero where the channel is padded.
std::vector<float> pack_depthwise_weight(const std::vector<float>& w, int64_t C, int64_t KH,
                                         int64_t KW, int64_t b);

}  // namespace tessera::passes
