#include "engine/tir/clamped_ramp.h"

#include "engine/tir/op.h"

namespace tessera::tir {

namespace {

const Expr* scalar_of(const Expr& e) {
    const Broadcast* b = e.as<Broadcast>();
    return b ? &b->value : nullptr;
}

// min(x, hi) / max(x, lo) with a lane-invariant bound on either side: x and the bound.
bool split_bound(const Expr& e, bool is_min, const Expr*& x, const Expr*& bound) {
    const Expr *a = nullptr, *b = nullptr;
    if (const Min* m = e.as<Min>(); m && is_min) a = &m->a, b = &m->b;
    if (const Max* m = e.as<Max>(); m && !is_min) a = &m->a, b = &m->b;
    if (!a) return false;
    if ((bound = scalar_of(*b))) return x = a, true;
    if ((bound = scalar_of(*a))) return x = b, true;
    return false;
}

bool match_clamp(const Expr& e, ClampedRamp& m) {
    const Expr *x = nullptr, *bound = nullptr;
    for (const bool outer_min : {true, false}) {
        if (!split_bound(e, outer_min, x, bound)) continue;
        (outer_min ? m.hi : m.lo) = *bound;
        const Expr *y = nullptr, *inner = nullptr;
        if (split_bound(*x, !outer_min, y, inner)) {
            (outer_min ? m.lo : m.hi) = *inner;
            x = y;
        }
        m.ramp = x->as<Ramp>();
        return m.ramp != nullptr;
    }
    return false;
}

}  // namespace

bool match_clamped_ramp(const Expr& index, ClampedRamp& m) {
    if (const Add* a = index.as<Add>()) {
        const Expr* off = scalar_of(a->b);
        const Expr* rest = &a->a;
        if (!off) off = scalar_of(a->a), rest = &a->b;
        if (!off || !match_clamped_ramp(*rest, m)) return false;
        m.offset = m.offset.defined() ? m.offset + *off : *off;
        return true;
    }
    return match_clamp(index, m);
}

bool read_without_gather(const Ramp& r) {
    const int64_t* s = as_const_int(r.stride);
    return s && *s >= 1 && *s <= 4 && (*s == 1 || *s * (r.lanes - 1) + 1 <= kMaxStridedSpan);
}

}  // namespace tessera::tir
