// LLVM code generation for loop IR: JIT-compiled kernels, LLVM IR text and
// assembly. This header is plain C++; LLVM headers stay in the .cpp files.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/runtime/graph_executor.h"
#include "engine/tir/stmt.h"

namespace tessera::codegen {

struct LlvmOptions {
    int opt_level = 2;  // 0..3, the LLVM pass pipeline level
};

/// Kernels compiled in memory by ORC JIT. Each PrimFunc becomes an exported
/// function `void name(void** args)`.
class JitModule {
public:
    virtual ~JitModule() = default;
    /// The entry of a compiled PrimFunc; throws InternalError if absent.
    virtual runtime::KernelFn lookup(const std::string& name) const = 0;
};

/// Lowers (blocks, buffer flattening) and compiles the functions.
std::shared_ptr<JitModule> jit_compile(const std::vector<tir::PrimFunc>& funcs,
                                       const LlvmOptions& options = {});

/// The optimized LLVM IR text of the functions.
std::string emit_llvm_ir(const std::vector<tir::PrimFunc>& funcs, const LlvmOptions& options = {});

/// Host assembly text of the functions.
std::string emit_assembly(const std::vector<tir::PrimFunc>& funcs, const LlvmOptions& options = {});

/// "x86_64, znver3, +avx2,+fma,..." — what the JIT targets on this machine.
std::string host_target_description();

}  // namespace tessera::codegen
