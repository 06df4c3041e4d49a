// pack_int8x4 and nn.matmul_u8i8 (graph/ops_int8.cpp): the integer GEMM on
// words of four bytes, each step one dot4_u8s8 (vpdpbusd where the CPU has
// it). The matmul rule schedules it like a float product: words are 4 bytes
// like floats, so its cache blocking and B's packing hold as they are.
#include <functional>

#include "engine/tir/op.h"
#include "engine/topi/compute/topi_detail.h"

namespace tessera::topi::detail {

using tir::DataType;
using tir::Expr;
using tir::Var;

namespace {

const DataType kU32{DataType::UInt, 32, 1};

Expr i64(int64_t v) { return tir::make_const(DataType::int64(), double(v)); }

// The int32 word of four bytes: byte(t) (an 8-bit value) in bits 8t..8t+7.
Expr packed_word(const std::function<Expr(int64_t)>& byte) {
    Expr word = tir::make_const(kU32, 0);
    for (int64_t t = 0; t < 4; ++t) {
        // The byte's bits: int8 through uint8, zero-extended.
        Expr b = tir::cast(kU32, tir::cast(DataType::uint8(), byte(t)));
        word = tir::bitwise_or(word, b * tir::make_const(kU32, double(int64_t(1) << (8 * t))));
    }
    return tir::reinterpret(DataType::int32(), word);
}

}  // namespace

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
            return packed_word([&](int64_t t) {
                Expr k = idx[size_t(axis)] * 4 + i64(t);
                std::vector<Expr> at = idx;
                at[size_t(axis)] = tir::min(k, i64(K - 1));
                Expr v = x(at);
                return K % 4 == 0 ? v : tir::select(k < i64(K), v, tir::make_const(v.dtype(), 0));
            });
        },
        "T_pack_int8x4", "injective");
    return {w};
}

Tensors im2col_int8x4(const graph::Node& n, const Tensors& in, const Types& out) {
    check_arity(n, in, out, 1, 2);
    const te::Tensor& x = in[0];
    const auto& xs = x.shape();  // N, C, H, W
    const auto kernel = n.attr_ints("kernel", {1, 1});
    const auto strides = n.attr_ints("strides", {1, 1});
    const auto pad = n.attr_ints("padding", {0, 0, 0, 0});
    const auto dil = n.attr_ints("dilation", {1, 1});
    const int64_t pad_value = n.attr_int("pad_value", 0);
    const int64_t K = xs[1] * kernel[0] * kernel[1];
    const int64_t OW = (xs[3] + pad[1] + pad[3] - dil[1] * (kernel[1] - 1) - 1) / strides[1] + 1;
    auto clamp = [](Expr v, int64_t hi) { return tir::max(tir::min(v, i64(hi - 1)), i64(0)); };
    // The data with its padding (the zero point) as a stage of its own: the
    // windows then read every byte inside it, so a row of windows is a
    // contiguous (stride 1) vector load instead of a clamped, guarded gather
    // per byte, which ran serially (64 x 56 x 56 bytes of ResNet-18: 2 ms).
    te::Tensor src = x;
    if (pad[0] != 0 || pad[1] != 0 || pad[2] != 0 || pad[3] != 0)
        src = te::compute(
            {xs[0], xs[1], xs[2] + pad[0] + pad[2], xs[3] + pad[1] + pad[3]},
            [&](const std::vector<Var>& p) {
                const Expr ih = p[2] - i64(pad[0]), iw = p[3] - i64(pad[1]);
                const Expr v = x(p[0], p[1], clamp(ih, xs[2]), clamp(iw, xs[3]));
                // The pad value: a run-time zero point (a second input), or the attribute.
                Expr pv = tir::make_const(v.dtype(), double(pad_value));
                if (in.size() == 2) pv = in[1](std::vector<Expr>(in[1].shape().size(), i64(0)));
                return tir::select(
                    ih >= i64(0) && ih < i64(xs[2]) && iw >= i64(0) && iw < i64(xs[3]), v, pv);
            },
            "T_im2col_pad", "injective");
    te::Tensor w = te::compute(
        out[0].shape,
        [&](const std::vector<Var>& iv) {
            // (n, word, p), or (word, p) with squeeze_batch.
            std::vector<Expr> i = as_exprs(iv);
            if (i.size() == 2) i.insert(i.begin(), i64(0));
            const Expr oh = tir::floordiv(i[2], i64(OW));
            const Expr ow = tir::floormod(i[2], i64(OW));
            return packed_word([&](int64_t t) {
                const Expr k = i[1] * 4 + i64(t);
                const Expr c = tir::floordiv(k, i64(kernel[0] * kernel[1]));
                const Expr r = tir::floormod(tir::floordiv(k, i64(kernel[1])), i64(kernel[0]));
                const Expr q = tir::floormod(k, i64(kernel[1]));
                // Inside the padded data for every window; past K: 0.
                const Expr v = src(i[0], clamp(c, xs[1]), oh * strides[0] + r * dil[0],
                                   ow * strides[1] + q * dil[1]);
                return K % 4 == 0 ? v : tir::select(k < i64(K), v, tir::make_const(v.dtype(), 0));
            });
        },
        "T_im2col_int8x4", "injective");
    return {w};
}

Tensors matmul_i8u8(const graph::Node& n, const Tensors& in, const Types& out) {
    check_arity(n, in, out, 2, 2);
    return {matrix_product(n, in[0], in[1], out[0].shape,
                           [](Expr a, Expr b) { return tir::dot4_u8s8(b, a); })};
}

Tensors matmul_u8i8(const graph::Node& n, const Tensors& in, const Types& out) {
    check_arity(n, in, out, 2, 2);
    return {matrix_product(n, in[0], in[1], out[0].shape,
                           [](Expr a, Expr b) { return tir::dot4_u8s8(a, b); })};
}

}  // namespace tessera::topi::detail
