// A vector index that is a Ramp clamped into a range: how a padded read
// keeps both sides of its select in bounds, vectorized along a row.
#pragma once

#include "engine/tir/expr.h"

namespace tessera::tir {

/// index = offset + clamp(ramp, lo, hi): offset, lo and hi lane-invariant
/// (Broadcasts; offset undefined when there is none, lo or hi undefined
/// where the simplifier proved that side never clamps).
struct ClampedRamp {
    Expr offset;
    const Ramp* ramp = nullptr;
    Expr lo, hi;
};

/// Matches offset + min(max(ramp, lo), hi), max(min(ramp, hi), lo),
/// max(ramp, lo) or min(ramp, hi) (either operand order, offsets summed);
/// false for anything else.
bool match_clamped_ramp(const Expr& index, ClampedRamp& out);

/// Lanes a Ramp of stride 2-4 may span and still be read as two loads of
/// the span and a shuffle (the LLVM code generator's strided reads).
inline constexpr int64_t kMaxStridedSpan = 128;

/// Whether a vector read at `r` is one contiguous load, or a strided one
/// read through its span (stride 2-4, at most kMaxStridedSpan elements):
/// no gather.
bool read_without_gather(const Ramp& r);

}  // namespace tessera::tir
