// Loop-IR expressions -> LLVM IR values.
#include <llvm/IR/Intrinsics.h>

#include "engine/tir/passes/inject_prefetch.h"
#include "engine/codegen/llvm/codegen_llvm.h"
#include "engine/core/error.h"
#include "engine/tir/functor.h"

namespace tessera::codegen {

using namespace tessera::tir;

llvm::Type* CodeGenLLVM::llvm_type(DataType t) const {
    llvm::Type* elem = nullptr;
    switch (t.code) {
    case DataType::Float:
        elem = t.bits == 64   ? llvm::Type::getDoubleTy(m_ctx)
               : t.bits == 16 ? llvm::Type::getHalfTy(m_ctx)
                              : llvm::Type::getFloatTy(m_ctx);
        TS_CHECK(t.bits == 16 || t.bits == 32 || t.bits == 64) << "float" << int(t.bits);
        break;
    case DataType::Int:
    case DataType::UInt: elem = llvm::Type::getIntNTy(m_ctx, t.bits); break;
    case DataType::Bool: elem = llvm::Type::getInt1Ty(m_ctx); break;
    case DataType::Handle: elem = llvm::PointerType::get(m_ctx, 0); break;
    }
    return t.lanes > 1 ? llvm::FixedVectorType::get(elem, t.lanes) : elem;
}

llvm::Type* CodeGenLLVM::memory_type(DataType t) const {
    if (t.is_bool()) {
        llvm::Type* i8 = llvm::Type::getInt8Ty(m_ctx);
        return t.lanes > 1 ? llvm::FixedVectorType::get(i8, t.lanes) : i8;
    }
    return llvm_type(t);
}

llvm::Value* CodeGenLLVM::const_of(DataType t, double v) {
    llvm::Type* elem = llvm_type(t.element_of());
    llvm::Constant* c = t.is_float() ? llvm::ConstantFP::get(elem, v)
                                     : llvm::ConstantInt::get(elem, int64_t(v), !t.is_uint());
    return t.lanes > 1 ? llvm::ConstantVector::getSplat(llvm::ElementCount::getFixed(t.lanes), c)
                       : c;
}

llvm::Value* CodeGenLLVM::splat_if_needed(llvm::Value* v, int lanes) {
    if (lanes <= 1 || v->getType()->isVectorTy()) return v;
    return m_b.CreateVectorSplat(lanes, v);
}

// Floor division / modulo: round toward negative infinity (Python semantics).
llvm::Value* CodeGenLLVM::floor_div_mod(llvm::Value* a, llvm::Value* b, DataType t, bool want_mod) {
    if (t.is_float()) {
        llvm::Value* q = m_b.CreateUnaryIntrinsic(llvm::Intrinsic::floor, m_b.CreateFDiv(a, b));
        return want_mod ? m_b.CreateFSub(a, m_b.CreateFMul(q, b)) : q;
    }
    if (t.is_uint()) return want_mod ? m_b.CreateURem(a, b) : m_b.CreateUDiv(a, b);
    llvm::Value* q = m_b.CreateSDiv(a, b);
    llvm::Value* r = m_b.CreateSRem(a, b);
    llvm::Value* zero = const_of(t, 0);
    // The truncated result is off by one when the remainder is non-zero and
    // its sign differs from the divisor's.
    llvm::Value* adjust = m_b.CreateAnd(m_b.CreateICmpNE(r, zero),
                                        m_b.CreateXor(m_b.CreateICmpSLT(r, zero),
                                                      m_b.CreateICmpSLT(b, zero)));
    if (want_mod) return m_b.CreateSelect(adjust, m_b.CreateAdd(r, b), r);
    return m_b.CreateSub(q, m_b.CreateZExt(adjust, q->getType()));
}

llvm::Value* CodeGenLLVM::ramp_div_mod(const Ramp* a, int64_t c, DataType t, bool want_mod) {
    // base + k * s = c * (base // c) + (base % c + k * s): the lanes' part is
    // small and non-negative, divided as 32-bit lanes (a vector of 64-bit
    // divisions by a constant is one scalar multiply per lane on x86).
    llvm::Value* base = emit(a->base);
    llvm::Value* cc = const_of(t.element_of(), double(c));
    llvm::Value* q0 = floor_div_mod(base, cc, t.element_of(), false);
    llvm::Value* r0 = floor_div_mod(base, cc, t.element_of(), true);
    const int64_t s = *as_const_int(a->stride);
    llvm::Type* i32 = m_b.getInt32Ty();
    std::vector<llvm::Constant*> steps;
    for (int k = 0; k < a->lanes; ++k)
        steps.push_back(llvm::ConstantInt::get(i32, uint64_t(k * s)));
    llvm::Value* small = m_b.CreateAdd(m_b.CreateVectorSplat(a->lanes, m_b.CreateTrunc(r0, i32)),
                                       llvm::ConstantVector::get(steps), "", true, true);
    llvm::Value* c32 = m_b.CreateVectorSplat(a->lanes, m_b.getInt32(uint32_t(c)));
    llvm::Value* q = m_b.CreateUDiv(small, c32);
    llvm::Type* vt = llvm_type(t);
    if (want_mod) return m_b.CreateZExt(m_b.CreateSub(small, m_b.CreateMul(q, c32)), vt);
    return m_b.CreateAdd(m_b.CreateVectorSplat(a->lanes, q0), m_b.CreateZExt(q, vt));
}

namespace {

// A constant (or a splat of one) that is not NaN.
bool non_nan_constant(llvm::Value* v) {
    auto* c = llvm::dyn_cast<llvm::Constant>(v);
    if (c && c->getType()->isVectorTy()) c = c->getSplatValue();
    auto* fp = llvm::dyn_cast_or_null<llvm::ConstantFP>(c);
    return fp && !fp->isNaN();
}

}  // namespace

llvm::Value* CodeGenLLVM::min_max_num(llvm::Value* a, llvm::Value* b, bool is_max) {
    // minnum / maxnum against a constant that is not NaN: x < c ? x : c gives
    // c for a NaN x, as minnum does, and is one vminps / vmaxps; LLVM adds a
    // NaN check to minnum where the constant has undefined lanes (a vector of
    // 7 lanes widened to 8).
    if (non_nan_constant(a)) std::swap(a, b);
    if (!non_nan_constant(b)) return is_max ? m_b.CreateMaxNum(a, b) : m_b.CreateMinNum(a, b);
    return m_b.CreateSelect(is_max ? m_b.CreateFCmpOGT(a, b) : m_b.CreateFCmpOLT(a, b), a, b);
}

llvm::Value* CodeGenLLVM::emit_binary(const ExprNode* op, llvm::Value* a, llvm::Value* b,
                                      DataType t) {
    const bool f = t.is_float();
    const bool s = t.is_int();  // signed integer
    switch (op->node_type) {
    case NodeType::Add:
        return f ? m_b.CreateFAdd(a, b) : m_b.CreateAdd(a, b, "", false, s);
    case NodeType::Sub:
        return f ? m_b.CreateFSub(a, b) : m_b.CreateSub(a, b, "", false, s);
    case NodeType::Mul:
        return f ? m_b.CreateFMul(a, b) : m_b.CreateMul(a, b, "", false, s);
    case NodeType::Div:
        return f ? m_b.CreateFDiv(a, b) : s ? m_b.CreateSDiv(a, b) : m_b.CreateUDiv(a, b);
    case NodeType::Mod:
        return f ? m_b.CreateFRem(a, b) : s ? m_b.CreateSRem(a, b) : m_b.CreateURem(a, b);
    case NodeType::FloorDiv: return floor_div_mod(a, b, t, false);
    case NodeType::FloorMod: return floor_div_mod(a, b, t, true);
    case NodeType::Min:
        if (f) return min_max_num(a, b, false);
        return m_b.CreateSelect(s ? m_b.CreateICmpSLT(a, b) : m_b.CreateICmpULT(a, b), a, b);
    case NodeType::Max:
        if (f) return min_max_num(a, b, true);
        return m_b.CreateSelect(s ? m_b.CreateICmpSGT(a, b) : m_b.CreateICmpUGT(a, b), a, b);
    case NodeType::EQ: return f ? m_b.CreateFCmpOEQ(a, b) : m_b.CreateICmpEQ(a, b);
    case NodeType::NE: return f ? m_b.CreateFCmpUNE(a, b) : m_b.CreateICmpNE(a, b);
    case NodeType::LT:
        return f ? m_b.CreateFCmpOLT(a, b) : s ? m_b.CreateICmpSLT(a, b) : m_b.CreateICmpULT(a, b);
    case NodeType::LE:
        return f ? m_b.CreateFCmpOLE(a, b) : s ? m_b.CreateICmpSLE(a, b) : m_b.CreateICmpULE(a, b);
    case NodeType::GT:
        return f ? m_b.CreateFCmpOGT(a, b) : s ? m_b.CreateICmpSGT(a, b) : m_b.CreateICmpUGT(a, b);
    case NodeType::GE:
        return f ? m_b.CreateFCmpOGE(a, b) : s ? m_b.CreateICmpSGE(a, b) : m_b.CreateICmpUGE(a, b);
    case NodeType::And: return m_b.CreateAnd(a, b);
    case NodeType::Or: return m_b.CreateOr(a, b);
    default: TS_FAIL() << "not a binary node";
    }
}

llvm::Value* CodeGenLLVM::emit_cast(DataType from, DataType to, llvm::Value* v) {
    if (from.lanes != to.lanes) {
        v = splat_if_needed(v, to.lanes);
        from = from.with_lanes(to.lanes);
    }
    if (from == to) return v;
    llvm::Type* ty = llvm_type(to);
    if (to.is_bool()) {
        if (from.is_float()) return m_b.CreateFCmpUNE(v, const_of(from, 0));
        return m_b.CreateICmpNE(v, const_of(from, 0));
    }
    if (from.is_bool()) return to.is_float() ? m_b.CreateUIToFP(v, ty) : m_b.CreateZExt(v, ty);
    if (from.is_float() && to.is_float()) return m_b.CreateFPCast(v, ty);
    if (from.is_float()) return to.is_uint() ? m_b.CreateFPToUI(v, ty) : m_b.CreateFPToSI(v, ty);
    if (to.is_float()) return from.is_uint() ? m_b.CreateUIToFP(v, ty) : m_b.CreateSIToFP(v, ty);
    return m_b.CreateIntCast(v, ty, from.is_int());
}

// A scalar libm function applied to every lane (resolved from the process).
llvm::Value* CodeGenLLVM::emit_libm(const std::string& name, DataType t, llvm::Value* x) {
    TS_CHECK(t.is_float() && (t.bits == 32 || t.bits == 64)) << name << " on " << t.str();
    llvm::Type* et = llvm_type(t.element_of());
    std::string sym = t.bits == 32 ? name + "f" : name;
    llvm::FunctionCallee fn = m_mod.getOrInsertFunction(sym, llvm::FunctionType::get(et, {et}, false));
    if (auto* decl = llvm::dyn_cast<llvm::Function>(fn.getCallee())) {
        decl->setDoesNotThrow();
        decl->setDoesNotAccessMemory();
        decl->setWillReturn();
    }
    if (t.lanes == 1) return m_b.CreateCall(fn, {x});
    llvm::Value* out = llvm::PoisonValue::get(llvm_type(t));
    for (int i = 0; i < t.lanes; ++i) {
        llvm::Value* lane = m_b.CreateCall(fn, {m_b.CreateExtractElement(x, uint64_t(i))});
        out = m_b.CreateInsertElement(out, lane, uint64_t(i));
    }
    return out;
}

llvm::Value* CodeGenLLVM::emit_call(const Call* op) {
    const DataType t = op->dtype;
    if (op->op == tir::kPrefetchIntrinsic) return emit_prefetch(op);
    if (op->op == "bitwise_or")
        if (llvm::Value* words = emit_packed_bytes(op)) return words;
    std::vector<llvm::Value*> args;
    for (const Expr& a : op->args) args.push_back(splat_if_needed(emit(a), t.lanes));
    auto unary = [&](llvm::Intrinsic::ID id) {
        TS_CHECK(args.size() == 1) << op->op << " takes one argument";
        return m_b.CreateUnaryIntrinsic(id, args[0]);
    };
    const std::string& n = op->op;
    if (use_fast_math(t) && args.size() == 1) {
        if (n == "exp") return fast_exp(args[0]);
        if (n == "tanh") return fast_tanh(args[0]);
        if (n == "erf") return fast_erf(args[0]);
        if (n == "sigmoid")
            return m_b.CreateFDiv(const_of(t, 1.0),
                                  m_b.CreateFAdd(const_of(t, 1.0), fast_exp(m_b.CreateFNeg(args[0]))));
    }
    if (n == "reinterpret") return m_b.CreateBitCast(args.at(0), llvm_type(t));
    if (n == tir::kDot4U8S8) return emit_dot4(nullptr, args.at(0), args.at(1), t.lanes);
    if (n == "bitwise_and") return m_b.CreateAnd(args.at(0), args.at(1));
    if (n == "bitwise_or") return m_b.CreateOr(args.at(0), args.at(1));
    if (n == "bitwise_xor") return m_b.CreateXor(args.at(0), args.at(1));
    if (n == "bitwise_not") return m_b.CreateNot(args.at(0));
    if (n == "exp") return unary(llvm::Intrinsic::exp);
    if (n == "log") return unary(llvm::Intrinsic::log);
    if (n == "sqrt") return unary(llvm::Intrinsic::sqrt);
    if (n == "fabs") return unary(llvm::Intrinsic::fabs);
    if (n == "floor") return unary(llvm::Intrinsic::floor);
    if (n == "ceil") return unary(llvm::Intrinsic::ceil);
    if (n == "trunc") return unary(llvm::Intrinsic::trunc);
    // Half-way cases to even, like TVM (llvm.nearbyint) and ONNX Round.
    if (n == "round") return unary(llvm::Intrinsic::roundeven);
    if (n == "sin") return unary(llvm::Intrinsic::sin);
    if (n == "cos") return unary(llvm::Intrinsic::cos);
    if (n == "pow") {
        TS_CHECK(args.size() == 2) << "pow takes two arguments";
        return m_b.CreateBinaryIntrinsic(llvm::Intrinsic::pow, args[0], args[1]);
    }
    if (n == "fma") {
        TS_CHECK(args.size() == 3) << "fma takes three arguments";
        return m_b.CreateIntrinsic(llvm::Intrinsic::fma, {args[0]->getType()}, args);
    }
    if (n == "rsqrt") return m_b.CreateFDiv(const_of(t, 1.0), unary(llvm::Intrinsic::sqrt));
    if (n == "sigmoid") {
        TS_CHECK(args.size() == 1) << "sigmoid takes one argument";
        llvm::Value* e = m_b.CreateUnaryIntrinsic(llvm::Intrinsic::exp, m_b.CreateFNeg(args[0]));
        return m_b.CreateFDiv(const_of(t, 1.0), m_b.CreateFAdd(const_of(t, 1.0), e));
    }
    // Inverse and hyperbolic trigonometry: libm per lane (tanf, asinf, ...).
    if (n == "tanh" || n == "erf" || n == "tan" || n == "asin" || n == "acos" || n == "atan" ||
        n == "sinh" || n == "cosh" || n == "asinh" || n == "acosh" || n == "atanh") {
        TS_CHECK(args.size() == 1) << n << " takes one argument";
        return emit_libm(n, t, args[0]);
    }
    TS_FAIL() << "LLVM codegen: unknown intrinsic '" << n << "'";
}

namespace {
// True when evaluating e reads a buffer (so it may be unsafe to evaluate
// when a guarding condition is false, e.g. padding reads out of bounds).
bool reads_memory(const Expr& e) {
    struct Finder : IRVisitor {
        using IRVisitor::visit;
        bool found = false;
        void visit(const BufferLoad*) override { found = true; }
    } finder;
    finder.visit_expr(e);
    return finder.found;
}
}  // namespace

// select(c, t, f) whose branches read memory: only the chosen branch runs,
// so a padding select never loads outside its buffer.
llvm::Value* CodeGenLLVM::emit_branches(llvm::Value* condition, const std::string& name,
                                        const std::function<llvm::Value*()>& if_true,
                                        const std::function<llvm::Value*()>& if_false) {
    auto* then_bb = llvm::BasicBlock::Create(m_ctx, name + ".true", m_func);
    auto* else_bb = llvm::BasicBlock::Create(m_ctx, name + ".false", m_func);
    auto* end_bb = llvm::BasicBlock::Create(m_ctx, name + ".end", m_func);
    m_b.CreateCondBr(condition, then_bb, else_bb);
    m_b.SetInsertPoint(then_bb);
    llvm::Value* tv = if_true();
    llvm::BasicBlock* then_end = m_b.GetInsertBlock();
    m_b.CreateBr(end_bb);
    m_b.SetInsertPoint(else_bb);
    llvm::Value* fv = if_false();
    llvm::BasicBlock* else_end = m_b.GetInsertBlock();
    m_b.CreateBr(end_bb);
    m_b.SetInsertPoint(end_bb);
    llvm::PHINode* phi = m_b.CreatePHI(tv->getType(), 2);
    phi->addIncoming(tv, then_end);
    phi->addIncoming(fv, else_end);
    return phi;
}

llvm::Value* CodeGenLLVM::emit_guarded_select(const Select* op) {
    return emit_branches(
        emit(op->condition), "select",
        [&] { return splat_if_needed(emit(op->true_value), op->dtype.lanes); },
        [&] { return splat_if_needed(emit(op->false_value), op->dtype.lanes); });
}

llvm::Value* CodeGenLLVM::emit(const Expr& e) {
    TS_CHECK(e.defined()) << "LLVM codegen: undefined expression";
    const DataType t = e.dtype();
    if (const Add* op = e.as<Add>(); op && op->a.dtype().is_int()) {
        // acc + dot4_u8s8(a, b): one vpdpbusd per vector where the CPU has it.
        const Call* d = dot4_operand(op->b);
        const Expr* acc = &op->a;
        if (!d) {
            d = dot4_operand(op->a);
            acc = &op->b;
        }
        if (d)
            return emit_dot4(splat_if_needed(emit(*acc), t.lanes),
                             splat_if_needed(emit(d->args[0]), t.lanes),
                             splat_if_needed(emit(d->args[1]), t.lanes), t.lanes);
    }
    if (e.node_type() == NodeType::FloorDiv || e.node_type() == NodeType::FloorMod) {
        const bool mod = e.node_type() == NodeType::FloorMod;
        const Expr& num = mod ? e.as<FloorMod>()->a : e.as<FloorDiv>()->a;
        const Expr& den = mod ? e.as<FloorMod>()->b : e.as<FloorDiv>()->b;
        const Ramp* r = num.as<Ramp>();
        const Broadcast* bd = den.as<Broadcast>();
        const int64_t* c = as_const_int(bd ? bd->value : den);
        const int64_t* s = r ? as_const_int(r->stride) : nullptr;
        if (t.is_int() && t.bits >= 32 && t.lanes > 1 && r && c && s && *c > 0 && *s >= 0 &&
            *c + *s * r->lanes < (int64_t(1) << 30))
            return ramp_div_mod(r, *c, t, mod);
    }
    switch (e.node_type()) {
    case NodeType::IntImm:
        return llvm::ConstantInt::get(llvm_type(t), uint64_t(e.as<IntImm>()->value), !t.is_uint());
    case NodeType::FloatImm: return llvm::ConstantFP::get(llvm_type(t), e.as<FloatImm>()->value);
    case NodeType::Variable: {
        auto it = m_vars.find(e.as<Variable>());
        TS_CHECK(it != m_vars.end() && !it->second.empty())
            << "LLVM codegen: variable '" << e.as<Variable>()->name << "' used outside its scope";
        return it->second.back();
    }
#define TS_X(N)                                                                             \
    case NodeType::N: {                                                                     \
        const N* op = e.as<N>();                                                            \
        int lanes = std::max(op->a.dtype().lanes, op->b.dtype().lanes);                     \
        llvm::Value* a = splat_if_needed(emit(op->a), lanes);                               \
        llvm::Value* b = splat_if_needed(emit(op->b), lanes);                               \
        return emit_binary(op, a, b, op->a.dtype().with_lanes(lanes));                      \
    }
        TS_TIR_BINARY_NODES(TS_X)
#undef TS_X
    case NodeType::Not: return m_b.CreateNot(emit(e.as<Not>()->a));
    case NodeType::Select: {
        const Select* op = e.as<Select>();
        if (op->condition.dtype().is_scalar() &&
            (reads_memory(op->true_value) || reads_memory(op->false_value)))
            return emit_guarded_select(op);
        llvm::Value* c = emit(op->condition);
        llvm::Value* tv = splat_if_needed(emit(op->true_value), t.lanes);
        llvm::Value* fv = splat_if_needed(emit(op->false_value), t.lanes);
        return m_b.CreateSelect(c, tv, fv);
    }
    case NodeType::Cast: {
        const Cast* op = e.as<Cast>();
        return emit_cast(op->value.dtype(), t, emit(op->value));
    }
    case NodeType::Call: return emit_call(e.as<Call>());
    case NodeType::BufferLoad: return emit_load(e.as<BufferLoad>());
    case NodeType::Ramp: {
        const Ramp* op = e.as<Ramp>();
        DataType et = t.element_of();
        llvm::Value* base = m_b.CreateVectorSplat(op->lanes, emit(op->base));
        llvm::Value* stride = m_b.CreateVectorSplat(op->lanes, emit(op->stride));
        std::vector<llvm::Constant*> steps;
        for (int i = 0; i < op->lanes; ++i)
            steps.push_back(llvm::ConstantInt::get(llvm_type(et), i, true));
        llvm::Value* offs = m_b.CreateMul(stride, llvm::ConstantVector::get(steps));
        return m_b.CreateAdd(base, offs);
    }
    case NodeType::Broadcast: {
        const Broadcast* op = e.as<Broadcast>();
        return m_b.CreateVectorSplat(op->lanes, emit(op->value));
    }
    case NodeType::Let: {
        const Let* op = e.as<Let>();
        bind_var(op->var, emit(op->value));
        llvm::Value* r = emit(op->body);
        unbind_var(op->var);
        return r;
    }
    default:
        TS_CHECK(e.node_type() != NodeType::Reduce)
            << "LLVM codegen: Reduce must be lowered to a block before code generation";
        TS_FAIL() << "LLVM codegen: statement node in an expression";
    }
}

}  // namespace tessera::codegen
