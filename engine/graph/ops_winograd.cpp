// nn.conv2d_winograd_NCHWc: 3x3 stride-1 convolution of NCHW<ib>c data by
// Winograd F(m x m, 3 x 3) with weights pre-transformed at compile time.
#include "engine/core/error.h"
#include "engine/graph/op_table.h"

namespace tessera::graph::detail {

namespace {

using Types = std::vector<TensorType>;

Types infer_conv2d_winograd_nchwc(const Node& n, const Types& in) {
    expect_arity(n, in, 2, 3);
    expect_float(n, in, 0, 5);
    expect_float(n, in, 1, 6);
    const auto& x = in[0].shape;  // N, ICo, H, W, ib
    const auto& u = in[1].shape;  // alpha, alpha, OCo, ICo, ib, ob
    const int64_t m = n.attr_int("tile", 2);
    TS_USER_CHECK(m == 2 || m == 4) << where(n) << ": tile must be 2 or 4, got " << m;
    TS_USER_CHECK(u[0] == m + 2 && u[1] == m + 2 && u[3] == x[1] && u[4] == x[4])
        << where(n) << ": transformed weight " << in[1].str() << " must be (" << m + 2 << ", "
        << m + 2 << ", OCo, " << x[1] << ", " << x[4] << ", ob) for data " << in[0].str();
    if (in.size() == 3) {
        expect_float(n, in, 2, 2);
        TS_USER_CHECK(in[2].shape == std::vector<int64_t>({u[2], u[5]}))
            << where(n) << ": bias " << in[2].str() << " must be " << shape_str({u[2], u[5]});
    }
    auto pad = ints_of_size(n, "padding", 4, 0);
    for (int64_t p : pad) TS_USER_CHECK(p >= 0) << where(n) << ": pads must be non-negative";
    const int64_t oh = x[2] + pad[0] + pad[2] - 2, ow = x[3] + pad[1] + pad[3] - 2;
    TS_USER_CHECK(oh >= 1 && ow >= 1) << where(n) << ": the 3x3 kernel does not fit the input";
    return {TensorType{DType::Float32, {x[0], u[2], oh, ow, u[5]}}};
}

}  // namespace

void add_winograd_ops(std::vector<OpDef>& table) {
    table.push_back({"nn.conv2d_winograd_NCHWc",
                     "3x3 stride-1 convolution of NCHW<ib>c data by Winograd F(tile x tile, 3x3) "
                     "(tile 2 or 4): weights U = G g G^T (alpha, alpha, OCo, ICo, ib, ob), "
                     "optional bias (OCo, ob); padding",
                     OpPattern::OutEWiseFusable, infer_conv2d_winograd_nchwc});
}

}  // namespace tessera::graph::detail
