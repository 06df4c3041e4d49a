// ONNX Conv -> nn.conv2d, and the auto_pad/pads rule shared with pooling.
#include <algorithm>

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

std::vector<int64_t> resolve_pads_nd(const NodeCtx& ctx, const std::vector<int64_t>& in,
                                     const std::vector<int64_t>& kernel,
                                     const std::vector<int64_t>& strides,
                                     const std::vector<int64_t>& dilations) {
    const size_t dims = in.size();
    TS_USER_CHECK(kernel.size() == dims && strides.size() == dims && dilations.size() == dims)
        << ctx.where() << ": kernel_shape, strides and dilations need " << dims << " values each";
    const std::string auto_pad = ctx.attr_str("auto_pad", "NOTSET");
    if (auto_pad == "NOTSET") {
        std::vector<int64_t> pads = ctx.attr_ints("pads", std::vector<int64_t>(2 * dims, 0));
        TS_USER_CHECK(pads.size() == 2 * dims)
            << ctx.where() << ": pads needs " << 2 * dims << " values, got " << pads.size();
        for (int64_t p : pads)
            TS_USER_CHECK(p >= 0) << ctx.where() << ": negative pads are not supported";
        return pads;
    }
    if (auto_pad == "VALID") return std::vector<int64_t>(2 * dims, 0);
    TS_USER_CHECK(auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER")
        << ctx.where() << ": unknown auto_pad '" << auto_pad << "'";
    std::vector<int64_t> pads(2 * dims);
    for (size_t i = 0; i < dims; ++i) {
        int64_t out = (in[i] + strides[i] - 1) / strides[i];
        int64_t total = std::max<int64_t>(
            (out - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1 - in[i], 0);
        pads[i] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
        pads[i + dims] = total - pads[i];
    }
    return pads;
}

namespace {

/// 3-D convolution (5-D input and weight) -> nn.conv3d.
void convert_conv3d(NodeCtx& ctx, int x, int w) {
    const graph::TensorType xt = ctx.type_of(x);
    const graph::TensorType wt = ctx.type_of(w);
    std::vector<int64_t> kernel(wt.shape.begin() + 2, wt.shape.end());
    std::vector<int64_t> ks = ctx.attr_ints("kernel_shape", kernel);
    TS_USER_CHECK(ks == kernel) << ctx.where() << ": kernel_shape does not match the weight "
                                << wt.str();
    std::vector<int64_t> strides = ctx.attr_ints("strides", {1, 1, 1});
    std::vector<int64_t> dilations = ctx.attr_ints("dilations", {1, 1, 1});
    std::vector<int64_t> pads =
        resolve_pads_nd(ctx, std::vector<int64_t>(xt.shape.begin() + 2, xt.shape.end()), kernel,
                        strides, dilations);
    std::vector<int> inputs = {x, w};
    if (ctx.has_input(2)) inputs.push_back(ctx.input(2));
    ctx.emit("nn.conv3d", inputs,
             {{"strides", strides},
              {"padding", pads},
              {"dilation", dilations},
              {"groups", ctx.attr_int("group", 1)}});
}

/// An (N, C, W) value reshaped to (N, C, 1, W): 1-D convolutions run as 2-D.
int unit_height(NodeCtx& ctx, int v) {
    std::vector<int64_t> s = ctx.type_of(v).shape;
    return ctx.emit_internal("reshape", {v},
                             {{"newshape", std::vector<int64_t>{s[0], s[1], 1, s[2]}}});
}

void convert_conv(NodeCtx& ctx) {
    int x = ctx.input(0);
    int w = ctx.input(1);
    if (ctx.type_of(x).shape.size() == 5 && ctx.type_of(w).shape.size() == 5)
        return convert_conv3d(ctx, x, w);
    bool one_d = ctx.type_of(x).shape.size() == 3 && ctx.type_of(w).shape.size() == 3;
    if (one_d) {
        // 1-D convolution runs as 2-D over a unit height.
        x = unit_height(ctx, x);
        w = unit_height(ctx, w);
    }
    const graph::TensorType xt = ctx.type_of(x);
    const graph::TensorType wt = ctx.type_of(w);
    TS_USER_CHECK(xt.shape.size() == 4 && wt.shape.size() == 4)
        << ctx.where() << ": only 2-D convolution (4-D input and weight) is supported, got input "
        << xt.str() << " and weight " << wt.str();
    std::vector<int64_t> kernel = {wt.shape[2], wt.shape[3]};
    const std::vector<int64_t> ones(one_d ? 1 : 2, 1);  // one per spatial axis
    std::vector<int64_t> strides = ctx.attr_ints("strides", ones);
    std::vector<int64_t> dilations = ctx.attr_ints("dilations", ones);
    std::vector<int64_t> pads;
    if (one_d) {
        std::vector<int64_t> p1 = ctx.attr_ints("pads", {0, 0});
        TS_USER_CHECK(strides.size() == 1 && dilations.size() == 1 && p1.size() == 2 &&
                      ctx.attr_str("auto_pad", "NOTSET") == "NOTSET")
            << ctx.where() << ": 1-D convolution needs 1 stride, 1 dilation, 2 pads, no auto_pad";
        strides.insert(strides.begin(), 1);
        dilations.insert(dilations.begin(), 1);
        pads = {0, p1[0], 0, p1[1]};
    } else {
        std::vector<int64_t> ks = ctx.attr_ints("kernel_shape", kernel);
        TS_USER_CHECK(ks == kernel)
            << ctx.where() << ": kernel_shape does not match the weight " << wt.str();
        TS_USER_CHECK(strides.size() == 2 && dilations.size() == 2)
            << ctx.where() << ": strides and dilations need 2 values each";
        pads = resolve_pads_2d(ctx, {xt.shape[2], xt.shape[3]}, kernel, strides, dilations);
    }
    std::vector<int> inputs = {x, w};
    if (ctx.has_input(2)) inputs.push_back(ctx.input(2));
    std::map<std::string, graph::AttrValue> attrs = {{"strides", strides},
                                                     {"padding", pads},
                                                     {"dilation", dilations},
                                                     {"groups", ctx.attr_int("group", 1)}};
    // A convolution down a column (W = 1 and a kernel of width 1: a 1-D
    // convolution written as 2-D, as jax2tf writes it) runs as one along a
    // row: the blocked conv schedule vectorizes and tiles the output width,
    // which was 1 (magika's 5x1 conv over 256 x 512 took 12 ms, 54 GFLOP/s).
    if (!one_d && xt.shape[3] == 1 && kernel[1] == 1 && xt.shape[2] > 1 && pads[1] == 0 &&
        pads[3] == 0) {
        auto to_row = [&](int v) {
            const std::vector<int64_t> s = ctx.type_of(v).shape;
            return ctx.emit_internal("reshape", {v},
                                     {{"newshape", std::vector<int64_t>{s[0], s[1], 1, s[2]}}});
        };
        inputs[0] = to_row(x);
        inputs[1] = to_row(w);
        attrs["strides"] = std::vector<int64_t>{1, strides[0]};
        attrs["dilation"] = std::vector<int64_t>{1, dilations[0]};
        attrs["padding"] = std::vector<int64_t>{0, pads[0], 0, pads[2]};
        int y = ctx.emit_internal("nn.conv2d", inputs, attrs);
        const std::vector<int64_t> s = ctx.type_of(y).shape;
        ctx.emit("reshape", {y}, {{"newshape", std::vector<int64_t>{s[0], s[1], s[3], 1}}});
        return;
    }
    if (!one_d) {
        ctx.emit("nn.conv2d", inputs, attrs);
        return;
    }
    int y = ctx.emit_internal("nn.conv2d", inputs, attrs);
    std::vector<int64_t> s = ctx.type_of(y).shape;
    ctx.emit("reshape", {y}, {{"newshape", std::vector<int64_t>{s[0], s[1], s[3]}}});
}

/// 3-D transposed convolution -> nn.conv3d_transpose.
void convert_conv_transpose3d(NodeCtx& ctx, int x, int w) {
    const size_t dims = 3;
    const graph::TensorType xt = ctx.type_of(x);
    const graph::TensorType wt = ctx.type_of(w);
    std::vector<int64_t> k(wt.shape.begin() + 2, wt.shape.end());
    std::vector<int64_t> s = ctx.attr_ints("strides", {1, 1, 1});
    std::vector<int64_t> d = ctx.attr_ints("dilations", {1, 1, 1});
    std::vector<int64_t> op = ctx.attr_ints("output_padding", {0, 0, 0});
    std::vector<int64_t> pads = ctx.attr_ints("pads", std::vector<int64_t>(2 * dims, 0));
    TS_USER_CHECK(s.size() == dims && d.size() == dims && op.size() == dims &&
                  pads.size() == 2 * dims)
        << ctx.where() << ": strides, dilations, output_padding need 3 values, pads 6";
    const std::string auto_pad = ctx.attr_str("auto_pad", "NOTSET");
    std::vector<int64_t> out_shape = ctx.attr_ints("output_shape");
    if (out_shape.size() > dims) out_shape.erase(out_shape.begin(), out_shape.end() - dims);
    if (out_shape.empty() && (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER"))
        for (size_t i = 0; i < dims; ++i) out_shape.push_back(xt.shape[i + 2] * s[i]);
    if (!out_shape.empty()) {
        TS_USER_CHECK(out_shape.size() == dims) << ctx.where() << ": output_shape needs 3 values";
        for (size_t i = 0; i < dims; ++i) {
            int64_t total =
                s[i] * (xt.shape[i + 2] - 1) + op[i] + (k[i] - 1) * d[i] + 1 - out_shape[i];
            if (total < 0) {
                op[i] -= total;
                total = 0;
            }
            pads[i] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
            pads[i + dims] = total - pads[i];
        }
    }
    std::vector<int> inputs = {x, w};
    if (ctx.has_input(2)) inputs.push_back(ctx.input(2));
    ctx.emit("nn.conv3d_transpose", inputs,
             {{"strides", s},
              {"padding", pads},
              {"dilation", d},
              {"output_padding", op},
              {"groups", ctx.attr_int("group", 1)}});
}

void convert_conv_transpose(NodeCtx& ctx) {
    int x = ctx.input(0);
    int w = ctx.input(1);
    if (ctx.type_of(x).shape.size() == 5 && ctx.type_of(w).shape.size() == 5)
        return convert_conv_transpose3d(ctx, x, w);
    bool one_d = ctx.type_of(x).shape.size() == 3 && ctx.type_of(w).shape.size() == 3;
    if (one_d) {
        x = unit_height(ctx, x);
        w = unit_height(ctx, w);
    }
    auto attr2 = [&](const std::string& key, int64_t dflt) {
        std::vector<int64_t> v = ctx.attr_ints(key, {dflt, dflt});
        if (one_d && key == "pads" && v.size() == 2) return std::vector<int64_t>{0, v[0], 0, v[1]};
        if (one_d && key == "pads") return std::vector<int64_t>{0, 0, 0, 0};
        if (one_d && v.size() == 1) v.insert(v.begin(), key == "output_padding" ? 0 : 1);
        if (one_d && v.size() == 2 && !ctx.has_attr(key)) v[0] = dflt;
        return v;
    };
    const graph::TensorType xt = ctx.type_of(x);
    const graph::TensorType wt = ctx.type_of(w);
    TS_USER_CHECK(xt.shape.size() == 4 && wt.shape.size() == 4)
        << ctx.where() << ": only 2-D transposed convolution is supported, got input " << xt.str()
        << " and weight " << wt.str();
    std::vector<int64_t> k = {wt.shape[2], wt.shape[3]};
    std::vector<int64_t> s = attr2("strides", 1);
    std::vector<int64_t> d = attr2("dilations", 1);
    std::vector<int64_t> op = attr2("output_padding", 0);
    TS_USER_CHECK(s.size() == 2 && d.size() == 2 && op.size() == 2)
        << ctx.where() << ": strides, dilations and output_padding need 2 values each";
    const std::string auto_pad = ctx.attr_str("auto_pad", "NOTSET");
    std::vector<int64_t> pads = one_d ? attr2("pads", 0) : ctx.attr_ints("pads", {0, 0, 0, 0});
    TS_USER_CHECK(pads.size() == 4) << ctx.where() << ": pads needs 4 values";
    std::vector<int64_t> out_shape = ctx.attr_ints("output_shape");
    if (one_d && out_shape.size() == 1) out_shape.insert(out_shape.begin(), 1);
    if (out_shape.size() > 2) out_shape.erase(out_shape.begin(), out_shape.end() - 2);
    if (out_shape.empty() && (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER"))
        out_shape = {xt.shape[2] * s[0], xt.shape[3] * s[1]};
    if (!out_shape.empty()) {
        TS_USER_CHECK(out_shape.size() == 2) << ctx.where() << ": output_shape needs 2 values";
        for (size_t i = 0; i < 2; ++i) {
            int64_t total =
                s[i] * (xt.shape[i + 2] - 1) + op[i] + (k[i] - 1) * d[i] + 1 - out_shape[i];
            if (total < 0) {  // the output is larger than the stride gives: pad at the end
                op[i] -= total;
                total = 0;
            }
            pads[i] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
            pads[i + 2] = total - pads[i];
        }
    }
    std::vector<int> inputs = {x, w};
    if (ctx.has_input(2)) inputs.push_back(ctx.input(2));
    std::map<std::string, graph::AttrValue> attrs = {{"strides", s},
                                                     {"padding", pads},
                                                     {"dilation", d},
                                                     {"output_padding", op},
                                                     {"groups", ctx.attr_int("group", 1)}};
    // A kernel as large as the stride (2x2 / 2 upsampling) without pads:
    // each output pixel gets one kernel tap, so the deconvolution is a 1x1
    // convolution to K*s0*s1 channels (the blocked conv kernels) followed by
    // a depth-to-space rearrangement. PP-OCRv4 det's two 2x2/2 deconvolutions
    // took 26 + 6 ms as a transposed convolution (gathers over every output).
    const bool is_const_w = ctx.constant_input(1) != nullptr;
    if (!one_d && is_const_w && k == s && d == std::vector<int64_t>{1, 1} &&
        op == std::vector<int64_t>{0, 0} && pads == std::vector<int64_t>{0, 0, 0, 0} &&
        ctx.attr_int("group", 1) == 1) {
        const int64_t N = xt.shape[0], H = xt.shape[2], W = xt.shape[3];
        const int64_t C = wt.shape[0], K = wt.shape[1];
        // w (C, K, s0, s1) -> (K, s0, s1, C) -> (K*s0*s1, C, 1, 1).
        int wk = ctx.emit_internal("transpose", {w}, {{"axes", std::vector<int64_t>{1, 2, 3, 0}}});
        wk = ctx.emit_internal("reshape", {wk},
                               {{"newshape", std::vector<int64_t>{K * s[0] * s[1], C, 1, 1}}});
        int y = ctx.emit_internal("nn.conv2d", {x, wk},
                                  {{"strides", std::vector<int64_t>{1, 1}},
                                   {"padding", std::vector<int64_t>{0, 0, 0, 0}},
                                   {"dilation", std::vector<int64_t>{1, 1}},
                                   {"groups", int64_t(1)}});
        // (N, K, s0, s1, H, W) -> (N, K, H, s0, W, s1) -> (N, K, H*s0, W*s1).
        y = ctx.emit_internal("reshape", {y},
                              {{"newshape", std::vector<int64_t>{N, K, s[0], s[1], H, W}}});
        y = ctx.emit_internal("transpose", {y}, {{"axes", std::vector<int64_t>{0, 1, 4, 2, 5, 3}}});
        const std::vector<int64_t> ys = {N, K, H * s[0], W * s[1]};
        if (!ctx.has_input(2)) {
            ctx.emit("reshape", {y}, {{"newshape", ys}});
            return;
        }
        y = ctx.emit_internal("reshape", {y}, {{"newshape", ys}});
        int b = ctx.emit_internal("reshape", {ctx.input(2)},
                                  {{"newshape", std::vector<int64_t>{1, K, 1, 1}}});
        ctx.emit("add", {y, b});
        return;
    }
    if (!one_d) {
        ctx.emit("nn.conv2d_transpose", inputs, attrs);
        return;
    }
    int y = ctx.emit_internal("nn.conv2d_transpose", inputs, attrs);
    std::vector<int64_t> ys = ctx.type_of(y).shape;
    ctx.emit("reshape", {y}, {{"newshape", std::vector<int64_t>{ys[0], ys[1], ys[3]}}});
}

}  // namespace

void add_conv_converters(ConverterTable& t) {
    t["Conv"] = convert_conv;
    t["ConvTranspose"] = convert_conv_transpose;
}

}  // namespace tessera::frontend::onnx_import
