// Winograd rewrite of 3x3 stride-1 blocked convolutions (nn.conv2d_NCHWc ->
// nn.conv2d_winograd_NCHWc), weights transformed at compile time.
#pragma once

#include <cstdint>

#include "engine/passes/pass.h"

namespace tessera::passes {

/// Output tile of the rewrite: F(2x2, 3x3) (2.25x fewer multiplies than the
/// direct conv, errors within fp32 rounding of it).
inline constexpr int64_t kWinogradTile = 2;
/// Smallest output plane (OH * OW) the rewrite takes. ResNet-18 at 1 thread
/// (per kernel, ms, Winograd F(2,3) vs direct): 56x56 0.88 vs 1.38, 28x28 0.85
/// vs 1.34, 14x14 0.95 vs 1.40 (with the whole-plane GEMM of
/// schedule_cpu_winograd.cpp), 7x7 2.1 vs 1.85: there the conv is bound by
/// reading its weights from memory, which the transform grows 16/9x. F(4,3)
/// (tile 4) was no faster in the whole model (1 thread 20.48 vs 20.57 ms,
/// 2 threads 11.6 vs 11.1 ms), so the tile stays 2. Whole model, 28x28 ->
/// 14x14 threshold: 1 thread 20.85 -> 19.52 ms (1.15x -> 1.24x ONNX
/// Runtime), 2 threads 10.90 -> 10.52 ms (1.15x -> 1.20x).
inline constexpr int64_t kWinogradMinPlane = 14 * 14;

/// Rewrites every nn.conv2d_NCHWc with a constant 3x3 weight, stride 1,
/// dilation 1, groups 1 and an output plane of at least `min_plane` pixels
/// into nn.conv2d_winograd_NCHWc (attribute tile = `tile`, 2 or 4) whose
/// weight is U = G g G^T (alpha, alpha, OCo, ICo, ib, ob), computed in double
/// precision; the bias input and the padding stay. Other nodes are kept.
graph::Graph winograd_rewrite(const graph::Graph& g, int64_t tile, int64_t min_plane);

/// The pipeline pass: winograd_rewrite(g, kWinogradTile, kWinogradMinPlane).
graph::Graph winograd(const graph::Graph& g, const PassContext& ctx);

}  // namespace tessera::passes
