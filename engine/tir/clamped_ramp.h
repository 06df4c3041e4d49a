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

}  // namespace tessera::tir
