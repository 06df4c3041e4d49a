// Shared helpers of the compute definitions: broadcast indexing, attribute
// checks and the node context of error messages.
#include <sstream>

#include "engine/topi/compute/topi_detail.h"

namespace tessera::topi::detail {

std::string where(const graph::Node& n) { return "node '" + n.name + "' (" + n.op + ")"; }

void check_arity(const graph::Node& n, const Tensors& in, const Types& out, size_t lo, size_t hi) {
    TS_USER_CHECK(in.size() >= lo && in.size() <= hi)
        << where(n) << ": expects " << lo << (lo == hi ? "" : " to " + std::to_string(hi))
        << " inputs, got " << in.size();
    TS_USER_CHECK(out.size() == 1) << where(n) << ": expects one output, got " << out.size();
}

std::vector<tir::Expr> broadcast_index(const std::vector<tir::Expr>& out_idx,
                                       const std::vector<int64_t>& out_shape,
                                       const std::vector<int64_t>& in_shape) {
    TS_CHECK(in_shape.size() <= out_shape.size() && out_idx.size() == out_shape.size())
        << "broadcast of rank " << in_shape.size() << " to rank " << out_shape.size();
    size_t off = out_shape.size() - in_shape.size();
    std::vector<tir::Expr> idx;
    idx.reserve(in_shape.size());
    for (size_t j = 0; j < in_shape.size(); ++j) {
        if (in_shape[j] == 1 && out_shape[off + j] != 1)
            idx.push_back(tir::Expr(int64_t(0)));
        else
            idx.push_back(out_idx[off + j]);
    }
    return idx;
}

std::vector<tir::Expr> as_exprs(const std::vector<tir::Var>& vars) {
    return std::vector<tir::Expr>(vars.begin(), vars.end());
}

tir::Expr clamp_index(tir::Expr e, int64_t extent) {
    return tir::min(tir::max(std::move(e), tir::Expr(int64_t(0))), tir::Expr(extent - 1));
}

tir::Expr mul_const(tir::Expr e, int64_t c) { return c == 1 ? e : e * tir::Expr(c); }

tir::Expr add_const(tir::Expr e, int64_t c) { return c == 0 ? e : e + tir::Expr(c); }

std::vector<int64_t> attr_ints_sized(const graph::Node& n, const std::string& key, size_t size,
                                     std::vector<int64_t> dflt) {
    std::vector<int64_t> v = n.attrs.count(key) ? n.attr_ints(key) : std::move(dflt);
    TS_USER_CHECK(v.size() == size)
        << where(n) << ": attribute '" << key << "' needs " << size << " values, got " << v.size();
    return v;
}

std::vector<int64_t> attr_padding(const graph::Node& n) {
    if (!n.attrs.count("padding")) return {0, 0, 0, 0};
    std::vector<int64_t> p = n.attr_ints("padding");
    if (p.size() == 2) p = {p[0], p[1], p[0], p[1]};
    TS_USER_CHECK(p.size() == 4) << where(n)
                                 << ": attribute 'padding' needs 4 values (top, left, bottom, "
                                    "right), got "
                                 << p.size();
    for (int64_t v : p) TS_USER_CHECK(v >= 0) << where(n) << ": negative padding " << v;
    return p;
}

}  // namespace tessera::topi::detail
