// Statement simplification with loop and block iteration bounds.
#pragma once

#include "engine/arith/analyzer.h"

namespace tessera::arith {

/// Simplifies every expression in `s` with `ana`, binding loop variables,
/// block iteration variables and Let variables to their ranges in their
/// scopes. With `remove_trivial`, also removes For loops of extent 1
/// (substituting the minimum), IfThenElse with a provable condition and
/// BlockRealize predicates that always hold.
tir::Stmt simplify_stmt(const tir::Stmt& s, Analyzer& ana, bool remove_trivial);

}  // namespace tessera::arith
