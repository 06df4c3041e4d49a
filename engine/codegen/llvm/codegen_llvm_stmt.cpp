// Loop-IR statements and functions -> LLVM IR (loops, branches, memory).
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/MDBuilder.h>

#include <optional>

#include "engine/codegen/llvm/codegen_llvm.h"
#include "engine/core/error.h"
#include "engine/tir/op.h"
#include "engine/tir/passes/inject_prefetch.h"

namespace tessera::codegen {

using namespace tessera::tir;

namespace {
// Allocations up to this size with a constant shape live on the stack.
constexpr int64_t kMaxStackBytes = 32 * 1024;
constexpr uint64_t kAllocAlign = 64;
// Unrolled loops with at most this many iterations are unrolled by codegen.
constexpr int64_t kMaxUnroll = 64;

// Constant element count of a buffer, or -1 when a dimension is symbolic.
int64_t const_elements(const Buffer& b) {
    int64_t n = 1;
    for (const Expr& d : b->shape) {
        const int64_t* c = as_const_int(d);
        if (!c) return -1;
        n *= *c;
    }
    return n;
}
}  // namespace

CodeGenLLVM::CodeGenLLVM(llvm::LLVMContext& ctx, llvm::Module& mod, std::string cpu,
                         std::string features)
    : m_ctx(ctx), m_mod(mod), m_b(ctx), m_cpu(std::move(cpu)), m_features(std::move(features)) {}

void CodeGenLLVM::bind_var(const Var& v, llvm::Value* value) {
    note_bound(v.get());
    m_vars[v.get()].push_back(value);
}

void CodeGenLLVM::unbind_var(const Var& v) {
    auto it = m_vars.find(v.get());
    TS_CHECK(it != m_vars.end() && !it->second.empty()) << "unbalanced variable scope";
    it->second.pop_back();
    if (it->second.empty()) m_vars.erase(it);
}

void CodeGenLLVM::set_target_attributes(llvm::Function* fn) const {
    if (!m_cpu.empty()) fn->addFnAttr("target-cpu", m_cpu);
    if (!m_features.empty()) fn->addFnAttr("target-features", m_features);
    // Use whole 512-bit registers where the CPU has them (LLVM otherwise
    // splits wide vectors into 256-bit halves on many AVX-512 parts).
    if (m_features.find("+avx512f") != std::string::npos) {
        fn->addFnAttr("prefer-vector-width", "512");
        fn->addFnAttr("min-legal-vector-width", "512");
    }
    fn->setDoesNotThrow();
}

const CodeGenLLVM::BufferInfo& CodeGenLLVM::buffer_info(const Buffer& b) const {
    auto it = m_buffers.find(b.get());
    TS_CHECK(it != m_buffers.end())
        << "LLVM codegen: buffer '" << b->name << "' is neither a parameter nor allocated";
    return it->second;
}

void CodeGenLLVM::add_function(const PrimFunc& f) {
    TS_CHECK(!m_mod.getFunction(f->name))
        << "LLVM codegen: two functions named '" << f->name << "'";
    llvm::Type* ptr = llvm::PointerType::get(m_ctx, 0);
    llvm::Type* void_ty = llvm::Type::getVoidTy(m_ctx);
    const size_t n = f->params.size();

    // The body takes one noalias pointer per buffer; inlined into the entry
    // point, its noalias parameters become alias scopes for the optimizer.
    std::vector<llvm::Type*> ptys(n, ptr);
    llvm::Function* body =
        llvm::Function::Create(llvm::FunctionType::get(void_ty, ptys, false),
                               llvm::Function::InternalLinkage, f->name + ".body", m_mod);
    body->addFnAttr(llvm::Attribute::AlwaysInline);
    set_target_attributes(body);
    m_buffers.clear();
    m_vars.clear();
    for (size_t i = 0; i < n; ++i) {
        const Buffer& buf = f->params[i];
        llvm::Argument* arg = body->getArg(unsigned(i));
        arg->setName(buf->name);
        body->addParamAttr(unsigned(i), llvm::Attribute::NoAlias);
        body->addParamAttr(unsigned(i), llvm::Attribute::NoCapture);
        int64_t elems = const_elements(buf);
        int elem_bytes = buf->dtype.bytes() * buf->dtype.lanes;
        if (elems > 0) body->addDereferenceableParamAttr(unsigned(i), uint64_t(elems * elem_bytes));
        body->addParamAttr(
            unsigned(i), llvm::Attribute::getWithAlignment(m_ctx, llvm::Align(buf->dtype.bytes())));
        note_bound(buf.get());
        m_buffers[buf.get()] = {arg, buf->dtype};
    }
    m_func = body;
    m_b.SetInsertPoint(llvm::BasicBlock::Create(m_ctx, "entry", body));
    emit(f->body);
    m_b.CreateRetVoid();

    // The exported entry point: void name(void** args).
    llvm::Function* entry = llvm::Function::Create(llvm::FunctionType::get(void_ty, {ptr}, false),
                                                   llvm::Function::ExternalLinkage, f->name, m_mod);
    set_target_attributes(entry);
    entry->getArg(0)->setName("args");
    entry->addParamAttr(0, llvm::Attribute::NoCapture);
    entry->addParamAttr(0, llvm::Attribute::ReadOnly);
    m_b.SetInsertPoint(llvm::BasicBlock::Create(m_ctx, "entry", entry));
    std::vector<llvm::Value*> call_args;
    for (size_t i = 0; i < n; ++i) {
        llvm::Value* slot = m_b.CreateConstInBoundsGEP1_64(ptr, entry->getArg(0), i);
        call_args.push_back(m_b.CreateAlignedLoad(ptr, slot, llvm::Align(8), f->params[i]->name));
    }
    m_b.CreateCall(body, call_args);
    m_b.CreateRetVoid();
    m_func = nullptr;
}

void CodeGenLLVM::emit(const Stmt& s) {
    TS_CHECK(s.defined()) << "LLVM codegen: undefined statement";
    switch (s.node_type()) {
        case NodeType::BufferStore:
            return emit_store(s.as<BufferStore>());
        case NodeType::For:
            return emit_for(s.as<For>());
        case NodeType::SeqStmt:
            for (const Stmt& x : s.as<SeqStmt>()->seq) emit(x);
            return;
        case NodeType::IfThenElse:
            return emit_if(s.as<IfThenElse>());
        case NodeType::LetStmt: {
            const LetStmt* op = s.as<LetStmt>();
            bind_var(op->var, emit(op->value));
            emit(op->body);
            unbind_var(op->var);
            return;
        }
        case NodeType::Allocate:
            return emit_allocate(s.as<Allocate>());
        case NodeType::Evaluate:
            emit(s.as<Evaluate>()->value);
            return;
        default:
            TS_CHECK(s.node_type() != NodeType::Block && s.node_type() != NodeType::BlockRealize)
                << "LLVM codegen: blocks must be lowered first (lower_blocks)";
            TS_FAIL() << "LLVM codegen: expression node in a statement";
    }
}

llvm::Value* CodeGenLLVM::element_address(const BufferInfo& buf, const Expr& index, int* lanes) {
    llvm::Type* elem = memory_type(buf.dtype.element_of());
    if (const Ramp* r = index.as<Ramp>(); r && is_const_int(r->stride, 1)) {
        *lanes = r->lanes;
        return m_b.CreateInBoundsGEP(elem, buf.ptr, emit(r->base));
    }
    llvm::Value* idx = emit(index);
    *lanes = index.dtype().is_vector() ? 0 : 1;
    return m_b.CreateInBoundsGEP(elem, buf.ptr, idx);
}

llvm::Value* CodeGenLLVM::emit_load(const BufferLoad* op) {
    const BufferInfo& buf = buffer_info(op->buffer);
    TS_CHECK(op->indices.size() == 1)
        << "LLVM codegen: buffer '" << op->buffer->name << "' is not flattened";
    int lanes = 0;
    const DataType t = op->dtype;
    llvm::Value* v = emit_patterned_load(buf, op->indices[0]);
    if (v) return v;
    llvm::Value* addr = element_address(buf, op->indices[0], &lanes);
    llvm::Align align(buf.dtype.bytes());
    if (lanes == 0)
        v = m_b.CreateMaskedGather(memory_type(t), addr, align);
    else
        v = load_contiguous(buf.dtype, addr, lanes);
    if (t.is_bool()) v = m_b.CreateICmpNE(v, llvm::Constant::getNullValue(v->getType()));
    return v;
}

llvm::Value* CodeGenLLVM::emit_prefetch(const Call* op) {
    llvm::Value* zero = llvm::ConstantInt::get(llvm::Type::getInt32Ty(m_ctx), 0);
    const BufferLoad* load = op->args.size() == 1 ? op->args[0].as<BufferLoad>() : nullptr;
    TS_CHECK(load && load->indices.size() == 1)
        << "LLVM codegen: tir.prefetch takes one flattened buffer load";
    const BufferInfo& buf = buffer_info(load->buffer);
    // The address of the first lane; no inbounds: it may lie past the buffer
    // (a prefetch never faults).
    const Expr& index = load->indices[0];
    Expr first = index;
    if (const Ramp* r = index.as<Ramp>()) first = r->base;
    if (first.dtype().is_vector()) return zero;  // a gather: nothing to prefetch
    llvm::Value* addr = m_b.CreateGEP(memory_type(buf.dtype.element_of()), buf.ptr, emit(first));
    llvm::Function* fn =
        llvm::Intrinsic::getDeclaration(&m_mod, llvm::Intrinsic::prefetch, {addr->getType()});
    // read, keep in all cache levels (prefetcht0), data cache.
    m_b.CreateCall(fn, {addr, m_b.getInt32(0), m_b.getInt32(3), m_b.getInt32(1)});
    return zero;
}

void CodeGenLLVM::emit_store(const BufferStore* op) {
    const BufferInfo& buf = buffer_info(op->buffer);
    TS_CHECK(op->indices.size() == 1)
        << "LLVM codegen: buffer '" << op->buffer->name << "' is not flattened";
    int lanes = 0;
    llvm::Value* addr = element_address(buf, op->indices[0], &lanes);
    const int value_lanes = lanes == 0 ? op->indices[0].dtype().lanes : lanes;
    llvm::Value* v = splat_if_needed(emit(op->value), value_lanes);
    if (buf.dtype.is_bool()) v = m_b.CreateZExt(v, memory_type(buf.dtype.with_lanes(value_lanes)));
    llvm::Align align(buf.dtype.bytes());
    if (lanes == 0)
        m_b.CreateMaskedScatter(v, addr, align);
    else
        store_contiguous(buf.dtype, v, addr, lanes);
}

void CodeGenLLVM::emit_for(const For* op) {
    const int64_t* cmin = as_const_int(op->min);
    const int64_t* cext = as_const_int(op->extent);
    if (op->kind == ForKind::Parallel && m_parallel_depth == 0) return emit_parallel_for(op);
    // Explicit unroll: constant trip counts up to kMaxUnroll (or any constant
    // count when the loop asks for it with pragma_unroll_explicit).
    bool explicit_pragma = op->annotations.count("pragma_unroll_explicit") &&
                           op->annotations.at("pragma_unroll_explicit") != "0";
    if (op->kind == ForKind::Unrolled && cmin && cext &&
        (*cext <= kMaxUnroll || (explicit_pragma && *cext <= 4 * kMaxUnroll)))
        return emit_unrolled(op, *cmin, *cext);
    if (op->kind == ForKind::Vectorized && emit_vectorized(op)) return;
    if (op->kind == ForKind::Serial && emit_tree_reduction(op)) return;
    const DataType vt = op->loop_var.dtype();
    llvm::Value* mn = emit_cast(op->min.dtype(), vt, emit(op->min));
    llvm::Value* ext = emit_cast(op->extent.dtype(), vt, emit(op->extent));
    llvm::Value* end = m_b.CreateAdd(mn, ext, "", false, true);
    if (op->kind == ForKind::Vectorized) ++m_vectorized_depth;
    emit_serial_loop(op, mn, end);
    if (op->kind == ForKind::Vectorized) --m_vectorized_depth;
}

void CodeGenLLVM::emit_unrolled(const For* op, int64_t min, int64_t extent) {
    llvm::Type* ty = llvm_type(op->loop_var.dtype());
    for (int64_t i = 0; i < extent; ++i) {
        bind_var(op->loop_var, llvm::ConstantInt::get(ty, uint64_t(min + i), true));
        emit(op->body);
        unbind_var(op->loop_var);
    }
}

void CodeGenLLVM::emit_serial_loop(const For* op, llvm::Value* mn, llvm::Value* end) {
    const DataType vt = op->loop_var.dtype();
    llvm::BasicBlock* pre = m_b.GetInsertBlock();
    const std::string& name = op->loop_var.name();
    auto* header = llvm::BasicBlock::Create(m_ctx, name + ".header", m_func);
    auto* body = llvm::BasicBlock::Create(m_ctx, name + ".body", m_func);
    auto* exit = llvm::BasicBlock::Create(m_ctx, name + ".exit", m_func);
    m_b.CreateBr(header);

    m_b.SetInsertPoint(header);
    llvm::PHINode* iv = m_b.CreatePHI(llvm_type(vt), 2, name);
    iv->addIncoming(mn, pre);
    m_b.CreateCondBr(m_b.CreateICmpSLT(iv, end), body, exit);

    m_b.SetInsertPoint(body);
    bind_var(op->loop_var, iv);
    emit(op->body);
    unbind_var(op->loop_var);
    llvm::Value* next =
        m_b.CreateAdd(iv, llvm::ConstantInt::get(iv->getType(), 1), "", false, true);
    iv->addIncoming(next, m_b.GetInsertBlock());
    llvm::BranchInst* back = m_b.CreateBr(header);

    // Loop hints: these loops promise independent iterations.
    std::vector<llvm::Metadata*> hints;
    auto flag = [&](const char* key) {
        hints.push_back(llvm::MDNode::get(m_ctx, {llvm::MDString::get(m_ctx, key)}));
    };
    if (op->kind == ForKind::Unrolled) flag("llvm.loop.unroll.full");
    if (op->kind == ForKind::Vectorized) {
        llvm::Metadata* on = llvm::ConstantAsMetadata::get(m_b.getTrue());
        hints.push_back(llvm::MDNode::get(
            m_ctx, {llvm::MDString::get(m_ctx, "llvm.loop.vectorize.enable"), on}));
    }
    if (!hints.empty()) {
        hints.insert(hints.begin(), nullptr);
        llvm::MDNode* loop_id = llvm::MDNode::getDistinct(m_ctx, hints);
        loop_id->replaceOperandWith(0, loop_id);
        back->setMetadata(llvm::LLVMContext::MD_loop, loop_id);
    }
    m_b.SetInsertPoint(exit);
}

void CodeGenLLVM::emit_if(const IfThenElse* op) {
    TS_CHECK(op->condition.dtype() == DataType::boolean())
        << "LLVM codegen: IfThenElse condition must be a scalar bool, not "
        << op->condition.dtype().str();
    llvm::Value* cond = emit(op->condition);
    auto* then_bb = llvm::BasicBlock::Create(m_ctx, "if.then", m_func);
    auto* end_bb = llvm::BasicBlock::Create(m_ctx, "if.end", m_func);
    llvm::BasicBlock* else_bb = op->else_case.defined()
                                    ? llvm::BasicBlock::Create(m_ctx, "if.else", m_func, end_bb)
                                    : end_bb;
    m_b.CreateCondBr(cond, then_bb, else_bb);
    m_b.SetInsertPoint(then_bb);
    emit(op->then_case);
    m_b.CreateBr(end_bb);
    if (op->else_case.defined()) {
        m_b.SetInsertPoint(else_bb);
        emit(op->else_case);
        m_b.CreateBr(end_bb);
    }
    m_b.SetInsertPoint(end_bb);
}

void CodeGenLLVM::emit_allocate(const Allocate* op) {
    const Buffer& buf = op->buffer;
    const int64_t elem_bytes = buf->dtype.bytes() * buf->dtype.lanes;
    const int64_t elems = const_elements(buf);
    llvm::Type* i8 = m_b.getInt8Ty();
    llvm::Type* i64 = m_b.getInt64Ty();
    llvm::Value* ptr = nullptr;
    bool on_heap = false;
    if (elems >= 0 && elems * elem_bytes <= kMaxStackBytes) {
        // In the entry block, so an allocation inside a loop does not grow the stack.
        llvm::BasicBlock& entry = m_func->getEntryBlock();
        llvm::IRBuilder<> eb(&entry, entry.begin());
        llvm::AllocaInst* a = eb.CreateAlloca(
            llvm::ArrayType::get(i8, uint64_t(std::max<int64_t>(elems * elem_bytes, 1))), nullptr,
            buf->name);
        a->setAlignment(llvm::Align(kAllocAlign));
        ptr = a;
    } else {
        llvm::Value* n = llvm::ConstantInt::get(i64, elem_bytes);
        for (const Expr& d : buf->shape)
            n = m_b.CreateMul(n, emit_cast(d.dtype(), DataType::int64(), emit(d)));
        // aligned_alloc needs a multiple of the alignment.
        n = m_b.CreateAnd(m_b.CreateAdd(n, llvm::ConstantInt::get(i64, kAllocAlign - 1)),
                          llvm::ConstantInt::get(i64, ~(kAllocAlign - 1)));
        llvm::Type* ptr_ty = m_b.getPtrTy();
        llvm::FunctionCallee alloc = m_mod.getOrInsertFunction(
            "aligned_alloc", llvm::FunctionType::get(ptr_ty, {i64, i64}, false));
        ptr = m_b.CreateCall(alloc, {llvm::ConstantInt::get(i64, kAllocAlign), n}, buf->name);
        on_heap = true;
    }
    // The same buffer allocated again inside its own allocation (a loop
    // partitioned into a parallel and a serial copy whose allocations were
    // hoisted to different scopes): the inner one shadows the outer.
    auto outer = m_buffers.find(buf.get());
    std::optional<BufferInfo> shadowed;
    if (outer != m_buffers.end()) shadowed = outer->second;
    note_bound(buf.get());
    m_buffers[buf.get()] = {ptr, buf->dtype};
    emit(op->body);
    if (shadowed)
        m_buffers[buf.get()] = *shadowed;
    else
        m_buffers.erase(buf.get());
    if (on_heap) {
        llvm::FunctionCallee free_fn = m_mod.getOrInsertFunction(
            "free", llvm::FunctionType::get(m_b.getVoidTy(), {m_b.getPtrTy()}, false));
        m_b.CreateCall(free_fn, {ptr});
    }
}

}  // namespace tessera::codegen
