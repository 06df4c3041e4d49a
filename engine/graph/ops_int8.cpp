// Integer GEMM ops: pack_int8x4 puts four 8-bit values of one axis into an
// int32 word (the operand layout of vpdpbusd / dp4a), nn.matmul_u8i8
// multiplies such words of unsigned A and signed B with int32 results.
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
}

}  // namespace tessera::graph::detail
