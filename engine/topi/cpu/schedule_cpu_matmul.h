// The default CPU schedule rule of matmul / gemm / dense blocks, used by
// schedule_cpu_default: a BLIS-like blocked GEMM with an MR x NR register
// micro-kernel, and the operand packing (pack_gemm.h) it asks for.
#pragma once

#include <string>
#include <vector>

#include "engine/schedule/schedule.h"
#include "engine/topi/cpu/pack_gemm.h"
#include "engine/topi/cpu/schedule_cpu.h"

namespace tessera::topi {

/// Schedules the matmul reduction `block` (loops (batch.., i, j, k)):
///  - large products (B does not stay in L1 and there are enough rows to
///    reuse it): on one thread loops (i0, j0, k0, i1, k1, i2, j1) with the
///    MC rows of A kept in L2, a KC x NR panel of B (2/3 of L1) reused from
///    L1 by the MC / MR tiles, the MC x NR block of C in cache across the
///    KC blocks and the MR x NR accumulator tile in registers (i2 unrolled,
///    j1 NR-wide vectors); B is packed into NR-wide panels (`packs` gets the spec,
///    applied as the last steps of the schedule by apply_packs); with parallel loops the
///    BLIS order (jc, k0, i0, j1, i1, k1, i2, j2) with one NC block of
///    columns per thread, parallel over jc;
///  - small ones: (fused(batch.., jo, io)) k ii(unrolled) ji(vector).
/// The init is decomposed above the reduction loops. Elementwise consumers
/// (bias, activation: the fused group's epilogue) are computed at the tile
/// loop (i0, or the fused tile loop) while the tile is in cache, vectorized;
/// their names are appended to `epilogues`. Throws
/// schedule::ScheduleError when a step does not apply (the caller restores
/// the schedule).
void schedule_matmul_block(schedule::Schedule& s, const std::string& block,
                           const CpuScheduleOptions& options, std::vector<PackSpec>* packs,
                           std::vector<std::string>* epilogues = nullptr);

/// The knobs schedule_matmul_block reads for the matmul block of `f`, with
/// legal choices (the first is the default rule's): "matmul.mr" (rows of
/// the register tile), "matmul.nr_vectors" (its width in vectors),
/// "matmul.blocked" (cache blocking), "matmul.pack_a" / "matmul.pack_b"
/// (operand panels), "matmul.kc" / "matmul.mc" / "matmul.nc" (cache blocks;
/// nc 0 = all columns), "matmul.order" (0: MC, KC, NR panels; 1: BLIS NC,
/// KC, MC; 2: MC, NR panels, KC) and "matmul.parallel". Every combination schedules and computes
/// the product (tails are predicated).
std::vector<CpuKnob> matmul_knobs(const tir::PrimFunc& f, const graph::Node& n,
                                  const CpuScheduleOptions& options);

/// Applies the operand packings to `s` with Schedule::pack_operand (in
/// order, each a recorded step; a spec that does not apply is skipped).
void apply_packs(schedule::Schedule& s, const std::vector<PackSpec>& packs);

}  // namespace tessera::topi
