// Vector loads whose lanes are not one contiguous run but close to it, read
// without a gather (a gather of bytes has no instruction: LLVM loads each
// lane on its own):
//  - a Ramp of stride 2-4 (a stride-2 conv's windows along a row): the span
//    the lanes cover as two overlapping loads (its first and last power of
//    two elements), then one shuffle picking every s-th element;
//  - offset + clamp(Ramp, lo, hi), the index a padded read clamps so that
//    both sides of its select stay in bounds (an NCHW conv's padding stage
//    vectorized along a row): where no lane is clamped (all but the row's
//    first and last vectors) the Ramp's plain load; where only the first
//    lane is clamped low, that element and the plain read of the others;
//    else the gather.
#include "engine/codegen/llvm/codegen_llvm.h"
#include "engine/tir/clamped_ramp.h"
#include "engine/tir/op.h"

namespace tessera::codegen {

using tir::Expr;
using tir::Ramp;

int CodeGenLLVM::masked_width(tir::DataType t, int lanes) const {
    if (lanes < 3 || (lanes & (lanes - 1)) == 0 || t.is_bool()) return 0;
    int p = 1;
    while (p < lanes) p *= 2;
    const int bits = p * t.bits;
    auto has = [&](const char* f) { return m_features.find(f) != std::string::npos; };
    if (bits > 512 || !has("+avx512f") || (bits < 512 && !has("+avx512vl"))) return 0;
    if (t.bits < 32 && !has("+avx512bw")) return 0;
    return p;
}

namespace {

llvm::Constant* lane_mask(llvm::LLVMContext& ctx, int lanes, int width) {
    std::vector<llvm::Constant*> bits;
    for (int i = 0; i < width; ++i)
        bits.push_back(llvm::ConstantInt::get(llvm::Type::getInt1Ty(ctx), i < lanes ? 1 : 0));
    return llvm::ConstantVector::get(bits);
}

std::vector<int> first_lanes(int n) {
    std::vector<int> pick(size_t(n), 0);
    for (int i = 0; i < n; ++i) pick[size_t(i)] = i;
    return pick;
}

}  // namespace

llvm::Value* CodeGenLLVM::load_contiguous(tir::DataType t, llvm::Value* addr, int lanes) {
    llvm::Align align(t.bytes());
    const int chunk = 512 / t.bits;
    const int rest = lanes % chunk, p = masked_width(t, rest);
    if (p == 0) return m_b.CreateAlignedLoad(memory_type(t.with_lanes(lanes)), addr, align);
    // Whole 512-bit vectors, then the rest as one masked vector, each put
    // into its lanes of the result.
    llvm::Type* elem = memory_type(t);
    auto at_lane = [&](int at) {
        return m_b.CreateInBoundsGEP(elem, addr, m_b.getInt64(uint64_t(at)));
    };
    llvm::Value* v = llvm::PoisonValue::get(memory_type(t.with_lanes(lanes)));
    auto place = [&](llvm::Value* part, int width, int at, int n) {
        std::vector<int> widen(size_t(lanes), -1);
        for (int i = 0; i < n; ++i) widen[size_t(i)] = i;
        llvm::Value* wide = width == lanes ? part : m_b.CreateShuffleVector(part, widen);
        std::vector<int> pick = first_lanes(lanes);
        for (int i = 0; i < n; ++i) pick[size_t(at + i)] = lanes + i;
        v = m_b.CreateShuffleVector(v, wide, pick);
    };
    for (int at = 0; at + chunk <= lanes; at += chunk)
        place(m_b.CreateAlignedLoad(memory_type(t.with_lanes(chunk)), at_lane(at), align), chunk,
              at, chunk);
    place(m_b.CreateMaskedLoad(memory_type(t.with_lanes(p)), at_lane(lanes - rest), align,
                               lane_mask(m_ctx, rest, p)),
          p, lanes - rest, rest);
    return v;
}

void CodeGenLLVM::store_contiguous(tir::DataType t, llvm::Value* v, llvm::Value* addr, int lanes) {
    llvm::Align align(t.bytes());
    const int chunk = 512 / t.bits;
    const int rest = lanes % chunk, p = masked_width(t, rest);
    if (p == 0) {
        m_b.CreateAlignedStore(v, addr, align);
        return;
    }
    llvm::Type* elem = memory_type(t);
    for (int at = 0; at + chunk <= lanes; at += chunk) {
        std::vector<int> pick(static_cast<size_t>(chunk), 0);
        for (int i = 0; i < chunk; ++i) pick[size_t(i)] = at + i;
        m_b.CreateAlignedStore(m_b.CreateShuffleVector(v, pick),
                               m_b.CreateInBoundsGEP(elem, addr, m_b.getInt64(uint64_t(at))),
                               align);
    }
    std::vector<int> pick(size_t(p), -1);  // poison: masked off
    for (int i = 0; i < rest; ++i) pick[size_t(i)] = lanes - rest + i;
    m_b.CreateMaskedStore(m_b.CreateShuffleVector(v, pick),
                          m_b.CreateInBoundsGEP(elem, addr, m_b.getInt64(uint64_t(lanes - rest))),
                          align, lane_mask(m_ctx, rest, p));
}

llvm::Value* CodeGenLLVM::load_ramp(const BufferInfo& buf, llvm::Value* first, int64_t stride,
                                    int lanes) {
    llvm::Type* elem = memory_type(buf.dtype.element_of());
    llvm::Align align(buf.dtype.bytes());
    llvm::Value* addr = m_b.CreateInBoundsGEP(elem, buf.ptr, first);
    if (stride == 1) return load_contiguous(buf.dtype, addr, lanes);
    const int span = int(stride) * (lanes - 1) + 1;
    // Two loads of a power of two each, the span's first and last elements
    // (overlapping), and one two-source shuffle: LLVM split a span such as
    // 15 floats (8 lanes at stride 2) into pieces put together lane by lane.
    int p = 1;
    while (p * 2 <= span) p *= 2;
    llvm::Type* piece = memory_type(buf.dtype.with_lanes(p));
    llvm::Value* head = m_b.CreateAlignedLoad(piece, addr, align);
    llvm::Value* tail = head;
    if (p < span)
        tail = m_b.CreateAlignedLoad(
            piece, m_b.CreateInBoundsGEP(elem, addr, m_b.getInt64(uint64_t(span - p))), align);
    std::vector<int> pick;
    for (int i = 0; i < lanes; ++i) {
        const int e = i * int(stride);
        pick.push_back(e < p ? e : p + (e - (span - p)));
    }
    return m_b.CreateShuffleVector(head, tail, pick);
}

llvm::Value* CodeGenLLVM::emit_patterned_load(const BufferInfo& buf, const Expr& index) {
    if (buf.dtype.is_bool() || buf.dtype.lanes != 1) return nullptr;
    if (const Ramp* r = index.as<Ramp>()) {
        const int64_t* s = tir::as_const_int(r->stride);
        if (!s || *s < 2 || !tir::read_without_gather(*r)) return nullptr;
        return load_ramp(buf, emit(r->base), *s, r->lanes);
    }
    tir::ClampedRamp m;
    if (!index.dtype().is_vector() || !tir::match_clamped_ramp(index, m)) return nullptr;
    const int64_t* s = tir::as_const_int(m.ramp->stride);
    if (!s || !tir::read_without_gather(*m.ramp)) return nullptr;
    // Unclamped when lo <= first lane and last lane <= hi.
    llvm::Value* first = emit(m.ramp->base);
    llvm::Value* last = m_b.CreateAdd(
        first, llvm::ConstantInt::get(first->getType(), uint64_t(*s * (m.ramp->lanes - 1))));
    llvm::Value* lo = m.lo.defined() ? emit(m.lo) : nullptr;
    llvm::Value* hi = m.hi.defined() ? emit(m.hi) : nullptr;
    llvm::Value* offset = m.offset.defined() ? emit(m.offset) : nullptr;
    llvm::Value* inside = m_b.getTrue();
    if (lo) inside = m_b.CreateAnd(inside, m_b.CreateICmpSGE(first, lo));
    if (hi) inside = m_b.CreateAnd(inside, m_b.CreateICmpSLE(last, hi));
    llvm::Value* start = offset ? m_b.CreateAdd(offset, first) : first;
    const int n = m.ramp->lanes;
    auto plain = [&] { return load_ramp(buf, start, *s, n); };
    auto gather = [&] {
        int lanes = 0;
        llvm::Value* addr = element_address(buf, index, &lanes);
        return m_b.CreateMaskedGather(memory_type(buf.dtype.with_lanes(n)), addr,
                                      llvm::Align(buf.dtype.bytes()));
    };
    if (!lo || n < 3) return emit_branches(inside, "load.unclamped", plain, gather);
    // Only the first lane clamped to lo (a padded window's first vector: a
    // pool's 2 * ow - 1 at ow = 0): x[lo], then the plain read of the other
    // lanes, one shuffle instead of a gather of every lane (a gather of
    // bytes is one insert per lane: ResNet-18's byte max pool 0.097 -> 0.035
    // ms).
    llvm::Value* step = llvm::ConstantInt::get(first->getType(), uint64_t(*s));
    llvm::Value* head_only = m_b.CreateAnd(m_b.CreateICmpSLT(first, lo),
                                           m_b.CreateICmpSGE(m_b.CreateAdd(first, step), lo));
    if (hi) head_only = m_b.CreateAnd(head_only, m_b.CreateICmpSLE(last, hi));
    auto head_clamped = [&] {
        llvm::Value* at_lo = offset ? m_b.CreateAdd(offset, lo) : lo;
        llvm::Type* elem = memory_type(buf.dtype.element_of());
        llvm::Value* x0 = m_b.CreateAlignedLoad(elem, m_b.CreateInBoundsGEP(elem, buf.ptr, at_lo),
                                                llvm::Align(buf.dtype.bytes()));
        llvm::Value* rest = load_ramp(buf, m_b.CreateAdd(start, step), *s, n - 1);
        std::vector<int> pick{0};
        for (int i = 0; i + 1 < n; ++i) pick.push_back(n - 1 + i);
        return m_b.CreateShuffleVector(m_b.CreateVectorSplat(unsigned(n - 1), x0), rest, pick);
    };
    return emit_branches(inside, "load.unclamped", plain, [&] {
        return emit_branches(head_only, "load.head_clamped", head_clamped, gather);
    });
}

}  // namespace tessera::codegen
