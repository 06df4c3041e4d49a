// remove_no_op: removal of statements that do nothing.
#pragma once

#include "engine/tir/stmt.h"

namespace tessera::tir {

/// Removes stores of a buffer element to itself, loops of extent <= 0 or whose
/// body does nothing, IfThenElse whose condition is false (without else) or
/// whose branches do nothing, Evaluate of constants and empty Allocate/LetStmt.
/// An empty function body becomes Evaluate(0).
PrimFunc remove_no_op(const PrimFunc& f);

/// The same on a statement (a no-op becomes Evaluate(0)).
Stmt remove_no_op(const Stmt& s);

/// True for Evaluate of a constant (the canonical no-op).
bool is_no_op(const Stmt& s);

}  // namespace tessera::tir
