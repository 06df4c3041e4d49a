// Data-movement computes: transpose, concatenate, strided_slice, take,
// gather_elements, broadcast_to, tile and pad (constant, reflect, edge).
#include "engine/topi/compute/topi_detail.h"

namespace tessera::topi::detail {

using tir::Expr;
using tir::Var;

namespace {

Expr as_index(Expr v, int64_t extent) {
    if (v.dtype() != tir::DataType::int64()) v = tir::cast(tir::DataType::int64(), v);
    // Negative indices count from the end; out-of-range ones are clamped (never read outside).
    return clamp_index(tir::select(v < int64_t(0), v + extent, v), extent);
}

}  // namespace

Tensors transpose(const graph::Node& n, const Tensors& in, const Types& out) {
    check_arity(n, in, out, 1, 1);
    std::vector<int64_t> perm = n.attr_ints("axes");
    const te::Tensor& x = in[0];
    te::Tensor y = te::compute(
        out[0].shape,
        [&](const std::vector<Var>& i) {
            std::vector<Expr> idx(perm.size());
            for (size_t d = 0; d < perm.size(); ++d) idx[size_t(perm[d])] = i[d];
            return x(idx);
        },
        "T_transpose", "injective");
    return {y};
}

Tensors concatenate(const graph::Node& n, const Tensors& in, const Types& out) {
    TS_USER_CHECK(!in.empty() && out.size() == 1) << where(n) << ": needs inputs";
    size_t axis = size_t(n.attr_int("axis", 0));
    te::Tensor y = te::compute(
        out[0].shape,
        [&](const std::vector<Var>& i) {
            // Walk the inputs from the last: select(i < end_k, ... , later).
            std::vector<int64_t> offsets;
            int64_t off = 0;
            for (const te::Tensor& t : in) {
                offsets.push_back(off);
                off += t.shape()[axis];
            }
            Expr v;
            for (size_t k = in.size(); k-- > 0;) {
                int64_t ext = in[k].shape()[axis];
                if (ext == 0) continue;
                std::vector<Expr> idx = as_exprs(i);
                idx[axis] = clamp_index(add_const(i[axis], -offsets[k]), ext);
                Expr r = in[k](idx);
                v = v.defined() ? tir::select(Expr(i[axis]) < offsets[k] + ext, r, v) : r;
            }
            return v;
        },
        "T_concatenate", "injective");
    return {y};
}

Tensors strided_slice(const graph::Node& n, const Tensors& in, const Types& out) {
    check_arity(n, in, out, 1, 1);
    auto b = n.attr_ints("begin"), s = n.attr_ints("strides");
    const te::Tensor& x = in[0];
    te::Tensor y = te::compute(
        out[0].shape,
        [&](const std::vector<Var>& i) {
            std::vector<Expr> idx;
            for (size_t d = 0; d < i.size(); ++d) idx.push_back(add_const(mul_const(i[d], s[d]), b[d]));
            return x(idx);
        },
        "T_strided_slice", "injective");
    return {y};
}

Tensors take(const graph::Node& n, const Tensors& in, const Types& out) {
    check_arity(n, in, out, 2, 2);
    const te::Tensor& x = in[0];
    const te::Tensor& ind = in[1];
    size_t axis = size_t(n.attr_int("axis", 0));
    size_t m = ind.shape().size();
    te::Tensor y = te::compute(
        out[0].shape,
        [&](const std::vector<Var>& i) {
            std::vector<Expr> ii(i.begin() + long(axis), i.begin() + long(axis + m));
            std::vector<Expr> idx(i.begin(), i.begin() + long(axis));
            idx.push_back(as_index(ind(ii), x.shape()[axis]));
            for (size_t d = axis + m; d < i.size(); ++d) idx.push_back(i[d]);
            return x(idx);
        },
        "T_take", "injective");
    return {y};
}

Tensors gather_elements(const graph::Node& n, const Tensors& in, const Types& out) {
    check_arity(n, in, out, 2, 2);
    size_t axis = size_t(n.attr_int("axis", 0));
    te::Tensor y = te::compute(
        out[0].shape,
        [&](const std::vector<Var>& i) {
            std::vector<Expr> idx = as_exprs(i);
            idx[axis] = as_index(in[1](as_exprs(i)), in[0].shape()[axis]);
            return in[0](idx);
        },
        "T_gather_elements", "injective");
    return {y};
}

Tensors broadcast_to(const graph::Node& n, const Tensors& in, const Types& out) {
    check_arity(n, in, out, 1, 1);
    const auto& os = out[0].shape;
    te::Tensor y = te::compute(
        os,
        [&](const std::vector<Var>& i) {
            return in[0](broadcast_index(as_exprs(i), os, in[0].shape()));
        },
        "T_broadcast_to", "broadcast");
    return {y};
}

Tensors tile(const graph::Node& n, const Tensors& in, const Types& out) {
    check_arity(n, in, out, 1, 1);
    const auto& xs = in[0].shape();
    te::Tensor y = te::compute(
        out[0].shape,
        [&](const std::vector<Var>& i) {
            std::vector<Expr> idx;
            for (size_t d = 0; d < xs.size(); ++d)
                idx.push_back(xs[d] == 1 ? Expr(int64_t(0)) : tir::floormod(i[d], xs[d]));
            return in[0](idx);
        },
        "T_tile", "injective");
    return {y};
}

Tensors pad(const graph::Node& n, const Tensors& in, const Types& out) {
    check_arity(n, in, out, 1, 1);
    const te::Tensor& x = in[0];
    const auto& xs = x.shape();
    auto pads = n.attr_ints("pads");
    std::string mode = n.attr_str("mode", "constant");
    Expr value = tir::make_const(x.dtype(), n.attr_float("value", 0.0));
    te::Tensor y = te::compute(
        out[0].shape,
        [&](const std::vector<Var>& i) {
            std::vector<Expr> idx;
            Expr inside;
            for (size_t d = 0; d < xs.size(); ++d) {
                Expr j = add_const(i[d], -pads[d]);
                int64_t ext = xs[d];
                if (mode == "reflect") {
                    j = tir::select(j < int64_t(0), -j, j);
                    j = tir::select(j >= ext, Expr(2 * (ext - 1)) - j, j);
                    idx.push_back(clamp_index(j, ext));
                } else if (mode == "edge") {
                    idx.push_back(clamp_index(j, ext));
                } else if (mode == "wrap") {  // Pad-19: the opposite side's values
                    idx.push_back(tir::floormod(j, Expr(ext)));
                } else {
                    if (pads[d] > 0 || pads[d + xs.size()] > 0) {
                        Expr ok = j >= int64_t(0) && j < ext;
                        inside = inside.defined() ? (inside && ok) : ok;
                    }
                    idx.push_back(clamp_index(j, ext));
                }
            }
            Expr v = x(idx);
            return inside.defined() ? tir::select(inside, v, value) : v;
        },
        "T_pad", "injective");
    return {y};
}

}  // namespace tessera::topi::detail
