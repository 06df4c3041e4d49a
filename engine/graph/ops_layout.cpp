// Blocked-layout graph ops for CPU convolution (TVM's conv2d_NCHWc):
// layout_transform between NCHW and NCHW[x]c, nn.conv2d_NCHWc (dense or
// depthwise), and max / global average pooling in the blocked layout.
#include <algorithm>

#include "engine/core/error.h"
#include "engine/graph/op_table.h"

namespace tessera::graph::detail {

namespace {

using Types = std::vector<TensorType>;

/// The channel block of "NCHW16c" (16), 0 for "NCHW"; UserError otherwise.
int64_t parse_layout(const Node& n, const std::string& layout) {
    if (layout == "NCHW") return 0;
    bool ok = layout.size() > 5 && layout.rfind("NCHW", 0) == 0 && layout.back() == 'c';
    int64_t block = 0;
    for (size_t i = 4; ok && i + 1 < layout.size(); ++i) {
        ok = layout[i] >= '0' && layout[i] <= '9' && block < (int64_t(1) << 20);
        block = block * 10 + (layout[i] - '0');
    }
    TS_USER_CHECK(ok && block >= 1) << where(n) << ": layout '" << layout
                                    << "' is neither NCHW nor NCHW<block>c (e.g. NCHW16c)";
    return block;
}

Types infer_layout_transform(const Node& n, const Types& in) {
    expect_arity(n, in, 1, 1);
    const int64_t src = parse_layout(n, n.attr_str("src_layout"));
    const int64_t dst = parse_layout(n, n.attr_str("dst_layout"));
    TS_USER_CHECK((src == 0) != (dst == 0))
        << where(n) << ": converts between NCHW and NCHW<block>c only, got "
        << n.attr_str("src_layout") << " -> " << n.attr_str("dst_layout");
    const auto& s = in[0].shape;
    TS_USER_CHECK(int(s.size()) == (src == 0 ? 4 : 5))
        << where(n) << ": input " << in[0].str() << " does not have layout "
        << n.attr_str("src_layout");
    if (src == 0) {
        const int64_t co = (s[1] + dst - 1) / dst;
        return {TensorType{in[0].dtype, {s[0], co, s[2], s[3], dst}}};
    }
    TS_USER_CHECK(s[4] == src) << where(n) << ": input " << in[0].str() << " has block " << s[4]
                               << ", not " << src;
    const int64_t channels = n.attr_int("channels", s[1] * src);
    TS_USER_CHECK(channels > (s[1] - 1) * src && channels <= s[1] * src)
        << where(n) << ": channels=" << channels << " does not fit " << s[1] << " blocks of "
        << src;
    return {TensorType{in[0].dtype, {s[0], channels, s[2], s[3]}}};
}

Types infer_conv2d_nchwc(const Node& n, const Types& in) {
    expect_arity(n, in, 2, 3);
    expect_float(n, in, 0, 5);
    expect_float(n, in, 1, 6);
    const auto& x = in[0].shape;  // N, ICo, H, W, ib
    const auto& w = in[1].shape;  // OCo, ICo, KH, KW, ib, ob (depthwise: Co, 1, KH, KW, 1, b)
    const int64_t groups = n.attr_int("groups", 1);
    if (groups != 1) {
        // Depthwise: one group per channel, `groups` = the (unpadded) channels.
        TS_USER_CHECK(w[0] == x[1] && w[1] == 1 && w[4] == 1 && w[5] == x[4])
            << where(n) << ": depthwise data " << in[0].str() << " needs packed weight (" << x[1]
            << ", 1, KH, KW, 1, " << x[4] << "), got " << in[1].str();
        TS_USER_CHECK(groups > (x[1] - 1) * x[4] && groups <= x[1] * x[4])
            << where(n) << ": groups=" << groups << " is not the channel count of " << in[0].str()
            << " (only depthwise grouping is blocked)";
    } else {
        TS_USER_CHECK(x[1] == w[1] && x[4] == w[4])
            << where(n) << ": data " << in[0].str() << " and packed weight " << in[1].str()
            << " disagree on the input channel blocks";
    }
    if (in.size() == 3) {
        expect_float(n, in, 2, 2);
        TS_USER_CHECK(in[2].shape == std::vector<int64_t>({w[0], w[5]}))
            << where(n) << ": bias " << in[2].str() << " must be " << shape_str({w[0], w[5]});
    }
    auto strides = ints_of_size(n, "strides", 2, 1);
    auto pad = ints_of_size(n, "padding", 4, 0);
    auto dil = ints_of_size(n, "dilation", 2, 1);
    int64_t out[2];
    for (int a = 0; a < 2; ++a) {
        TS_USER_CHECK(strides[size_t(a)] >= 1 && dil[size_t(a)] >= 1 && pad[size_t(a)] >= 0 &&
                      pad[size_t(a) + 2] >= 0)
            << where(n) << ": strides and dilations must be positive and pads non-negative";
        int64_t span = x[size_t(2 + a)] + pad[size_t(a)] + pad[size_t(a) + 2] -
                       dil[size_t(a)] * (w[size_t(2 + a)] - 1) - 1;
        TS_USER_CHECK(span >= 0) << where(n) << ": the kernel does not fit the padded input";
        out[a] = span / strides[size_t(a)] + 1;
    }
    return {TensorType{DType::Float32, {x[0], w[0], out[0], out[1], w[5]}}};
}

// Max pooling over NCHW<b>c data: the window of nn.max_pool2d per channel.
Types infer_max_pool2d_nchwc(const Node& n, const Types& in) {
    expect_arity(n, in, 1, 1);
    expect_float(n, in, 0, 5);
    TS_USER_CHECK(n.attrs.count("kernel")) << where(n) << ": missing attribute 'kernel'";
    const auto& x = in[0].shape;
    auto k = ints_of_size(n, "kernel", 2, 1);
    auto strides = ints_of_size(n, "strides", 2, 1);
    auto pad = ints_of_size(n, "padding", 4, 0);
    auto dil = ints_of_size(n, "dilation", 2, 1);
    const bool ceil_mode = n.attr_int("ceil_mode", 0) != 0;
    for (size_t i = 0; i < 2; ++i)
        TS_USER_CHECK(k[i] >= 1 && strides[i] >= 1 && dil[i] >= 1 &&
                      pad[i] < dil[i] * (k[i] - 1) + 1 && pad[i + 2] < dil[i] * (k[i] - 1) + 1)
            << where(n) << ": kernel, strides and dilation must be >= 1, padding smaller than "
            << "the window";
    const int64_t oh = window_out(n, x[2], pad[0], pad[2], k[0], strides[0], dil[0], ceil_mode);
    const int64_t ow = window_out(n, x[3], pad[1], pad[3], k[1], strides[1], dil[1], ceil_mode);
    return {TensorType{DType::Float32, {x[0], x[1], oh, ow, x[4]}}};
}

Types infer_global_avg_pool2d_nchwc(const Node& n, const Types& in) {
    expect_arity(n, in, 1, 1);
    expect_float(n, in, 0, 5);
    const auto& x = in[0].shape;
    return {TensorType{DType::Float32, {x[0], x[1], 1, 1, x[4]}}};
}

}  // namespace

void add_layout_ops(std::vector<OpDef>& table) {
    table.push_back({"layout_transform",
                     "Convert data between NCHW and the blocked NCHW<b>c layout (src_layout, "
                     "dst_layout; channels pad with zeros into the last block)",
                     OpPattern::Injective, infer_layout_transform});
    table.push_back({"nn.conv2d_NCHWc",
                     "2-D convolution in the blocked layout: data NCHW<ib>c, packed weights "
                     "OIHW<ib>i<ob>o, optional bias (OCo, ob); strides, padding, dilation; "
                     "groups = channels: depthwise, weights (Co, 1, KH, KW, 1, b)",
                     OpPattern::OutEWiseFusable, infer_conv2d_nchwc});
    table.push_back({"nn.max_pool2d_NCHWc",
                     "2-D max pooling over NCHW<b>c float32 data; kernel, strides, padding, "
                     "dilation, ceil_mode as nn.max_pool2d (pads never win)",
                     OpPattern::OutEWiseFusable, infer_max_pool2d_nchwc});
    table.push_back({"nn.global_avg_pool2d_NCHWc",
                     "Mean over H and W of NCHW<b>c float32 data: (N, C/b, 1, 1, b)",
                     OpPattern::CommReduce, infer_global_avg_pool2d_nchwc});
}

}  // namespace tessera::graph::detail
