// More nn.* graph ops: average and global max pooling, transposed convolution.
#include <algorithm>

#include "engine/core/error.h"
#include "engine/graph/op_table.h"

namespace tessera::graph::detail {

namespace {

using Types = std::vector<TensorType>;

Types infer_avg_pool2d(const Node& n, const Types& in) {
    expect_arity(n, in, 1, 1);
    expect_float(n, in, 0, 4);
    const auto& x = in[0].shape;
    TS_USER_CHECK(n.attrs.count("kernel")) << where(n) << ": missing attribute 'kernel'";
    auto k = ints_of_size(n, "kernel", 2, 1);
    auto s = ints_of_size(n, "strides", 2, 1);
    auto p = ints_of_size(n, "padding", 4, 0);
    auto d = ints_of_size(n, "dilation", 2, 1);
    bool ceil_mode = n.attr_int("ceil_mode", 0) != 0;
    return {TensorType{DType::Float32,
                       {x[0], x[1], window_out(n, x[2], p[0], p[2], k[0], s[0], d[0], ceil_mode),
                        window_out(n, x[3], p[1], p[3], k[1], s[1], d[1], ceil_mode)}}};
}

Types infer_global_max_pool2d(const Node& n, const Types& in) {
    expect_arity(n, in, 1, 1);
    expect_float(n, in, 0, 4);
    return {TensorType{DType::Float32, {in[0].shape[0], in[0].shape[1], 1, 1}}};
}

Types infer_conv2d_transpose(const Node& n, const Types& in) {
    expect_arity(n, in, 2, 3);
    expect_float(n, in, 0, 4);
    expect_float(n, in, 1, 4);
    const auto& x = in[0].shape;
    const auto& w = in[1].shape;  // (C, K / groups, R, S)
    int64_t groups = n.attr_int("groups", 1);
    TS_USER_CHECK(groups >= 1 && x[1] == w[0] && w[0] % groups == 0)
        << where(n) << ": input channels " << x[1] << " do not match the weight " << shape_str(w)
        << " with groups=" << groups;
    int64_t k = w[1] * groups;
    if (in.size() == 3)
        TS_USER_CHECK(in[2].shape == std::vector<int64_t>({k}))
            << where(n) << ": bias " << in[2].str() << " does not match " << k << " channels";
    auto s = ints_of_size(n, "strides", 2, 1);
    auto p = ints_of_size(n, "padding", 4, 0);
    auto d = ints_of_size(n, "dilation", 2, 1);
    auto op = ints_of_size(n, "output_padding", 2, 0);
    std::vector<int64_t> out = {x[0], k, 0, 0};
    for (size_t i = 0; i < 2; ++i) {
        TS_USER_CHECK(s[i] >= 1 && d[i] >= 1 && p[i] >= 0 && p[i + 2] >= 0 && op[i] >= 0)
            << where(n) << ": strides and dilations must be positive, pads non-negative";
        out[i + 2] = (x[i + 2] - 1) * s[i] - p[i] - p[i + 2] + d[i] * (w[i + 2] - 1) + op[i] + 1;
        TS_USER_CHECK(out[i + 2] > 0) << where(n) << ": empty output";
    }
    return {TensorType{DType::Float32, out}};
}

}  // namespace

void add_pool_deconv_ops(std::vector<OpDef>& table) {
    table.push_back({"nn.avg_pool2d",
                     "2-D average pooling over NCHW; kernel, strides, padding, dilation, "
                     "ceil_mode, count_include_pad",
                     OpPattern::OutEWiseFusable, infer_avg_pool2d});
    table.push_back({"nn.global_max_pool2d", "Maximum over H and W of NCHW data, giving (N, C, 1, 1)",
                     OpPattern::CommReduce, infer_global_max_pool2d});
    table.push_back({"nn.conv2d_transpose",
                     "2-D transposed convolution, NCHW data and (C, K/groups, R, S) weights, "
                     "optional bias; strides, padding, dilation, groups, output_padding",
                     OpPattern::OutEWiseFusable, infer_conv2d_transpose});
}

}  // namespace tessera::graph::detail
