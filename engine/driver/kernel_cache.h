// Compiled CPU kernels kept across builds: a model run at several input
// shapes (shape_specializations.h), or rebuilt after an edit, compiles only
// the kernels whose loop IR changed. A kernel is found by the structural hash
// of its scheduled loop IR (tir::structural_hash: parameters' types and
// shapes, body, annotations; not names) and the LLVM options it is compiled
// with, and taken only when it is also structurally equal to the kernel
// compiled then, so a kernel is reused exactly where the compiler would have
// produced the same code. Two equal kernels of one build are compiled once.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "engine/codegen/llvm/llvm_codegen.h"
#include "engine/runtime/graph_executor.h"
#include "engine/tir/stmt.h"

namespace tessera::driver {

class KernelCache {
public:
    /// A compiled kernel: its entry and the module that owns the code.
    struct Entry {
        std::shared_ptr<codegen::JitModule> module;
        runtime::KernelFn fn = nullptr;
        tir::PrimFunc func;  // what was compiled
    };

    /// The kernels of `funcs` compiled with `options`: those the cache holds
    /// are taken from it, the others compiled together in one module and
    /// added. `compiled` (may be null) gets, per function, whether it was
    /// compiled by this call. Thread-safe.
    std::vector<Entry> get_or_compile(const std::vector<tir::PrimFunc>& funcs,
                                      const codegen::LlvmOptions& options,
                                      std::vector<bool>* compiled = nullptr);

    size_t size() const;

private:
    mutable std::mutex m_mutex;
    std::map<std::string, Entry> m_entries;
};

/// Where a compiled kernel is looked for: the LLVM options and the
/// function's structural hash.
std::string kernel_cache_key(const tir::PrimFunc& f, const codegen::LlvmOptions& options);

}  // namespace tessera::driver
