// Arithmetic simplification of loop IR (constant folding and identities) and
// structural equality of expressions.
#pragma once

#include "engine/tir/stmt.h"

namespace tessera::tir {

/// Folds constants and removes identities: x+0, x*1, x*0 (integers), nested
/// constant offsets ((x+2)+3 -> x+5), x//1, x%1, constant comparisons and
/// selects. Integer results wrap to the type's width like the code would.
Expr simplify(const Expr& e);

/// Simplifies every expression, removes For loops of extent 1 (substituting
/// the loop minimum) and IfThenElse with a constant condition.
Stmt simplify(const Stmt& s);

/// The function with a simplified body.
PrimFunc simplify(const PrimFunc& f);

/// True when a and b are the same tree: same node kinds, types, constants,
/// the same Variable nodes (by identity) and the same buffers.
bool structural_equal(const Expr& a, const Expr& b);

}  // namespace tessera::tir
