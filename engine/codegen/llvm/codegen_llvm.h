// Private to engine/codegen/llvm: translates lowered loop IR (no blocks, flat
// buffers) into LLVM IR in one llvm::Module. Includes LLVM headers.
#pragma once

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "engine/tir/stmt.h"

namespace tessera::codegen {

/// Emits PrimFuncs into a module. Each becomes an external `void name(ptr)`
/// that loads args[i] and calls an always-inlined body function whose
/// buffer parameters are noalias.
class CodeGenLLVM {
public:
    /// `cpu`/`features` become each function's target attributes.
    CodeGenLLVM(llvm::LLVMContext& ctx, llvm::Module& mod, std::string cpu = "",
                std::string features = "");
    /// OpenMP team size of parallel loops (0 = the runtime's default).
    void set_threads(int threads) { m_threads = threads; }
    /// Polynomial exp/tanh/erf in vector code (see LlvmOptions::fast_math).
    void set_fast_math(bool on) { m_fast_math = on; }
    /// Adds `f`, which must already be lowered (lower_blocks, flatten_buffers).
    void add_function(const tir::PrimFunc& f);

private:
    struct BufferInfo {
        llvm::Value* ptr = nullptr;
        tir::DataType dtype;
    };

    // Types.
    llvm::Type* llvm_type(tir::DataType t) const;
    llvm::Type* memory_type(tir::DataType t) const;  // bool is i8 in memory

    // Expressions (codegen_llvm_expr.cpp).
    llvm::Value* emit(const tir::Expr& e);
    llvm::Value* emit_binary(const tir::ExprNode* op, llvm::Value* a, llvm::Value* b,
                             tir::DataType operand_type);
    llvm::Value* emit_cast(tir::DataType from, tir::DataType to, llvm::Value* v);
    llvm::Value* emit_call(const tir::Call* op);
    /// A bitwise_or of four zero-extended bytes shifted by 0, 8, 16 and 24
    /// bits (a packed int8x4 word), as a shuffle of the byte vectors; null
    /// when `op` is not one (codegen_llvm_bytes.cpp).
    llvm::Value* emit_packed_bytes(const tir::Call* op);
    /// acc + dot4_u8s8(a, b) on `lanes`-wide int32 values (acc may be null):
    /// vpdpbusd when the target has AVX-512 VNNI or AVX-VNNI, else pmaddwd
    /// (other x86), else shifts, multiplies and adds (codegen_llvm_dot4.cpp).
    llvm::Value* emit_dot4(llvm::Value* acc, llvm::Value* a, llvm::Value* b, int lanes);
    /// emit_dot4 without VNNI: pmaddwd on the even and odd bytes (x86, lanes % 4 == 0).
    llvm::Value* emit_dot4_pmaddwd(llvm::Value* acc, llvm::Value* a, llvm::Value* b, int lanes);
    /// The operand of an integer Add that is a dot4_u8s8 call (null if none).
    static const tir::Call* dot4_operand(const tir::Expr& e);
    llvm::Value* emit_guarded_select(const tir::Select* op);
    /// if_true() where `condition` holds, else if_false(), each in its own
    /// block (blocks NAME.true / NAME.false / NAME.end): the value of the one run.
    llvm::Value* emit_branches(llvm::Value* condition, const std::string& name,
                               const std::function<llvm::Value*()>& if_true,
                               const std::function<llvm::Value*()>& if_false);
    llvm::Value* emit_libm(const std::string& name, tir::DataType t, llvm::Value* x);
    llvm::Value* emit_load(const tir::BufferLoad* op);
    /// A vector load of a stride-2..4 Ramp (two overlapping loads of its
    /// span and a shuffle) or of offset + clamp(Ramp, lo, hi) (the Ramp's
    /// load where no lane is clamped; where only the first is, that element
    /// and the others' load; else a gather) (codegen_llvm_loads.cpp); null
    /// for other indices.
    llvm::Value* emit_patterned_load(const BufferInfo& buf, const tir::Expr& index);
    /// `lanes` elements from index `first` on, `stride` apart (1-4).
    llvm::Value* load_ramp(const BufferInfo& buf, llvm::Value* first, int64_t stride, int lanes);
    /// The lanes of a masked vector holding a contiguous run of `lanes`
    /// elements of type t (the next power of two), or 0 where a plain load
    /// or store serves: a power of two, or no AVX-512 masks for the type.
    int masked_width(tir::DataType t, int lanes) const;
    /// A contiguous load / store of `lanes` elements at `addr`: one masked
    /// vector where masked_width says so (LLVM splits an odd run such as 7
    /// bytes into 4 + 2 + 1), else plain.
    llvm::Value* load_contiguous(tir::DataType t, llvm::Value* addr, int lanes);
    void store_contiguous(tir::DataType t, llvm::Value* v, llvm::Value* addr, int lanes);
    /// llvm.prefetch of the address of a tir.prefetch call's load.
    llvm::Value* emit_prefetch(const tir::Call* op);
    llvm::Value* floor_div_mod(llvm::Value* a, llvm::Value* b, tir::DataType t, bool want_mod);
    /// minnum / maxnum of floats; a compare and select against a constant.
    llvm::Value* min_max_num(llvm::Value* a, llvm::Value* b, bool is_max);
    /// floordiv / floormod of a ramp by a positive constant, its lanes'
    /// part divided in 32 bits.
    llvm::Value* ramp_div_mod(const tir::Ramp* a, int64_t c, tir::DataType t, bool want_mod);
    llvm::Value* splat_if_needed(llvm::Value* v, int lanes);
    llvm::Value* const_of(tir::DataType t, double v);
    /// True when exp/tanh/erf of type t get the polynomial versions.
    bool use_fast_math(tir::DataType t) const;

