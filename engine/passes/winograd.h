// Winograd rewrite of 3x3 stride-1 blocked convolutions (nn.conv2d_NCHWc ->
// nn.conv2d_winograd_NCHWc), weights transformed at compile time.
#pragma once

#include <cstdint>

#include "engine/passes/pass.h"

namespace tessera::passes {

/// Output tile of the rewrite: F(2x2, 3x3) (2.25x fewer multiplies than the
/// direct conv, errors within fp32 rounding of it).
inline constexpr int64_t kWinogradTile = 2;
/// Smallest output plane (OH * OW) the rewrite takes: on smaller planes the
/// direct conv is bound by its weights, which the transform grows 16/9x.
inline constexpr int64_t kWinogradMinPlane = 28 * 28;

/// Rewrites every nn.conv2d_NCHWc with a constant 3x3 weight, stride 1,
/// dilation 1, groups 1 and an output plane of at least `min_plane` pixels
/// into nn.conv2d_winograd_NCHWc (attribute tile = `tile`, 2 or 4) whose
/// weight is U = G g G^T (alpha, alpha, OCo, ICo, ib, ob), computed in double
/// precision; the bias input and the padding stay. Other nodes are kept.
graph::Graph winograd_rewrite(const graph::Graph& g, int64_t tile, int64_t min_plane);

/// The pipeline pass: winograd_rewrite(g, kWinogradTile, kWinogradMinPlane).
graph::Graph winograd(const graph::Graph& g, const PassContext& ctx);

}  // namespace tessera::passes
