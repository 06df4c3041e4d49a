// Arithmetic simplification of loop IR (constant folding and identities), a
// tir pass over arith::Analyzer; structural equality of expressions is in
// tir/structural_equal.h (included).
#pragma once

#include "engine/tir/stmt.h"
#include "engine/tir/structural_equal.h"

namespace tessera::tir {

/// Folds constants and puts integer arithmetic in canonical linear form (see
/// arith::Analyzer::simplify): x+0, x*1, x*0, (x+2)+3 -> x+5, x-x -> 0,
/// floordiv/floormod rules, constant comparisons and selects. Integer results
/// wrap to the type's width like the code would. No variable is bound; use an
/// arith::Analyzer to simplify with variable bounds.
Expr simplify(const Expr& e);

/// Simplifies every expression with the bounds of enclosing loops and block
/// iteration variables, removes For loops of extent 1 (substituting the loop
/// minimum) and IfThenElse with a condition that folds to a constant.
Stmt simplify(const Stmt& s);

/// The function with a simplified body.
PrimFunc simplify(const PrimFunc& f);

}  // namespace tessera::tir
