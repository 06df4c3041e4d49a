// inject_prefetch: software prefetches requested by loop annotations.
#pragma once

#include "engine/tir/op.h"  // kPrefetchAnnotation, kPrefetchIntrinsic
#include "engine/tir/stmt.h"

namespace tessera::tir {

/// For each loop L annotated with software_prefetch = "B:d": in every
/// innermost serial loop of L's body (or L's body itself when it has none),
/// each distinct load of buffer B whose index depends on L's variable and on
/// no variable bound inside that loop body gets a prefetch of the same index
/// with L's variable advanced by d iterations, at the start of the body: the
/// data the same instruction reads d iterations of L later. Runs on
/// flattened IR (after unroll_loops and simplify). Unknown buffers are
/// ignored; a malformed value (a user's trace may set it) raises UserError.
PrimFunc inject_prefetch(const PrimFunc& f);

}  // namespace tessera::tir
