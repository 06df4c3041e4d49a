// CPU schedule rule for nn.attention (topi_attention.cpp): a block of query
// rows at a time, every stage inside it, so the block's scores and
// exponentials stay in cache instead of going through memory (the three
// kernels it replaces wrote and read the whole [.., Sq, Sk] score matrix
// twice).
#pragma once

#include "engine/schedule/schedule.h"
#include "engine/topi/cpu/schedule_cpu.h"

namespace tessera::topi {

/// Schedules an nn.attention kernel: the output's query rows split into
/// blocks of R (a divisor of Sq, up to 4), the blocks of every batch run in
/// parallel; per block, Q K^T as R rows x 2 vectors of columns accumulated
/// over D in registers, the row max and sum as vector reductions, the
/// exponentials vectorized, P V as R rows x Dv accumulated over Sk, all in
/// "local" buffers of one block. Returns false (the schedule unchanged) when
/// the kernel is not nn.attention's six stages.
bool schedule_attention(schedule::Schedule& s, const CpuScheduleOptions& o);

}  // namespace tessera::topi
