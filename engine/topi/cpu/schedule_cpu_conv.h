// The default CPU schedule rule of 2-D convolution (nn.conv2d in NCHW and
// nn.conv2d_NCHWc in the blocked layout), used by schedule_cpu_default.
#pragma once

#include <string>

#include "engine/graph/graph.h"
#include "engine/schedule/schedule.h"
#include "engine/topi/cpu/schedule_cpu.h"

namespace tessera::topi {

/// Schedules `block` of a conv kernel whose anchor node is `n`:
///  - nn.conv2d_NCHWc (TVM's x86 conv2d_NCHWc): the accumulators of a
///    register tile (reg_n output columns x one or two channel-block
///    vectors, 28 zmm with AVX-512) stay in registers while the reduction
///    loops (input-channel blocks, kernel rows and columns, the channels of
///    a block) run outside the unrolled micro-kernel: a broadcast input
///    value times weight vectors, one FMA each. Parallel over (n, output
///    row, output-channel block pair). The padding stage is vectorized over
///    its channel block; epilogue blocks (bias, fused relu) are computed
///    per tile.
///  - depthwise nn.conv2d_NCHWc (groups set): a register tile of output
///    columns x the channel-block vector, the 3x3 (any) window unrolled
///    around it, parallel over channel blocks (or rows when there are few);
///    the padded input is made per block of output rows, in cache;
///  - nn.max_pool2d_NCHWc / nn.global_avg_pool2d_NCHWc: vectorized over the
///    channel block, the window unrolled.
///  - nn.conv2d (NCHW): output-channel blocking (unrolled) times an
///    output-row vector, reduction loops outside the micro-kernel; grouped
///    (depthwise): a tile of output columns in vector registers, the window
///    unrolled around it, parallel over channels, the padded input rows of
///    each block of output rows made right before it (in cache); narrow
///    stride-1 depthwise convs on bytes (topi's conv2d_flat) over the
///    flattened padded plane: tiles of whole rows as full vectors, each
///    channel's padded plane made right before it, the output after it.
/// Returns false when the rule does not schedule `block` (the generic
/// injective / reduction rules then apply). Throws schedule::ScheduleError
/// when a step does not apply; the caller restores the schedule.
bool schedule_conv2d_block(schedule::Schedule& s, const std::string& block, const graph::Node& n,
                           const CpuScheduleOptions& options);

/// The knobs schedule_conv2d_block reads for the conv block of `f`, with
/// legal choices (the first is the rule's default):
///  - dense NCHW[x]c: conv2d.reg_cols (output columns per register tile),
///    conv2d.oc_vectors (channel-block vectors per tile), conv2d.channels_outer
///    (0: rows outermost, 1: output-channel blocks outermost, 2: input-channel
///    blocks outside the rows too);
///  - depthwise NCHW[x]c: conv2d.reg_cols, conv2d.rows_outer, conv2d.unroll_window,
///    and with padding conv2d.pad_per_row (pad per row block, not the whole
///    input) and conv2d.row_block (output rows per block);
///  - NCHW nn.conv2d: conv2d.oc_block, conv2d.ow_block;
///  - grouped NCHW nn.conv2d (a quantized depthwise conv's, on 8-bit data):
///    conv2d.ow_block, conv2d.unroll_window, conv2d.local_buffers and, with
///    one output channel per group and padding, conv2d.pad_per_row and
///    conv2d.row_block; over the flattened plane (narrow stride-1 depthwise
///    on bytes): conv2d.row_block (rows per tile), conv2d.unroll_window,
///    conv2d.local_buffers.
std::vector<CpuKnob> conv2d_knobs(const tir::PrimFunc& f, const graph::Node& n,
                                  const CpuScheduleOptions& options);

/// Output columns per register tile for an output width `ow`, `lanes` fp32
/// lanes per vector and `oc_vectors` channel-block vectors per column (a
/// divisor of ow where one exists, so no tail).
int64_t conv_register_columns(int64_t ow, int lanes, int64_t oc_vectors = 1);

}  // namespace tessera::topi
