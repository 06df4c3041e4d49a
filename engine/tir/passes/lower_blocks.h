// lower_blocks: removes TensorIR Blocks so that only plain loops remain.
#pragma once

#include "engine/tir/stmt.h"

namespace tessera::tir {

/// Replaces every BlockRealize/Block by plain statements: each block iteration
/// variable is substituted by its bound value; a non-trivial predicate becomes
/// an IfThenElse; a reduction `init` runs under
/// `if (all reduce iter values == their dom min)` before the body (TVM's
/// LowerInitBlock); the block's alloc_buffers become Allocate statements
/// around its body (the root block's too).
PrimFunc lower_blocks(const PrimFunc& f);

/// The same rewrite on a statement.
Stmt lower_blocks(const Stmt& s);

}  // namespace tessera::tir
