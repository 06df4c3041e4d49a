// Lowering of the dot4_u8s8 intrinsic (tir/op.h): four byte products summed
// into int32 lanes, the integer GEMM's inner step. With AVX-512 VNNI (or
// AVX-VNNI) one vpdpbusd per vector does 4 multiply-adds per lane, 64 per
// 512-bit instruction; else two pmaddwd on the bytes as 16-bit halves (x86),
// or the bytes unpacked with shifts.
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
    if (lanes % 4 == 0 && has_feature(m_features, "sse2")) return emit_dot4_pmaddwd(acc, a, b, lanes);
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

llvm::Value* CodeGenLLVM::emit_dot4_pmaddwd(llvm::Value* acc, llvm::Value* a, llvm::Value* b,
                                             int lanes) {
    // Without VNNI, exactly: the bytes of each word as 16-bit lanes, even
    // (bytes 0, 2) and odd (bytes 1, 3); one pmaddwd per half sums two
    // products per int32 lane (at most 2 x 255 x 128, no saturation, unlike
    // pmaddubsw's int16 sums). 9 instructions per vector instead of 24
    // shifts, multiplies and adds.
    int width = 4;
    llvm::Intrinsic::ID id = llvm::Intrinsic::x86_sse2_pmadd_wd;
    if (lanes % 16 == 0 && has_feature(m_features, "avx512bw")) {
        width = 16;
        id = llvm::Intrinsic::x86_avx512_pmaddw_d_512;
    } else if (lanes % 8 == 0 && has_feature(m_features, "avx2")) {
        width = 8;
        id = llvm::Intrinsic::x86_avx2_pmadd_wd;
    }
    llvm::Type* i16 = m_b.getInt16Ty();
    auto halves = llvm::FixedVectorType::get(i16, unsigned(2 * lanes));
    auto splat16 = [&](uint64_t v) {
        return llvm::ConstantVector::getSplat(llvm::ElementCount::getFixed(unsigned(2 * lanes)),
                                              llvm::ConstantInt::get(i16, v));
    };
    llvm::Value* a16 = m_b.CreateBitCast(a, halves);
    llvm::Value* b16 = m_b.CreateBitCast(b, halves);
    llvm::Value* a_even = m_b.CreateAnd(a16, splat16(0xff));
    llvm::Value* a_odd = m_b.CreateLShr(a16, splat16(8));
    llvm::Value* b_even = m_b.CreateAShr(m_b.CreateShl(b16, splat16(8)), splat16(8));
    llvm::Value* b_odd = m_b.CreateAShr(b16, splat16(8));
    llvm::Function* fn = llvm::Intrinsic::getDeclaration(&m_mod, id);
    auto part = [&](llvm::Value* v, int at) -> llvm::Value* {  // 2 * width 16-bit lanes
        if (width == lanes) return v;
        std::vector<int> idx;
        for (int i = 0; i < 2 * width; ++i) idx.push_back(2 * at + i);
        return m_b.CreateShuffleVector(v, idx);
    };
    llvm::Value* out = width == lanes ? nullptr : llvm::PoisonValue::get(a->getType());
    for (int at = 0; at < lanes; at += width) {
        llvm::Value* r = m_b.CreateAdd(m_b.CreateCall(fn, {part(a_even, at), part(b_even, at)}),
                                       m_b.CreateCall(fn, {part(a_odd, at), part(b_odd, at)}));
        if (width == lanes) return acc ? m_b.CreateAdd(acc, r) : r;
        out = m_b.CreateInsertVector(a->getType(), out, r, m_b.getInt64(uint64_t(at)));
    }
    return acc ? m_b.CreateAdd(acc, out) : out;
}

}  // namespace tessera::codegen
