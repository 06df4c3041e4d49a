// LLVM code generation for loop IR: JIT-compiled kernels, LLVM IR text,
// assembly and ELF object files. This header is plain C++; LLVM headers stay
// in the .cpp files.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/runtime/graph_executor.h"
#include "engine/tir/stmt.h"

namespace tessera::codegen {

struct LlvmOptions {
    int opt_level = 2;  // 0..3, the LLVM pass pipeline level
    /// Threads of a Parallel loop (OpenMP team size); 0 = the OpenMP default
    /// (OMP_NUM_THREADS or every core).
    int threads = 0;
    /// Polynomial exp/tanh/erf (rel. error ~1e-6) instead of libm calls in
    /// vector code; scalar code outside vectorized loops always uses libm.
    bool fast_math = true;
    /// Target CPU and features ("" = the host, like -mcpu=native).
    std::string cpu;
    std::string features;  // e.g. "+avx2,+fma"; only used with `cpu`
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

/// Both from one compilation (what the studio's code panes show after an edit).
struct IrAndAssembly {
    std::string llvm_ir, assembly;
};
IrAndAssembly emit_llvm_ir_and_assembly(const std::vector<tir::PrimFunc>& funcs,
                                        const LlvmOptions& options = {});

/// The bytes of a relocatable ELF object file holding the functions (each an
/// exported `void name(void** args)`). Parallel loops call GOMP_parallel,
/// omp_get_thread_num and omp_get_num_threads: link with libgomp (-fopenmp).
std::string emit_object(const std::vector<tir::PrimFunc>& funcs, const LlvmOptions& options = {});

/// "x86_64, znver3, +avx2,+fma,..." — what the JIT targets on this machine.
std::string host_target_description();

/// Native vector width in fp32 lanes of the host (16 with AVX-512, 8 with
/// AVX/AVX2, 4 otherwise): what default schedules vectorize by.
int host_vector_lanes();

/// "19.1.7": the LLVM version the code generator was built against.
/// (Added by helper "studio" for the About dialog; defined in llvm_version.cpp.)
std::string llvm_version();

}  // namespace tessera::codegen
