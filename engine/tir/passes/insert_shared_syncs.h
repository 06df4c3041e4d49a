// insert_shared_syncs: the barrier pass. __syncthreads() where threads of a
// block hand data to each other through shared memory.
#pragma once

#include "engine/tir/stmt.h"

namespace tessera::tir {

/// The barrier statement: Evaluate(Call "tir.tvm_storage_sync") (TVM's name);
/// CUDA C prints it as __syncthreads().
Stmt make_storage_sync();
bool is_storage_sync(const Stmt& s);

/// Inserts barriers into a kernel body (thread-bound loops still present).
/// Within a sequence, a barrier goes before a statement that reads a shared
/// buffer written since the last barrier (read after write) or writes one
/// read since then (write after read). A serial loop (or a vthread loop, run
/// serially in each thread) whose body both writes and reads a shared buffer
/// gets a barrier at the end of its body, so the next iteration's writes wait
/// for this iteration's reads. Conservative:
/// it never tracks which elements a thread touches.
Stmt insert_shared_syncs(const Stmt& kernel_body);

/// insert_shared_syncs on every outermost thread-bound loop of the function
/// (each kernel's body); code outside thread-bound loops is left alone.
PrimFunc insert_shared_syncs(const PrimFunc& f);

}  // namespace tessera::tir
