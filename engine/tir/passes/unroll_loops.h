// unroll_loops: unrolled loops become copies of their body.
#pragma once

#include "engine/tir/stmt.h"

namespace tessera::tir {

/// Replaces each For of kind Unrolled, or annotated "pragma_unroll_explicit"
/// (value other than "0"), with constant extent <= kMaxUnrollExtent by a
/// sequence of copies of its body with the loop variable substituted
/// (simplified). Longer or symbolic loops become Serial loops.
PrimFunc unroll_loops(const PrimFunc& f);

/// The largest extent unroll_loops copies out.
inline constexpr int64_t kMaxUnrollExtent = 64;

}  // namespace tessera::tir
