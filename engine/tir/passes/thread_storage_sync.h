// thread_storage_sync: barriers between writes and later reads of shared memory.
#pragma once

#include "engine/tir/stmt.h"

namespace tessera::tir {

/// Inside thread-bound loops, inserts make_storage_sync("shared") into
/// sequences between a statement that writes a "shared" scope buffer and a
/// later one that reads it (and between a read and a later overwrite), once
/// per hazard since the last barrier; a loop whose end conflicts with its
/// start gets a barrier at the end of its body.
PrimFunc thread_storage_sync(const PrimFunc& f);

/// The barrier statement: Evaluate(Call int32 "tir.tvm_storage_sync" with no
/// arguments); the scope is always "shared". Code generators match it with
/// is_storage_sync.
Stmt make_storage_sync(const std::string& scope = "shared");

/// True if s is a barrier made by make_storage_sync.
bool is_storage_sync(const Stmt& s);

}  // namespace tessera::tir
