// Fast float32 exp, tanh and erf as polynomial IR (like TVM's fast_exp and
// Halide's fast_exp): straight-line code that vectorizes, used in vector code
// instead of scalarized libm calls. Relative error ~1e-7 (exp), ~1e-6 (tanh,
// erf) over the whole float range.
#include <cmath>

#include <llvm/IR/Intrinsics.h>

#include "engine/codegen/llvm/codegen_llvm.h"

namespace tessera::codegen {

namespace {
// exp underflows to 0 below kExpLo (the smallest denormal is 2^-149) and
// overflows to infinity above kExpHi = ln(FLT_MAX).
constexpr double kExpLo = -103.972077083991796;
constexpr double kExpHi = 88.72283905206835;
}  // namespace

bool CodeGenLLVM::use_fast_math(tir::DataType t) const {
    return m_fast_math && t.is_float() && t.bits == 32 && (t.lanes > 1 || m_vectorized_depth > 0);
}

llvm::Value* CodeGenLLVM::fconst(llvm::Value* like, double v) {
    return llvm::ConstantFP::get(like->getType(), v);  // splats for vector types
}

llvm::Value* CodeGenLLVM::fma(llvm::Value* a, llvm::Value* b, llvm::Value* c) {
    return m_b.CreateIntrinsic(llvm::Intrinsic::fma, {a->getType()}, {a, b, c});
}

// Cephes expf: exp(x) = 2^n * exp(r), x = n ln2 + r, |r| <= ln2/2, with a
// degree-6 polynomial for exp(r) and 2^n built in the exponent bits.
llvm::Value* CodeGenLLVM::fast_exp(llvm::Value* x) {
    llvm::Type* fty = x->getType();
    llvm::Type* ity = fty->isVectorTy()
                          ? llvm::VectorType::get(m_b.getInt32Ty(),
                                                  llvm::cast<llvm::VectorType>(fty)->getElementCount())
                          : static_cast<llvm::Type*>(m_b.getInt32Ty());
    llvm::Value* xc = m_b.CreateMinNum(m_b.CreateMaxNum(x, fconst(x, kExpLo)), fconst(x, kExpHi));
    llvm::Value* n = m_b.CreateUnaryIntrinsic(
        llvm::Intrinsic::floor, fma(xc, fconst(x, 1.44269504088896341), fconst(x, 0.5)));
    // r = x - n*ln2 in two steps (Cody-Waite) for accuracy.
    llvm::Value* r = fma(n, fconst(x, -0.693359375), xc);
    r = fma(n, fconst(x, 2.12194440e-4), r);
    llvm::Value* p = fconst(x, 1.9875691500E-4);
    for (double c : {1.3981999507E-3, 8.3334519073E-3, 4.1665795894E-2, 1.6666665459E-1,
                     5.0000001201E-1})
        p = fma(p, r, fconst(x, c));
    llvm::Value* r2 = m_b.CreateFMul(r, r);
    p = fma(p, r2, m_b.CreateFAdd(r, fconst(x, 1.0)));
    // 2^n = 2^n1 * 2^n2 with n1 = n >> 1, each built as (m + 127) << 23, so
    // n in [-150, 128] (denormal results and the top binade) stays exact.
    llvm::Value* ni = m_b.CreateFPToSI(n, ity);
    llvm::Value* n1 = m_b.CreateAShr(ni, llvm::ConstantInt::get(ity, 1));
    llvm::Value* n2 = m_b.CreateSub(ni, n1);
    auto pow2 = [&](llvm::Value* m) {
        return m_b.CreateBitCast(m_b.CreateShl(m_b.CreateAdd(m, llvm::ConstantInt::get(ity, 127)),
                                               llvm::ConstantInt::get(ity, 23)),
                                 fty);
    };
    llvm::Value* result = m_b.CreateFMul(m_b.CreateFMul(p, pow2(n1)), pow2(n2));
    llvm::Value* tiny = m_b.CreateFCmpOLT(x, fconst(x, kExpLo));
    result = m_b.CreateSelect(tiny, fconst(x, 0.0), result);
    llvm::Value* huge = m_b.CreateFCmpOGT(x, fconst(x, kExpHi));
    return m_b.CreateSelect(huge, fconst(x, HUGE_VAL), result);
}

// Cephes tanhf: an odd polynomial for |x| < 0.625, else 1 - 2 / (exp(2|x|) + 1)
// with the sign restored. |x| is clamped at 9 (tanh = 1 in float there).
llvm::Value* CodeGenLLVM::fast_tanh(llvm::Value* x) {
    llvm::Value* ax = m_b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
    llvm::Value* z = m_b.CreateFMul(x, x);
    llvm::Value* p = fconst(x, -5.70498872745E-3);
    for (double c : {2.06390887954E-2, -5.37397155531E-2, 1.33314422036E-1, -3.33332819422E-1})
        p = fma(p, z, fconst(x, c));
    llvm::Value* small = fma(m_b.CreateFMul(p, z), x, x);
    llvm::Value* e = fast_exp(m_b.CreateFMul(m_b.CreateMinNum(ax, fconst(x, 9.0)), fconst(x, 2.0)));
    llvm::Value* big =
        m_b.CreateFSub(fconst(x, 1.0), m_b.CreateFDiv(fconst(x, 2.0), m_b.CreateFAdd(e, fconst(x, 1.0))));
    big = m_b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, big, x);
    return m_b.CreateSelect(m_b.CreateFCmpOLT(ax, fconst(x, 0.625)), small, big);
}

// Eigen's float erf: x * P(x^2) / Q(x^2) on [-4, 4] (erf is +-1 in float beyond).
llvm::Value* CodeGenLLVM::fast_erf(llvm::Value* x) {
    llvm::Value* xc = m_b.CreateMinNum(m_b.CreateMaxNum(x, fconst(x, -4.0)), fconst(x, 4.0));
    llvm::Value* x2 = m_b.CreateFMul(xc, xc);
    llvm::Value* p = fconst(x, -2.72614225801306e-10);
    for (double c : {2.77068142495902e-08, -2.10102402082508e-06, -5.69250639462346e-05,
                     -7.34990630326855e-04, -2.95459980854025e-03, -1.60960333262415e-02})
        p = fma(p, x2, fconst(x, c));
    p = m_b.CreateFMul(p, xc);
    llvm::Value* q = fconst(x, -1.45660718464996e-05);
    for (double c : {-2.13374055278905e-04, -1.68282697438203e-03, -7.37332916720468e-03,
                     -1.42647390514189e-02})
        q = fma(q, x2, fconst(x, c));
    return m_b.CreateFDiv(p, q);
}

}  // namespace tessera::codegen
