// Structural equality and hashing of whole loop-IR trees and functions, up to
// renaming of the variables and buffers they define (alpha equivalence): a
// trace replayed on a fresh PrimFunc compares equal to the original, and two
// kernels of the same workload hash alike.
#pragma once

#include <cstdint>

#include "engine/tir/stmt.h"

namespace tessera::tir {

/// True when a and b are the same tree: same node kinds, types, constants,
/// the same Variable nodes (by identity) and the same buffers.
bool structural_equal(const Expr& a, const Expr& b);

/// True when a and b have the same node kinds, types, constants, names of
/// blocks, loop kinds and annotations, and their variables/buffers correspond
/// one to one (a variable defined by a For, Let, LetStmt or Block iteration
/// variable maps to the one at the same place in the other tree). Free
/// variables and buffers must be the same nodes.
bool structural_equal(const Stmt& a, const Stmt& b);

/// Equal parameters (by position: dtype, shape, scope), attributes and bodies.
bool structural_equal(const PrimFunc& a, const PrimFunc& b);

/// A hash consistent with structural_equal(PrimFunc): variables and buffers
/// are numbered in order of definition, names of variables are ignored.
uint64_t structural_hash(const PrimFunc& f);

}  // namespace tessera::tir
