// ONNX Conv -> nn.conv2d, and the auto_pad/pads rule shared with pooling.
#include "engine/core/error.h"
#include "engine/frontend/onnx/onnx_context.h"

namespace tessera::frontend::onnx_import {

std::vector<int64_t> resolve_pads_2d(const NodeCtx& ctx, const std::vector<int64_t>& in_hw,
                                     const std::vector<int64_t>& kernel,
                                     const std::vector<int64_t>& strides,
                                     const std::vector<int64_t>& dilations) {
    const std::string auto_pad = ctx.attr_str("auto_pad", "NOTSET");
    if (auto_pad == "NOTSET") {
        std::vector<int64_t> pads = ctx.attr_ints("pads", {0, 0, 0, 0});
        TS_USER_CHECK(pads.size() == 4)
            << ctx.where() << ": pads needs 4 values for a 2-D window, got " << pads.size();
        for (int64_t p : pads)
            TS_USER_CHECK(p >= 0) << ctx.where() << ": negative pads are not supported";
        return pads;  // ONNX order (h_begin, w_begin, h_end, w_end) is ours: (top, left, bottom,
                      // right)
    }
    if (auto_pad == "VALID") return {0, 0, 0, 0};
    TS_USER_CHECK(auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER")
        << ctx.where() << ": unknown auto_pad '" << auto_pad << "'";
    std::vector<int64_t> pads(4);
    for (size_t i = 0; i < 2; ++i) {
        int64_t out = (in_hw[i] + strides[i] - 1) / strides[i];
        int64_t total = std::max<int64_t>(
            (out - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1 - in_hw[i], 0);
        int64_t small = total / 2, large = total - small;
        pads[i] =
            auto_pad == "SAME_UPPER" ? small : large;  // SAME_UPPER puts the extra pad at the end
        pads[i + 2] = total - pads[i];
    }
    return pads;
}

namespace {

void convert_conv(NodeCtx& ctx) {
    int x = ctx.input(0);
    int w = ctx.input(1);
    const graph::TensorType& xt = ctx.imp.g.values[size_t(x)].type;
    const graph::TensorType& wt = ctx.imp.g.values[size_t(w)].type;
    TS_USER_CHECK(xt.shape.size() == 4 && wt.shape.size() == 4)
        << ctx.where() << ": only 2-D convolution (4-D input and weight) is supported, got input "
        << xt.str() << " and weight " << wt.str();
    std::vector<int64_t> kernel = ctx.attr_ints("kernel_shape", {wt.shape[2], wt.shape[3]});
    TS_USER_CHECK(kernel == std::vector<int64_t>({wt.shape[2], wt.shape[3]}))
        << ctx.where() << ": kernel_shape does not match the weight " << wt.str();
    std::vector<int64_t> strides = ctx.attr_ints("strides", {1, 1});
    std::vector<int64_t> dilations = ctx.attr_ints("dilations", {1, 1});
    TS_USER_CHECK(strides.size() == 2 && dilations.size() == 2)
        << ctx.where() << ": strides and dilations need 2 values each";
    std::vector<int64_t> pads =
        resolve_pads_2d(ctx, {xt.shape[2], xt.shape[3]}, kernel, strides, dilations);
    std::vector<int> inputs = {x, w};
    if (ctx.has_input(2)) inputs.push_back(ctx.input(2));
    ctx.emit("nn.conv2d", inputs,
             {{"strides", strides},
              {"padding", pads},
              {"dilation", dilations},
              {"groups", ctx.attr_int("group", 1)}});
}

}  // namespace

void add_conv_converters(ConverterTable& t) { t["Conv"] = convert_conv; }

}  // namespace tessera::frontend::onnx_import
