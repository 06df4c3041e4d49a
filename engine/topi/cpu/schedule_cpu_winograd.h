// The default CPU schedule rule of nn.conv2d_winograd_NCHWc, used by
// schedule_cpu_default.
#pragma once

#include <string>
#include <vector>

#include "engine/graph/graph.h"
#include "engine/schedule/schedule.h"
#include "engine/topi/cpu/schedule_cpu.h"

namespace tessera::topi {

/// Schedules `block` of a Winograd conv kernel whose anchor node `n` is
/// nn.conv2d_winograd_NCHWc. The output stage (inverse transform) is tiled
/// by output tile rows (parallel), and the transformed input V and the
/// batched GEMM M are computed per tile row right before it (in cache):
/// V vectorized over the channel block with the alpha x alpha loops
/// unrolled; M register-tiled (P tiles x 1-2 output-channel vectors of
/// accumulators, the input-channel reduction inside, broadcast-FMA);
/// epilogue stages (fused relu / residual add) per output tile. Returns
/// false for blocks it does not schedule; throws schedule::ScheduleError
/// when a step does not apply (the caller restores the schedule).
bool schedule_winograd_block(schedule::Schedule& s, const std::string& block,
                             const graph::Node& n, const CpuScheduleOptions& options);

/// The knobs schedule_winograd_block reads (first choice = default):
/// winograd.tile_cols (tiles per register tile), winograd.oc_vectors
/// (output-channel vectors per register tile), winograd.pad_per_row (pad
/// the input per tile row in cache instead of whole).
std::vector<CpuKnob> winograd_knobs(const tir::PrimFunc& f, const graph::Node& n,
                                    const CpuScheduleOptions& options);

}  // namespace tessera::topi
