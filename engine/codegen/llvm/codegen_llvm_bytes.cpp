// Words of four bytes (pack_int8x4, nn.im2col_int8x4: the integer GEMM's
// operands) as byte interleaving: the compute writes each word as
// b0 | b1 << 8 | b2 << 16 | b3 << 24 of zero-extended bytes, which LLVM
// emits literally (per 8 words on AVX2: 4 vpmovzxbd, 3 vpslld, 3 vpor); as a
// shuffle of the four byte vectors, little-endian, the backend interleaves
// them with unpack instructions, a few per 32 words. Where byte t of every
// word is the same expression of the element 4i + t (a quantized row packed
// into words: DynamicQuantizeLinear before an integer GEMM), the four
// stride-4 reads are one contiguous read of 4n elements, and the n words are
// that 4n-byte vector as it lies in memory: no gather, no shuffle.
#include <optional>

#include "engine/codegen/llvm/codegen_llvm.h"
#include "engine/tir/functor.h"
#include "engine/tir/op.h"
#include "engine/tir/passes/simplify.h"

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

/// The index of `load` when it is a stride-4 Ramp of `lanes` lanes.
const tir::Ramp* stride4_ramp(const tir::BufferLoad* load, int lanes) {
    const tir::Ramp* r = load->indices.size() == 1 ? load->indices[0].as<tir::Ramp>() : nullptr;
    return r && r->lanes == lanes && tir::is_const_int(r->stride, 4) ? r : nullptr;
}

/// Each load whose index is a stride-4 Ramp of n lanes, read from `shift`
/// elements further on.
class ShiftLoads : public tir::IRMutator {
public:
    ShiftLoads(int lanes, int64_t shift) : m_lanes(lanes), m_shift(shift) {}

protected:
    using tir::IRMutator::visit;
    Expr visit(const tir::BufferLoad* op) override {
        const tir::Ramp* r = stride4_ramp(op, m_lanes);
        if (!r) return tir::IRMutator::visit(op);
        const Expr base = r->base + tir::make_const(r->base.dtype(), double(m_shift));
        return tir::BufferLoad::make(op->buffer, {tir::Ramp::make(base, r->stride, m_lanes)});
    }

private:
    int m_lanes;
    int64_t m_shift;
};

/// `e`, an expression of n lanes whose loads read stride-4 Ramps or one
/// element, over 4n lanes: each stride-4 read becomes the contiguous read
/// of the 4n elements from its first one; undefined where some node cannot
/// be widened (another Ramp, a vector variable, a load of another form).
class WidenLanes : public tir::IRMutator {
public:
    explicit WidenLanes(int lanes) : m_lanes(lanes) {}
    bool failed = false;
    bool widened_a_load = false;  // some stride-4 read became contiguous

protected:
    using tir::IRMutator::visit;
    tir::DataType wide(tir::DataType t) {
        if (t.lanes == 1) return t;
        if (t.lanes != m_lanes) failed = true;
        return t.with_lanes(4 * m_lanes);
    }
    Expr visit(const tir::BufferLoad* op) override {
        if (const tir::Ramp* r = stride4_ramp(op, m_lanes)) {
            widened_a_load = true;
            return tir::BufferLoad::make(
                op->buffer,
                {tir::Ramp::make(r->base, tir::make_const(r->base.dtype(), 1.0), 4 * m_lanes)});
        }
        if (op->dtype.lanes != 1) failed = true;
        return op;
    }
    Expr visit(const tir::Ramp* op) override {
        failed = true;
        return op;
    }
    Expr visit(const tir::Broadcast* op) override {
        if (op->lanes != m_lanes) failed = true;
        return tir::Broadcast::make(op->value, 4 * m_lanes);
    }
    Expr visit(const tir::Variable* op) override {
        if (op->dtype.lanes != 1) failed = true;
        return op;
    }
    Expr visit(const tir::Let* op) override {
        failed = true;
        return op;
    }
    Expr visit(const tir::Cast* op) override {
        return tir::Cast::make(wide(op->dtype), mutate(op->value));
    }
    Expr visit(const Call* op) override {
        std::vector<Expr> args;
        for (const Expr& a : op->args) args.push_back(mutate(a));
        return Call::make(wide(op->dtype), op->op, std::move(args));
    }

private:
    int m_lanes;
};

/// The bytes of n words as one 4n-lane u8 expression, when byte t is byte 0's
/// expression with its stride-4 reads moved t elements on; undefined otherwise.
/// Whether WidenLanes can widen `e` consistently: every vector node has n
/// lanes, and every Ramp is the index of a stride-4 load of n lanes.
bool widenable(const Expr& e, int n) {
    bool ok = true;
    int ramps = 0, strided_loads = 0;
    tir::post_order_visit(tir::Evaluate::make(e), [&](const tir::Object* o) {
        if (o->node_type == tir::NodeType::Evaluate) return;
        const auto* x = static_cast<const tir::ExprNode*>(o);
        ok = ok && (x->dtype.lanes == 1 || x->dtype.lanes == n) &&
             o->node_type != tir::NodeType::Let;
        ramps += o->node_type == tir::NodeType::Ramp;
        if (o->node_type == tir::NodeType::BufferLoad)
            strided_loads += stride4_ramp(static_cast<const tir::BufferLoad*>(o), n) != nullptr;
    });
    return ok && ramps == strided_loads;
}

Expr contiguous_bytes(const std::vector<Expr>& bytes, int n) {
    if (!widenable(bytes[0], n)) return Expr();
    // Byte 0 must read some stride-4 Ramp, else it does not vary by t.
    WidenLanes widen(n);
    Expr w = widen.mutate(bytes[0]);
    if (widen.failed || !widen.widened_a_load || w.dtype().lanes != 4 * n) return Expr();
    for (int64_t t = 1; t < 4; ++t) {
        ShiftLoads shift(n, t);
        if (!tir::structural_equal(tir::simplify(shift.mutate(bytes[0])),
                                   tir::simplify(bytes[size_t(t)])))
            return Expr();
    }
    return w;
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
    if (Expr wide = contiguous_bytes(bytes, n); wide.defined())
        return m_b.CreateBitCast(emit(wide), llvm_type(t));
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
