// Parallel loops on OpenMP (libgomp's GOMP_parallel ABI, also provided by
// libomp): the loop is outlined into a worker `void w(ptr ctx)` that every
// team thread runs on its static chunk of iterations. Everything in scope
// (bound variables and buffer pointers) travels in a context struct; the
// worker calls an always-inlined body whose buffer parameters are noalias,
// so the parallel region optimizes like the serial one.
#include <algorithm>

#include "engine/codegen/llvm/codegen_llvm.h"
#include "engine/core/error.h"
#include "engine/tir/functor.h"
#include "engine/tir/passes/inject_prefetch.h"

namespace tessera::codegen {

using namespace tessera::tir;

namespace {

bool contains_prefetch(const Stmt& s) {
    bool found = false;
    post_order_visit(s, [&](const Object* n) {
        if (n->node_type == NodeType::Call && static_cast<const Call*>(n)->op == kPrefetchIntrinsic)
            found = true;
    });
    return found;
}

}  // namespace

void CodeGenLLVM::emit_parallel_for(const For* op) {
    const DataType vt = op->loop_var.dtype();
    llvm::Type* ivty = llvm_type(vt);
    llvm::Value* mn = emit_cast(op->min.dtype(), vt, emit(op->min));
    llvm::Value* ext = emit_cast(op->extent.dtype(), vt, emit(op->extent));

    // What the body may use: every bound variable and every buffer.
    // In the order they were bound (m_bind_order), not by address.
    auto bound_before = [this](const void* a, const void* b) {
        return m_bind_order.at(a) < m_bind_order.at(b);
    };
    std::vector<const Variable*> vars;
    for (const auto& entry : m_vars) vars.push_back(entry.first);
    std::sort(vars.begin(), vars.end(), bound_before);
    std::vector<const BufferNode*> bufs;
    for (const auto& entry : m_buffers) bufs.push_back(entry.first);
    std::sort(bufs.begin(), bufs.end(), bound_before);
    std::vector<llvm::Value*> values;
    for (const Variable* v : vars) values.push_back(m_vars.at(v).back());
    for (const BufferNode* b : bufs) values.push_back(m_buffers.at(b).ptr);
    values.push_back(mn);
    values.push_back(ext);
    std::vector<llvm::Type*> field_types;
    for (llvm::Value* v : values) field_types.push_back(v->getType());
    llvm::StructType* ctx_ty = llvm::StructType::get(m_ctx, field_types);

    const std::string base = m_func->getName().str() + ".par" + std::to_string(m_outlined++);
    llvm::Type* ptr = m_b.getPtrTy();
    llvm::Type* void_ty = m_b.getVoidTy();

    // The body: (buffers..., vars..., begin, end), buffers noalias.
    std::vector<llvm::Type*> body_params;
    for (const BufferNode* b : bufs) body_params.push_back(m_buffers.at(b).ptr->getType());
    for (size_t i = 0; i < vars.size(); ++i) body_params.push_back(values[i]->getType());
    body_params.push_back(ivty);
    body_params.push_back(ivty);
    llvm::Function* body = llvm::Function::Create(
        llvm::FunctionType::get(void_ty, body_params, false), llvm::Function::InternalLinkage,
        base + ".body", m_mod);
    // Inlined into the worker, the noalias parameters become alias scopes,
    // which calls that may touch other memory (llvm.prefetch) do not get: a
    // prefetch would then keep the accumulators of its loop in memory. A body
    // with prefetches stays a function, its parameters noalias.
    body->addFnAttr(contains_prefetch(op->body) ? llvm::Attribute::NoInline
                                                : llvm::Attribute::AlwaysInline);
    set_target_attributes(body);
    for (size_t i = 0; i < bufs.size(); ++i) {
        body->addParamAttr(unsigned(i), llvm::Attribute::NoAlias);
        body->getArg(unsigned(i))->setName(bufs[i]->name);
    }

    {
        // Emit the body function with its own scope.
        llvm::IRBuilderBase::InsertPointGuard guard(m_b);
        auto saved_vars = std::move(m_vars);
        auto saved_bufs = m_buffers;
        llvm::Function* saved_func = m_func;
        m_vars.clear();
        for (size_t i = 0; i < bufs.size(); ++i)
            m_buffers[bufs[i]].ptr = body->getArg(unsigned(i));
        for (size_t i = 0; i < vars.size(); ++i)
            m_vars[vars[i]].push_back(body->getArg(unsigned(bufs.size() + i)));
        m_func = body;
        ++m_parallel_depth;
        m_b.SetInsertPoint(llvm::BasicBlock::Create(m_ctx, "entry", body));
        size_t n = body->arg_size();
        emit_serial_loop(op, body->getArg(unsigned(n - 2)), body->getArg(unsigned(n - 1)));
        m_b.CreateRetVoid();
        --m_parallel_depth;
        m_func = saved_func;
        m_vars = std::move(saved_vars);
        m_buffers = std::move(saved_bufs);
    }

    // The worker: unpack the context, take this thread's chunk, call the body.
    llvm::Function* worker = llvm::Function::Create(
        llvm::FunctionType::get(void_ty, {ptr}, false), llvm::Function::InternalLinkage, base,
        m_mod);
    set_target_attributes(worker);
    {
        llvm::IRBuilderBase::InsertPointGuard guard(m_b);
        m_b.SetInsertPoint(llvm::BasicBlock::Create(m_ctx, "entry", worker));
        llvm::Value* ctx = worker->getArg(0);
        std::vector<llvm::Value*> unpacked;
        for (size_t i = 0; i < values.size(); ++i)
            unpacked.push_back(m_b.CreateLoad(field_types[i], m_b.CreateStructGEP(ctx_ty, ctx, unsigned(i))));
        llvm::FunctionType* query_ty = llvm::FunctionType::get(m_b.getInt32Ty(), false);
        llvm::Value* tid = m_b.CreateCall(m_mod.getOrInsertFunction("omp_get_thread_num", query_ty));
        llvm::Value* nth = m_b.CreateCall(m_mod.getOrInsertFunction("omp_get_num_threads", query_ty));
        tid = m_b.CreateSExt(tid, ivty);
        nth = m_b.CreateSExt(nth, ivty);
        llvm::Value* lo = unpacked[unpacked.size() - 2];
        llvm::Value* count = unpacked.back();
        llvm::Value* one = llvm::ConstantInt::get(ivty, 1);
        // chunk = ceil(count / nth); [lo + tid*chunk, min(lo + (tid+1)*chunk, lo + count))
        llvm::Value* chunk = m_b.CreateSDiv(m_b.CreateSub(m_b.CreateAdd(count, nth), one), nth);
        llvm::Value* begin = m_b.CreateAdd(lo, m_b.CreateMul(tid, chunk));
        llvm::Value* hi = m_b.CreateAdd(lo, count);
        llvm::Value* end = m_b.CreateAdd(begin, chunk);
        end = m_b.CreateSelect(m_b.CreateICmpSLT(end, hi), end, hi);
        std::vector<llvm::Value*> args;
        for (size_t i = 0; i < bufs.size(); ++i) args.push_back(unpacked[vars.size() + i]);
        for (size_t i = 0; i < vars.size(); ++i) args.push_back(unpacked[i]);
        args.push_back(begin);
        args.push_back(end);
        m_b.CreateCall(body, args);
        m_b.CreateRetVoid();
    }

    // The caller: fill the context on the stack and fork the team.
    llvm::BasicBlock& entry = m_func->getEntryBlock();
    llvm::IRBuilder<> eb(&entry, entry.begin());
    llvm::AllocaInst* ctx = eb.CreateAlloca(ctx_ty, nullptr, base + ".ctx");
    for (size_t i = 0; i < values.size(); ++i)
        m_b.CreateStore(values[i], m_b.CreateStructGEP(ctx_ty, ctx, unsigned(i)));
    llvm::FunctionCallee fork = m_mod.getOrInsertFunction(
        "GOMP_parallel",
        llvm::FunctionType::get(void_ty, {ptr, ptr, m_b.getInt32Ty(), m_b.getInt32Ty()}, false));
    m_b.CreateCall(fork, {worker, ctx, m_b.getInt32(uint32_t(std::max(m_threads, 0))),
                          m_b.getInt32(0)});
}

}  // namespace tessera::codegen
