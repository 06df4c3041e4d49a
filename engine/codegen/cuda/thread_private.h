// thread_private: drops the thread dimension of per-thread register arrays
// that live across several sibling threadIdx loops.
#pragma once

#include "engine/tir/stmt.h"

namespace tessera::codegen {

/// A "local" buffer allocated (Allocate) outside the threadIdx loops that use
/// it, whose every access has, as first index, the variable of a loop bound
/// to the same threadIdx axis with an extent equal to the first dimension,
/// is private to each thread: in CUDA each thread holds only its own slice.
/// Returns the statement with such buffers shrunk by that dimension. The
/// interpreter runs the unshrunk form (thread loops one after another).
tir::Stmt compact_thread_private(const tir::Stmt& s);

}  // namespace tessera::codegen