    // Fast vector math (codegen_llvm_fastmath.cpp): float32, any lane count.
    llvm::Value* fast_exp(llvm::Value* x);
    llvm::Value* fast_tanh(llvm::Value* x);
    llvm::Value* fast_erf(llvm::Value* x);
    llvm::Value* fconst(llvm::Value* like, double v);
    llvm::Value* fma(llvm::Value* a, llvm::Value* b, llvm::Value* c);

    // Statements (codegen_llvm_stmt.cpp).
    void emit(const tir::Stmt& s);
    void emit_store(const tir::BufferStore* op);
    void emit_for(const tir::For* op);
    /// A loop from `begin` to `end` (values of the loop variable's type).
    void emit_serial_loop(const tir::For* op, llvm::Value* begin, llvm::Value* end);
    /// The body once per iteration, the loop variable bound to constants.
    void emit_unrolled(const tir::For* op, int64_t min, int64_t extent);
    /// Parallel loop: outlined into a worker run by GOMP_parallel
    /// (codegen_llvm_parallel.cpp).
    void emit_parallel_for(const tir::For* op);
    /// A Vectorized loop with a constant extent as vector instructions
    /// (codegen_llvm_vectorize.cpp); false when the body is not supported.
    bool emit_vectorized(const tir::For* op);
    /// A serial loop `for v in [0, N): acc[i] = acc[i] + / max / min x(v)`
    /// over floats, N a power of two from 4 to 64, i free of v and x
    /// vectorizable in v, as one vector of x reduced as a tree
    /// (codegen_llvm_vectorize.cpp): a softmax row's 32 partial maxima and
    /// sums were two chains of 32 dependent scalar operations. False when
    /// the loop is not such a reduction.
    bool emit_tree_reduction(const tir::For* op);
    void emit_if(const tir::IfThenElse* op);
    void emit_allocate(const tir::Allocate* op);
    /// Address of one element (*lanes = 1), of the first of a contiguous
    /// stride-1 Ramp access (*lanes = its lane count), or a vector of
    /// addresses for a gather/scatter (*lanes = 0).
    llvm::Value* element_address(const BufferInfo& buf, const tir::Expr& index, int* lanes);
    void bind_var(const tir::Var& v, llvm::Value* value);
    void unbind_var(const tir::Var& v);
    void set_target_attributes(llvm::Function* fn) const;
    const BufferInfo& buffer_info(const tir::Buffer& b) const;

    llvm::LLVMContext& m_ctx;
    llvm::Module& m_mod;
    llvm::IRBuilder<> m_b;
    llvm::Function* m_func = nullptr;  // the body function being emitted
    std::string m_cpu, m_features;
    int m_threads = 0;
    bool m_fast_math = true;
    int m_parallel_depth = 0;    // > 0 inside an outlined parallel region
    int m_vectorized_depth = 0;  // > 0 inside a Vectorized loop
    int m_outlined = 0;          // counter for unique worker names
    // Bindings of each variable, innermost last (a variable may be re-bound).
    std::map<const tir::Variable*, std::vector<llvm::Value*>> m_vars;
    std::map<const tir::BufferNode*, BufferInfo> m_buffers;
    /// When each variable and buffer was first bound: the maps above iterate
    /// in address order, which differs from run to run; a parallel loop's
    /// context lists them in this order so that the code is deterministic.
    std::map<const void*, uint64_t> m_bind_order;
    void note_bound(const void* var_or_buffer) {
        m_bind_order.emplace(var_or_buffer, m_bind_order.size());
    }
};

}  // namespace tessera::codegen
