// Winograd rewrite of 3x3 stride-1 blocked convolutions (nn.conv2d_NCHWc ->
// nn.conv2d_winograd_NCHWc), weights transformed at compile time.
#pragma once

#include <cstdint>

#include "engine/graph/passes/pass.h"

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

/// Per-layer algorithm choice (issue #20): the cost model's estimate of the
/// work per output pixel, in multiply-add equivalents.
///   direct:       9 * IC * OC
///   Winograd F(m, 3) with alpha = m + 2:
///                 (alpha^2 / m^2) * OC * (IC + kWinogradChannelOverhead)
/// The overhead term is what a transformed GEMM with a short reduction (IC)
/// pays per output channel and tile point: the input and output transforms
/// and the accumulator loads and stores around a K = IC loop. Fitted on a
/// sweep of 3x3 stride-1 conv+relu layers (IC, OC in 3..256, planes 14..56,
/// 1 and 2 threads, AVX2 EPYC; ms per kernel, Winograd vs direct): Winograd
/// wins from IC = 16 on (16->16 56x56 0.165 vs 0.347, 32->64 28x28 0.309 vs
/// 0.556, 256->256 14x14 2.32 vs 4.47) and loses below it whatever OC
/// (3->8 56x56 0.264 vs 0.034, 8->16 28x28 0.150 vs 0.044, 3->64 56x56 0.774
/// vs 0.202: the bundled example's two convs ran 10x slower at -O2 than at
/// -O1 before this choice). With 12, the model picks the faster algorithm in
/// 71 of the sweep's 72 cases; the other is within 4 % (16->32 28x28 at 2
/// threads). OC cancels out: the choice is Winograd from IC = 10 on.
/// On a 16-lane (AVX-512) AMD EPYC, the same kind of sweep (IC 3..64, OC
/// 8..64, planes 14..56, 1 thread, `run --profile`) gives Winograd 0.60 to
/// 1.16x the direct conv's time where it is chosen (36 cases, median 0.80;
/// the 1.16 is 16->16 at 14x14, 7 us); before the rule found its loops by
/// iteration variable (one channel block has none), it was 8-19x slower there.
inline constexpr double kWinogradChannelOverhead = 12.0;

/// The cost model's choice for a 3x3 stride-1 conv with `ic` input and `oc`
/// output channels over an `plane`-pixel output: Winograd F(tile, 3) when
/// the plane is at least kWinogradMinPlane and its estimated work is below the
/// direct conv's.
bool winograd_pays_off(int64_t ic, int64_t oc, int64_t plane, int64_t tile);

/// Which eligible convs winograd_rewrite takes.
enum class WinogradChoice {
    kEvery,       ///< every eligible conv with an output plane >= min_plane
    kByCostModel  ///< those winograd_pays_off() chooses (min_plane ignored)
};

/// Rewrites every nn.conv2d_NCHWc with a constant 3x3 weight, stride 1,
/// dilation 1, groups 1 and an output plane of at least `min_plane` pixels
/// (or, with WinogradChoice::kByCostModel, those the cost model picks)
/// into nn.conv2d_winograd_NCHWc (attribute tile = `tile`, 2 or 4) whose
/// weight is U = G g G^T (alpha, alpha, OCo, ICo, ib, ob), computed in double
/// precision; the bias input and the padding stay. Other nodes are kept.
graph::Graph winograd_rewrite(const graph::Graph& g, int64_t tile, int64_t min_plane,
                              WinogradChoice choice = WinogradChoice::kEvery);

/// The pipeline pass: winograd_rewrite(g, kWinogradTile, kWinogradMinPlane,
/// WinogradChoice::kByCostModel).
graph::Graph winograd(const graph::Graph& g, const PassContext& ctx);

}  // namespace tessera::passes
