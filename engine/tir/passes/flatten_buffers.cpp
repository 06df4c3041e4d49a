// flatten_buffers: row-major linearization of buffer indices.
#include "engine/tir/passes/flatten_buffers.h"

#include <algorithm>

#include "engine/core/error.h"
#include "engine/tir/functor.h"
#include "engine/tir/op.h"

namespace tessera::tir {
namespace {

Expr to_int64(const Expr& e) {
    DataType t = e.dtype();
    if (t.is_int() && t.bits == 64) return e;
    if (const int64_t* c = as_const_int(e); c && t.is_scalar())
        return IntImm::make(DataType::int64(), *c);
    return Cast::make(DataType::int64(t.lanes), e);
}

// Small constant folding so that flattened indices of constant shapes stay
// readable (x * 1, x + 0, c1 * c2).
Expr mul(const Expr& a, const Expr& b) {
    if (is_const_int(a, 1)) return b;
    if (is_const_int(b, 1)) return a;
    const int64_t* ca = as_const_int(a);
    const int64_t* cb = as_const_int(b);
    if (ca && cb && a.dtype().is_scalar() && b.dtype().is_scalar())
        return IntImm::make(DataType::int64(), *ca * *cb);
    return Mul::make(a, b);
}

Expr add(const Expr& a, const Expr& b) {
    if (!a.defined()) return b;
    if (is_const_int(a, 0) && a.dtype().is_scalar()) return b;
    if (is_const_int(b, 0) && b.dtype().is_scalar()) return a;
    const int64_t* ca = as_const_int(a);
    const int64_t* cb = as_const_int(b);
    if (ca && cb && a.dtype().is_scalar() && b.dtype().is_scalar())
        return IntImm::make(DataType::int64(), *ca + *cb);
    return Add::make(a, b);
}

// The linear index so far: a scalar base plus, for a vector access, a Ramp
// stride and lane count.
struct Term {
    Expr base;
    Expr stride;  // undefined for scalars
    int lanes = 1;
};

/// Row-major linear index of `indices` into `shape`.
Expr linearize(const std::vector<Expr>& indices, const std::vector<Expr>& shape) {
    TS_CHECK(indices.size() == shape.size())
        << "buffer access with " << indices.size() << " indices into a rank-" << shape.size()
        << " buffer";
    // Strides from the innermost dimension outwards.
    std::vector<Expr> strides(shape.size());
    Expr stride = IntImm::make(DataType::int64(), 1);
    for (size_t i = shape.size(); i-- > 0;) {
        strides[i] = stride;
        stride = mul(stride, to_int64(shape[i]));
    }
    int lanes = 1;
    bool all_affine = true;  // every index a scalar or a Ramp
    for (const Expr& idx : indices) {
        lanes = std::max<int>(lanes, idx.dtype().lanes);
        if (idx.dtype().is_vector() && !idx.as<Ramp>()) all_affine = false;
    }
    if (all_affine) {
        Term acc;
        for (size_t i = 0; i < indices.size(); ++i) {
            if (const Ramp* r = indices[i].as<Ramp>()) {
                Expr base = mul(to_int64(r->base), strides[i]);
                Expr step = mul(to_int64(r->stride), strides[i]);
                acc.base = add(acc.base, base);
                acc.stride = acc.stride.defined() ? add(acc.stride, step) : step;
                acc.lanes = r->lanes;
            } else {
                acc.base = add(acc.base, mul(to_int64(indices[i]), strides[i]));
            }
        }
        if (!acc.base.defined()) acc.base = IntImm::make(DataType::int64(), 0);
        if (!acc.stride.defined()) return acc.base;
        return Ramp::make(acc.base, acc.stride, acc.lanes);
    }
    // General vector index (a gather): plain vector arithmetic.
    Expr acc;
    for (size_t i = 0; i < indices.size(); ++i) {
        Expr idx = to_int64(indices[i]);
        Expr term;
        if (idx.dtype().is_vector())
            term = is_const_int(strides[i], 1) ? idx
                                               : Mul::make(idx, Broadcast::make(strides[i], lanes));
        else
            term = Broadcast::make(mul(idx, strides[i]), lanes);
        acc = acc.defined() ? Add::make(acc, term) : term;
    }
    return acc;
}

class BufferFlattener : public IRMutator {
public:
    /// The 1-D buffer standing for `b` (created once per buffer).
    Buffer flat(const Buffer& b) {
        auto it = m_flat.find(b.get());
        if (it != m_flat.end()) return it->second;
        Buffer out = b;
        if (b->shape.size() != 1) {
            Expr n = IntImm::make(DataType::int64(), 1);
            for (const Expr& d : b->shape) n = mul(n, to_int64(d));
            out = Buffer(b->name, b->dtype, {n}, b->scope);
        }
        m_flat.emplace(b.get(), out);
        return out;
    }

protected:
    using IRMutator::visit;

    Expr visit(const BufferLoad* op) override {
        bool changed = false;
        std::vector<Expr> indices = mutate_exprs(op->indices, &changed);
        Buffer fb = flat(op->buffer);
        if (op->buffer->shape.size() == 1 && !changed) return op;
        if (op->buffer->shape.size() == 1) return BufferLoad::make(fb, indices);
        return BufferLoad::make(fb, {linearize(indices, op->buffer->shape)});
    }

    Stmt visit(const BufferStore* op) override {
        bool changed = false;
        std::vector<Expr> indices = mutate_exprs(op->indices, &changed);
        Expr value = mutate(op->value);
        Buffer fb = flat(op->buffer);
        if (op->buffer->shape.size() == 1) {
            if (!changed && value.same_as(op->value)) return op;
            return BufferStore::make(fb, value, indices);
        }
        return BufferStore::make(fb, value, {linearize(indices, op->buffer->shape)});
    }

    Stmt visit(const Allocate* op) override {
        Stmt body = mutate(op->body);
        Buffer fb = flat(op->buffer);
        if (fb.same_as(op->buffer) && body.same_as(op->body)) return op;
        return Allocate::make(fb, body);
    }

private:
    std::map<const BufferNode*, Buffer> m_flat;
};

}  // namespace

PrimFunc flatten_buffers(const PrimFunc& f) {
    BufferFlattener flattener;
    std::vector<Buffer> params;
    bool params_changed = false;
    for (const Buffer& b : f->params) {
        params.push_back(flattener.flat(b));
        params_changed |= !params.back().same_as(b);
    }
    Stmt body = flattener.mutate(f->body);
    if (!params_changed && body.same_as(f->body)) return f;
    return PrimFunc(f->name, params, body, f->attrs);
}

}  // namespace tessera::tir
