// Words of four bytes (pack_int8x4, nn.im2col_int8x4: the integer GEMM's
// operands) as byte interleaving: the compute writes each word as
// b0 | b1 << 8 | b2 << 16 | b3 << 24 of zero-extended bytes, which LLVM
// emits literally (per 8 words on AVX2: 4 vpmovzxbd, 3 vpslld, 3 vpor); as a
// shuffle of the four byte vectors, little-endian, the backend interleaves
// them with unpack instructions, a few per 32 words.
#include <optional>

#include "engine/codegen/llvm/codegen_llvm.h"
#include "engine/tir/op.h"

namespace tessera::codegen {

using tir::Call;
using tir::Expr;

namespace {

void or_terms(const Expr& e, std::vector<Expr>& out) {
    const Call* c = e.as<Call>();
    if (c && c->op == "bitwise_or" && c->args.size() == 2) {
        or_terms(c->args[0], out);
        or_terms(c->args[1], out);
        return;
    }
    out.push_back(e);
}

/// The byte of a term `cast<u32>(x) * 256^t` (or `cast<u32>(x)` for t = 0):
/// x, an 8-bit unsigned value of `lanes` lanes, and t; nullopt otherwise.
std::optional<std::pair<Expr, int>> shifted_byte(const Expr& term, int lanes) {
    Expr value = term;
    int64_t factor = 1;
    if (const tir::Mul* m = term.as<tir::Mul>()) {
        const int64_t* f = tir::as_const_int(m->b);
        if (!f) return std::nullopt;
        value = m->a;
        factor = *f;
    }
    const tir::Cast* c = value.as<tir::Cast>();
    if (!c) return std::nullopt;
    const tir::DataType x = c->value.dtype();
    if (x.code != tir::DataType::UInt || x.bits != 8 || x.lanes != lanes) return std::nullopt;
    for (int t = 0; t < 4; ++t)
        if (factor == int64_t(1) << (8 * t)) return std::make_pair(c->value, t);
    return std::nullopt;
}

}  // namespace

llvm::Value* CodeGenLLVM::emit_packed_bytes(const Call* op) {
    const tir::DataType t = op->dtype;
    if (t.code != tir::DataType::UInt || t.bits != 32 || t.lanes < 4 || op->args.size() != 2 ||
        !m_mod.getDataLayout().isLittleEndian())
        return nullptr;
    std::vector<Expr> terms;
    or_terms(op->args[0], terms);
    or_terms(op->args[1], terms);
    std::vector<Expr> bytes(4);
    for (const Expr& term : terms) {
        if (tir::is_const_int(term, 0)) continue;
        auto b = shifted_byte(term, t.lanes);
        if (!b || bytes[size_t(b->second)].defined()) return nullptr;
        bytes[size_t(b->second)] = b->first;
    }
    for (const Expr& b : bytes)
        if (!b.defined()) return nullptr;
    const int n = t.lanes;
    std::vector<llvm::Value*> v;
    for (const Expr& b : bytes) v.push_back(emit(b));
    std::vector<int> pair(size_t(2 * n));
    for (int i = 0; i < 2 * n; ++i) pair[size_t(i)] = i;
    llvm::Value* lo = m_b.CreateShuffleVector(v[0], v[1], pair);  // b0 lanes, then b1 lanes
    llvm::Value* hi = m_b.CreateShuffleVector(v[2], v[3], pair);
    std::vector<int> words(size_t(4 * n));
    for (int i = 0; i < n; ++i)
        for (int k = 0; k < 4; ++k) words[size_t(4 * i + k)] = k * n + i;  // byte k of word i
    llvm::Value* interleaved = m_b.CreateShuffleVector(lo, hi, words);
    return m_b.CreateBitCast(interleaved, llvm_type(t));
}

}  // namespace tessera::codegen
