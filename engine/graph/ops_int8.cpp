// Integer GEMM ops: pack_int8x4 puts four 8-bit values of one axis into an
// int32 word (the operand layout of vpdpbusd / dp4a), nn.matmul_u8i8 (and
// nn.matmul_i8u8) multiplies such words of unsigned A and signed B (signed
// A, unsigned B) with int32 results; nn.im2col_int8x4 lays a convolution's
// windows out as such words (integer convolutions are GEMMs on them).
#include "engine/core/error.h"
#include "engine/graph/op_table.h"

namespace tessera::graph::detail {

namespace {

using Types = std::vector<TensorType>;

int64_t packed_axis(const Node& n, const TensorType& t) {
    const int64_t rank = int64_t(t.shape.size());
    int64_t axis = n.attr_int("axis", -1);
    if (axis < 0) axis += rank;
    TS_USER_CHECK(axis >= 0 && axis < rank)
        << where(n) << ": axis " << n.attr_int("axis", -1) << " is out of range for " << t.str();
    return axis;
}

Types infer_pack_int8x4(const Node& n, const Types& in) {
    expect_arity(n, in, 1, 1);
    TS_USER_CHECK(in[0].dtype == DType::Int8 || in[0].dtype == DType::UInt8)
        << where(n) << ": packs int8 or uint8 values, got " << in[0].str();
    std::vector<int64_t> s = in[0].shape;
    int64_t& d = s[size_t(packed_axis(n, in[0]))];
    d = (d + 3) / 4;
    return {TensorType{DType::Int32, s}};
}

Types infer_matmul_u8i8(const Node& n, const Types& in) {
    expect_arity(n, in, 2, 2);
    for (size_t i = 0; i < 2; ++i)
        TS_USER_CHECK(in[i].dtype == DType::Int32 && in[i].shape.size() >= 2)
            << where(n) << ": operand " << i << " must be int32 words of rank >= 2, got "
            << in[i].str();
    const auto& a = in[0].shape;
    const auto& b = in[1].shape;
    TS_USER_CHECK(a.back() == b[b.size() - 2])
        << where(n) << ": inner dimensions of " << in[0].str() << " and " << in[1].str()
        << " differ";
    std::vector<int64_t> out = broadcast_shapes(n, std::vector<int64_t>(a.begin(), a.end() - 2),
                                                std::vector<int64_t>(b.begin(), b.end() - 2));
    out.push_back(a[a.size() - 2]);
    out.push_back(b.back());
    return {TensorType{DType::Int32, out}};
}

Types infer_matmul_i8u8(const Node& n, const Types& in) { return infer_matmul_u8i8(n, in); }

// (N, C, H, W) uint8 -> (N, ceil(C*KH*KW / 4), OH*OW) int32 words. The
// padding holds attribute pad_value, or the value of a second input (a
// uint8 scalar: a zero point computed at run time).
Types infer_im2col_int8x4(const Node& n, const Types& in) {
    expect_arity(n, in, 1, 2);
    TS_USER_CHECK(in[0].dtype == DType::UInt8 && in[0].shape.size() == 4)
        << where(n) << ": takes (N, C, H, W) uint8 data, got " << in[0].str();
    TS_USER_CHECK(in.size() == 1 || (in[1].dtype == DType::UInt8 && in[1].num_elements() == 1))
        << where(n) << ": the pad value must be one uint8, got " << in[1].str();
    const auto& x = in[0].shape;
    auto kernel = ints_of_size(n, "kernel", 2, 1);
    auto strides = ints_of_size(n, "strides", 2, 1);
    auto pad = ints_of_size(n, "padding", 4, 0);
    auto dil = ints_of_size(n, "dilation", 2, 1);
    for (size_t i = 0; i < 2; ++i)
        TS_USER_CHECK(kernel[i] >= 1 && strides[i] >= 1 && dil[i] >= 1)
            << where(n) << ": kernel, strides and dilation must be positive";
    const int64_t oh = window_out(n, x[2], pad[0], pad[2], kernel[0], strides[0], dil[0], false);
    const int64_t ow = window_out(n, x[3], pad[1], pad[3], kernel[1], strides[1], dil[1], false);
    TS_USER_CHECK(n.attr_int("out_width", ow) == ow)
        << where(n) << ": out_width " << n.attr_int("out_width", ow) << " is not the output width "
        << ow;
    const int64_t k = x[1] * kernel[0] * kernel[1];
    if (n.attr_int("squeeze_batch", 0) != 0) {
        TS_USER_CHECK(x[0] == 1) << where(n) << ": squeeze_batch needs a batch of 1, got " << x[0];
        return {TensorType{DType::Int32, {(k + 3) / 4, oh * ow}}};
    }
    return {TensorType{DType::Int32, {x[0], (k + 3) / 4, oh * ow}}};
}

}  // namespace

void add_int8_ops(std::vector<OpDef>& table) {
    table.push_back({"pack_int8x4",
                     "Four int8/uint8 values along `axis` (default -1) as one int32 word, byte t "
                     "the element 4i+t; the axis is zero-padded to a multiple of 4",
                     OpPattern::Injective, infer_pack_int8x4});
    table.push_back({"nn.matmul_u8i8",
                     "Integer matrix product of packed words (pack_int8x4: A along its last "
                     "axis, unsigned; B along its rows, signed), int32 sums; batch dims "
                     "broadcast",
                     OpPattern::OutEWiseFusable, infer_matmul_u8i8});
    table.push_back({"nn.matmul_i8u8",
                     "nn.matmul_u8i8 with A signed and B unsigned (a convolution's weights times "
                     "its im2col_int8x4 data)",
                     OpPattern::OutEWiseFusable, infer_matmul_i8u8});
    table.push_back({"nn.im2col_int8x4",
                     "The 2-D convolution windows of (N, C, H, W) uint8 data as packed words "
                     "(N, ceil(C*KH*KW/4), OH*OW), byte t of word w the window element 4w+t in "
                     "(c, kh, kw) order; kernel, strides, padding (top, left, bottom, right, "
                     "filled with pad_value), dilation, out_width (OW, for the schedule); "
                     "squeeze_batch: (words, OH*OW) for a batch of 1. Not fused with the ops "
                     "before it (it reads each input element KH*KW times)",
                     OpPattern::OutEWiseFusable, infer_im2col_int8x4});
}

}  // namespace tessera::graph::detail
