// Read-only questions about a (scheduled) PrimFunc that schedule rules ask:
// which block has this name, how long is this loop, does a block reduce.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/schedule/schedule.h"

namespace tessera::schedule {

/// The block named `name`, or nullptr.
const tir::Block* find_block(const tir::PrimFunc& f, const std::string& name);

/// The constant extent of the loop named `loop`; -1 if there is no such loop
/// or its extent is not a constant.
int64_t loop_extent(const tir::PrimFunc& f, const std::string& loop);

/// What applying `step` to `f` undoes without failing: a split or fuse of a
/// parallel, vectorized, unrolled or bound loop makes serial loops of it (as
/// TVM's primitives do). One line naming the loop and its kind, e.g. "loop
/// 'i' was parallel: its parts are serial; mark one of them again"; empty
/// when the step drops nothing.
std::string kind_dropped_by(const tir::PrimFunc& f, const Step& step);

/// True when the block has a reduction iteration variable.
bool is_reduction(const tir::Block* b);

/// Product of the loops' extents (unknown extents count as 1).
int64_t work(const Schedule& s, const std::vector<std::string>& loops);

/// How many elements apart `load` (in block `b`) reads when `b`'s
/// iteration variable `var` moves by one and the others stay (the load's
/// row-major element offset, its divisions and remainders simplified with
/// the variables' domains); nullopt when that is not one constant.
std::optional<int64_t> element_step(const tir::Block* b, const tir::BufferLoad* load,
                                    const tir::Var& var);

}  // namespace tessera::schedule
