// loop_partition: loops whose body is guarded by a condition on the loop variable are split into an
// unconditional main part and a tail.
#pragma once

#include "engine/tir/stmt.h"

namespace tessera::tir {

/// For a loop (not thread-bound) with a constant extent whose body contains an
/// IfThenElse whose condition depends on the loop variable, finds the largest
/// prefix of iterations for which the condition is provably true (interval
/// analysis with the bounds of the enclosing and inner loops), emits that
/// prefix without the condition and the rest as a tail loop that keeps it.
/// Tails are partitioned recursively (inner loops), so a non-dividing split
/// ends up as one unconditional nest plus a small guarded one.
PrimFunc loop_partition(const PrimFunc& f);

}  // namespace tessera::tir
