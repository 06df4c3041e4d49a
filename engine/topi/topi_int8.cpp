// pack_int8x4 and nn.matmul_u8i8 (graph/ops_int8.cpp): the integer GEMM on
// words of four bytes, each step one dot4_u8s8 (vpdpbusd where the CPU has
// it). The matmul rule schedules it like a float product: words are 4 bytes
// like floats, so its cache blocking and B's packing hold as they are.
#include "engine/tir/op.h"
#include "engine/topi/topi_detail.h"

namespace tessera::topi::detail {

using tir::DataType;
using tir::Expr;
using tir::Var;

Tensors pack_int8x4(const graph::Node& n, const Tensors& in, const Types& out) {
    check_arity(n, in, out, 1, 1);
    const te::Tensor& x = in[0];
    const int64_t rank = int64_t(x.ndim());
    int64_t axis = n.attr_int("axis", -1);
    if (axis < 0) axis += rank;
    TS_USER_CHECK(axis >= 0 && axis < rank) << where(n) << ": axis out of range";
    const int64_t K = x.shape()[size_t(axis)];
    te::Tensor w = te::compute(
        out[0].shape,
        [&](const std::vector<Var>& i) {
            std::vector<Expr> idx = as_exprs(i);
            Expr word = tir::make_const(DataType{DataType::UInt, 32, 1}, 0);
            for (int64_t t = 0; t < 4; ++t) {
                Expr k = idx[size_t(axis)] * 4 + tir::make_const(DataType::int64(), double(t));
                std::vector<Expr> at = idx;
                at[size_t(axis)] = tir::min(k, tir::make_const(DataType::int64(), double(K - 1)));
                // The byte's bits: int8 through uint8, zero-extended.
                Expr byte =
                    tir::cast(DataType{DataType::UInt, 32, 1}, tir::cast(DataType::uint8(), x(at)));
                if (K % 4 != 0)
                    byte = tir::select(k < tir::make_const(DataType::int64(), double(K)), byte,
                                       tir::make_const(byte.dtype(), 0));
                word = tir::bitwise_or(
                    word, byte * tir::make_const(byte.dtype(), double(int64_t(1) << (8 * t))));
            }
            return tir::reinterpret(DataType::int32(), word);
        },
        "T_pack_int8x4", "injective");
    return {w};
}

Tensors matmul_u8i8(const graph::Node& n, const Tensors& in, const Types& out) {
    check_arity(n, in, out, 2, 2);
    return {matrix_product(n, in[0], in[1], out[0].shape,
                           [](Expr a, Expr b) { return tir::dot4_u8s8(a, b); })};
}

}  // namespace tessera::topi::detail
