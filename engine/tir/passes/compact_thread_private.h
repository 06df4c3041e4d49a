// compact_thread_private: drops the thread dimension of per-thread register arrays
// that live across several sibling threadIdx loops.
#pragma once

#include "engine/tir/stmt.h"

namespace tessera::tir {

/// A "local" buffer allocated (Allocate) outside the threadIdx loops that use
/// it, whose every access has, as first index, the variable of a loop bound
/// to the same threadIdx axis with an extent equal to the first dimension,
/// is private to each thread: in CUDA each thread holds only its own slice.
/// Returns the statement with such buffers shrunk by that dimension. The
/// interpreter runs the unshrunk form (thread loops one after another).
Stmt compact_thread_private(const Stmt& s);

/// compact_thread_private on a function's body.
PrimFunc compact_thread_private(const PrimFunc& f);

}  // namespace tessera::codegen
