// Computes for indexing and scatter ops: gather_nd, scatter_elements,
// scatter_nd, reverse_sequence, nn.max_unpool. A scatter is a reduction over
// the updates that land on each output element ("last one wins" picks the
// largest update position). Sampling ops live in topi_sample.cpp.
#include <functional>

#include "engine/topi/compute/topi_detail.h"

namespace tessera::topi::detail {

namespace {

using tir::Expr;
using tir::IterVar;
using tir::ReduceKind;
using tir::Var;

// An int64 index read from an index tensor; negative values count from the end.
Expr wrap_index(Expr v, int64_t extent) {
    if (v.dtype() != tir::DataType::int64()) v = tir::cast(tir::DataType::int64(), v);
    return tir::select(v < int64_t(0), v + extent, v);
}

// wrap_index, clamped so that reads stay in bounds for out-of-range values.
Expr safe_index(Expr v, int64_t extent) { return clamp_index(wrap_index(std::move(v), extent), extent); }

// Row-major multi-index of flat position `flat` over `shape`.
std::vector<Expr> unflatten(Expr flat, const std::vector<int64_t>& shape) {
    std::vector<Expr> idx(shape.size());
    for (size_t d = shape.size(); d-- > 0;) {
        idx[d] = d == 0 ? flat : tir::floormod(flat, shape[d]);
        if (d > 0) flat = tir::floordiv(flat, shape[d]);
    }
    return idx;
}

// Row-major flat position of `idx` over `shape`.
Expr flatten(const std::vector<Expr>& idx, const std::vector<int64_t>& shape) {
    Expr f = int64_t(0);
    for (size_t d = 0; d < shape.size(); ++d) f = d == 0 ? idx[0] : mul_const(f, shape[d]) + idx[d];
    return f;
}

int64_t product(const std::vector<int64_t>& s, size_t from = 0) {
    int64_t p = 1;
    for (size_t d = from; d < s.size(); ++d) p *= s[d];
    return p;
}

struct ScatterKind {
    std::string reduction;
    ReduceKind kind() const {
        if (reduction == "mul") return ReduceKind::Prod;
        if (reduction == "min") return ReduceKind::Min;
        if (reduction == "max") return ReduceKind::Max;
        return ReduceKind::Sum;
    }
    // The value an update that does not land contributes.
    Expr identity(tir::DataType t) const {
        if (reduction == "mul") return tir::make_const(t, 1.0);
        if (reduction == "min") return tir::max_value(t);
        if (reduction == "max") return tir::min_value(t);
        return tir::make_zero(t);
    }
    Expr combine(Expr data, Expr acc) const {
        if (reduction == "mul") return data * acc;
        if (reduction == "min") return tir::min(data, acc);
        if (reduction == "max") return tir::max(data, acc);
        return data + acc;
    }
};

// out[i] = data[i] combined with the updates that land on i. `hit(i, k)` says
// whether update position k lands on i; `update(i, k)` reads it; `extent` is
// the number of update positions considered per output element.
te::Tensor scatter_reduce(const graph::Node& n, const te::Tensor& data, int64_t extent,
                          const std::function<Expr(const std::vector<Var>&, Expr)>& hit,
                          const std::function<Expr(const std::vector<Var>&, Expr)>& update,
                          const std::string& name) {
    ScatterKind sk{n.attr_str("reduction", "none")};
    if (extent == 0) {  // no updates: a copy (and no reads of the empty updates)
        return te::compute(
            data.shape(), [&](const std::vector<Var>& i) { return data(as_exprs(i)); }, name,
            "injective");
    }
    if (sk.reduction == "none") {
        // The last update that lands wins (ONNX leaves duplicates undefined).
        te::Tensor last = te::compute(
            data.shape(),
            [&](const std::vector<Var>& i) {
                IterVar k = te::reduce_axis(extent, "k");
                return te::max(tir::select(hit(i, k.var), Expr(k.var), Expr(int64_t(-1))), {k});
            },
            name + "_last", "reduce");
        return te::compute(
            data.shape(),
            [&](const std::vector<Var>& i) {
                Expr l = last(as_exprs(i));
                return tir::select(l >= int64_t(0), update(i, clamp_index(l, extent)),
                                   data(as_exprs(i)));
            },
            name, "injective");
    }
    te::Tensor acc = te::compute(
        data.shape(),
        [&](const std::vector<Var>& i) {
            IterVar k = te::reduce_axis(extent, "k");
            Expr v = tir::select(hit(i, k.var), update(i, k.var), sk.identity(data.dtype()));
            return tir::Reduce::make(sk.kind(), v, {k});
        },
        name + "_acc", "reduce");
    return te::compute(
        data.shape(),
        [&](const std::vector<Var>& i) { return sk.combine(data(as_exprs(i)), acc(as_exprs(i))); },
        name, "injective");
}

Tensors gather_nd(const graph::Node& n, const Tensors& in, const Types& out) {
    check_arity(n, in, out, 2, 2);
    const te::Tensor& x = in[0];
    const te::Tensor& ind = in[1];
    size_t b = size_t(n.attr_int("batch_dims", 0));
    size_t q = ind.shape().size();
    int64_t k = ind.shape().back();
    te::Tensor y = te::compute(
        out[0].shape,
        [&](const std::vector<Var>& o) {
            std::vector<Expr> pos(o.begin(), o.begin() + long(q - 1));
            std::vector<Expr> idx(o.begin(), o.begin() + long(b));
            for (int64_t t = 0; t < k; ++t) {
                std::vector<Expr> ii = pos;
                ii.push_back(Expr(t));
                idx.push_back(safe_index(ind(ii), x.shape()[b + size_t(t)]));
            }
            for (size_t d = q - 1; d < o.size(); ++d) idx.push_back(o[d]);
            return x(idx);
        },
        "T_gather_nd", "injective");
    return {y};
}

Tensors scatter_elements(const graph::Node& n, const Tensors& in, const Types& out) {
    check_arity(n, in, out, 3, 3);
    const te::Tensor& data = in[0];
    const te::Tensor& ind = in[1];
    const te::Tensor& upd = in[2];
    size_t axis = size_t(n.attr_int("axis", 0));
    const auto& ds = data.shape();
    const auto& is = ind.shape();
    // Position in indices/updates of update k on the axis for output i.
    auto at = [&](const std::vector<Var>& i, Expr k) {
        std::vector<Expr> j;
        for (size_t d = 0; d < ds.size(); ++d)
            j.push_back(d == axis ? k : is[d] < ds[d] ? clamp_index(i[d], is[d]) : Expr(i[d]));
        return j;
    };
    auto hit = [&](const std::vector<Var>& i, Expr k) {
        Expr h = wrap_index(ind(at(i, k)), ds[axis]) == Expr(i[axis]);
        for (size_t d = 0; d < ds.size(); ++d)
            if (d != axis && is[d] < ds[d]) h = h && Expr(i[d]) < Expr(is[d]);
        return h;
    };
    auto update = [&](const std::vector<Var>& i, Expr k) { return upd(at(i, k)); };
    const int64_t extent = product(is) == 0 ? 0 : is[axis];
    return {scatter_reduce(n, data, extent, hit, update, "T_scatter_elements")};
}

Tensors scatter_nd(const graph::Node& n, const Tensors& in, const Types& out) {
    check_arity(n, in, out, 3, 3);
    const te::Tensor& data = in[0];
    const te::Tensor& ind = in[1];
    const te::Tensor& upd = in[2];
    const auto& ds = data.shape();
    const auto& is = ind.shape();
    size_t k = size_t(is.back());
    std::vector<int64_t> pos_shape(is.begin(), is.end() - 1);
    int64_t count = product(pos_shape);
    auto hit = [&](const std::vector<Var>& i, Expr m) {
        std::vector<Expr> p = unflatten(m, pos_shape);
        Expr h;
        for (size_t t = 0; t < k; ++t) {
            std::vector<Expr> ii = p;
            ii.push_back(Expr(int64_t(t)));
            Expr e = wrap_index(ind(ii), ds[t]) == Expr(i[t]);
            h = t == 0 ? e : (h && e);
        }
        return h;
    };
    auto update = [&](const std::vector<Var>& i, Expr m) {
        std::vector<Expr> p = unflatten(m, pos_shape);
        for (size_t d = k; d < ds.size(); ++d) p.push_back(i[d]);
        return upd(p);
    };
    return {scatter_reduce(n, data, count, hit, update, "T_scatter_nd")};
}

Tensors reverse_sequence(const graph::Node& n, const Tensors& in, const Types& out) {
    check_arity(n, in, out, 2, 2);
    const te::Tensor& x = in[0];
    size_t b = size_t(n.attr_int("batch_axis", 1)), t = size_t(n.attr_int("time_axis", 0));
    int64_t steps = x.shape()[t];
    te::Tensor y = te::compute(
        x.shape(),
        [&](const std::vector<Var>& i) {
            Expr len = in[1](i[b]);
            if (len.dtype() != tir::DataType::int64()) len = tir::cast(tir::DataType::int64(), len);
            std::vector<Expr> idx = as_exprs(i);
            Expr ti = i[t];
            idx[t] = clamp_index(tir::select(ti < len, len - int64_t(1) - ti, ti), steps);
            return x(idx);
        },
        "T_reverse_sequence", "injective");
    return {y};
}

Tensors max_unpool(const graph::Node& n, const Tensors& in, const Types& out) {
    check_arity(n, in, out, 2, 2);
    const te::Tensor& x = in[0];
    const te::Tensor& ind = in[1];
    const auto& xs = x.shape();
    const auto& os = out[0].shape;
    // Indices are flat positions in unpooled_shape, whose elements sit at the
    // start of each dim of the (possibly larger) output.
    const std::vector<int64_t> us = n.attr_ints("unpooled_shape", os);
    std::vector<int64_t> in_plane(xs.begin() + 2, xs.end()), out_plane(us.begin() + 2, us.end());
    int64_t plane_in = product(in_plane), plane_out = product(out_plane), channels = xs[1];
    if (plane_in == 0) {  // nothing to unpool: zeros
        return {te::compute(
            os, [&](const std::vector<Var>&) { return tir::make_zero(x.dtype()); }, "T_max_unpool",
            "injective")};
    }
    // Index of X element at spatial position r of plane (i0, i1).
    auto x_index = [&](const std::vector<Var>& i, Expr r) {
        std::vector<Expr> idx = {i[0], i[1]};
        for (Expr e : unflatten(std::move(r), in_plane)) idx.push_back(e);
        return idx;
    };
    te::Tensor last = te::compute(
        os,
        [&](const std::vector<Var>& i) {
            IterVar r = te::reduce_axis(plane_in, "r");
            std::vector<Expr> sp(i.begin() + 2, i.end());
            Expr flat = (Expr(i[0]) * channels + i[1]) * plane_out + flatten(sp, out_plane);
            Expr v = ind(x_index(i, r.var));
            if (v.dtype() != tir::DataType::int64()) v = tir::cast(tir::DataType::int64(), v);
            Expr hit = v == flat;
            for (size_t d = 2; d < os.size(); ++d)
                if (us[d] < os[d]) hit = hit && Expr(i[d]) < Expr(us[d]);
            return te::max(tir::select(hit, Expr(r.var), Expr(int64_t(-1))), {r});
        },
        "T_max_unpool_last", "reduce");
    te::Tensor y = te::compute(
        os,
        [&](const std::vector<Var>& i) {
            Expr l = last(as_exprs(i));
            return tir::select(l >= int64_t(0), x(x_index(i, clamp_index(l, plane_in))),
                               tir::make_zero(x.dtype()));
        },
        "T_max_unpool", "injective");
    return {y};
}

}  // namespace

Tensors grid_sample(const graph::Node& n, const Tensors& in, const Types& out);  // topi_sample.cpp
Tensors roi_align(const graph::Node& n, const Tensors& in, const Types& out);    // topi_sample.cpp

void add_index_computes(ComputeTable& t) {
    t["gather_nd"] = gather_nd;
    t["scatter_elements"] = scatter_elements;
    t["scatter_nd"] = scatter_nd;
    t["reverse_sequence"] = reverse_sequence;
    t["nn.max_unpool"] = max_unpool;
    t["image.grid_sample"] = grid_sample;
    t["vision.roi_align"] = roi_align;
}

}  // namespace tessera::topi::detail
