// Lowering of the dot4_u8s8 intrinsic (tir/op.h): four byte products summed
// into int32 lanes, the integer GEMM's inner step. With AVX-512 VNNI (or
// AVX-VNNI) one vpdpbusd per vector does 4 multiply-adds per lane, 64 per
// 512-bit instruction; elsewhere the bytes are unpacked with shifts.
#include <llvm/IR/IntrinsicsX86.h>

#include "engine/codegen/llvm/codegen_llvm.h"
#include "engine/core/error.h"
#include "engine/tir/op.h"

namespace tessera::codegen {

using tir::Call;
using tir::Expr;

const Call* CodeGenLLVM::dot4_operand(const Expr& e) {
    const Call* c = e.as<Call>();
    return c && c->op == tir::kDot4U8S8 && c->args.size() == 2 ? c : nullptr;
}

namespace {

bool has_feature(const std::string& features, const char* f) {
    const std::string plus = std::string("+") + f;
    for (size_t at = features.find(plus); at != std::string::npos;
         at = features.find(plus, at + 1)) {
        const size_t end = at + plus.size();
        if (end == features.size() || features[end] == ',') return true;
    }
    return false;
}

}  // namespace

llvm::Value* CodeGenLLVM::emit_dot4(llvm::Value* acc, llvm::Value* a, llvm::Value* b, int lanes) {
    llvm::Type* i32 = m_b.getInt32Ty();
    const bool vnni512 = has_feature(m_features, "avx512vnni");
    const bool vnni_vl =
        (vnni512 && has_feature(m_features, "avx512vl")) || has_feature(m_features, "avxvnni");
    int width = 0;
    llvm::Intrinsic::ID id = llvm::Intrinsic::not_intrinsic;
    if (vnni512 && lanes % 16 == 0) {
        width = 16;
        id = llvm::Intrinsic::x86_avx512_vpdpbusd_512;
    } else if (vnni_vl && lanes % 8 == 0) {
        width = 8;
        id = llvm::Intrinsic::x86_avx512_vpdpbusd_256;
    } else if (vnni_vl && lanes % 4 == 0) {
        width = 4;
        id = llvm::Intrinsic::x86_avx512_vpdpbusd_128;
    }
    if (vnni_vl && lanes < 4) {
        // 1 or 2 lanes (a GEMM's last columns): one 128-bit vpdpbusd on the
        // lanes widened with zeros instead of 4 shift/multiply steps per lane.
        auto widen = [&](llvm::Value* v) -> llvm::Value* {
            llvm::Type* v4 = llvm::FixedVectorType::get(i32, 4);
            if (lanes == 1)
                return m_b.CreateInsertElement(llvm::Constant::getNullValue(v4), v, uint64_t(0));
            return m_b.CreateShuffleVector(v, llvm::Constant::getNullValue(v->getType()),
                                           {0, 1, 2, 3});
        };
        llvm::Value* acc4 =
            acc ? widen(acc) : llvm::Constant::getNullValue(llvm::FixedVectorType::get(i32, 4));
        llvm::Function* fn128 =
            llvm::Intrinsic::getDeclaration(&m_mod, llvm::Intrinsic::x86_avx512_vpdpbusd_128);
        llvm::Value* r = m_b.CreateCall(fn128, {acc4, widen(a), widen(b)});
        if (lanes == 1) return m_b.CreateExtractElement(r, uint64_t(0));
        return m_b.CreateShuffleVector(r, {0, 1});
    }
    if (width > 0) {
        // Whole vectors of the instruction's width, inserted into the result.
        if (!acc) acc = llvm::Constant::getNullValue(a->getType());
        llvm::Function* fn = llvm::Intrinsic::getDeclaration(&m_mod, id);
        llvm::Value* out = width == lanes ? nullptr : llvm::PoisonValue::get(a->getType());
        for (int at = 0; at < lanes; at += width) {
            auto part = [&](llvm::Value* v) -> llvm::Value* {
                if (width == lanes) return v;
                std::vector<int> idx;
                for (int i = 0; i < width; ++i) idx.push_back(at + i);
                return m_b.CreateShuffleVector(v, idx);
            };
            llvm::Value* r = m_b.CreateCall(fn, {part(acc), part(a), part(b)});
            if (width == lanes) return r;
            out = m_b.CreateInsertVector(a->getType(), out, r, m_b.getInt64(uint64_t(at)));
        }
        return out;
    }
    // sum_t u8(a >> 8t) * s8(b >> 8t): each byte moved to the top, then
    // shifted down logically (unsigned a) or arithmetically (signed b).
    auto splat = [&](uint64_t v) -> llvm::Value* {
        llvm::Constant* c = llvm::ConstantInt::get(i32, v);
        return lanes == 1 ? c
                          : llvm::ConstantVector::getSplat(
                                llvm::ElementCount::getFixed(unsigned(lanes)), c);
    };
    llvm::Value* sum = acc;
    for (int byte = 0; byte < 4; ++byte) {
        llvm::Value* up = splat(uint64_t(24 - 8 * byte));
        llvm::Value* ua = m_b.CreateLShr(m_b.CreateShl(a, up), splat(24));
        llvm::Value* sb = m_b.CreateAShr(m_b.CreateShl(b, up), splat(24));
        llvm::Value* p = m_b.CreateMul(ua, sb);
        sum = sum ? m_b.CreateAdd(sum, p) : p;
    }
    return sum;
}

}  // namespace tessera::codegen
