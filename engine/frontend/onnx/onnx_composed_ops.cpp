// ONNX ops Tessera imports as compositions of other ONNX ops (onnx_compose.h),
// each as ONNX's reference implementation computes it: LpNormalization,
// LpPool, GroupNormalization-18/21, CenterCropPad-18, AffineGrid-20, SwiGLU-28,
// CausalConvWithState-26, TensorScatter-24, Col2Im-18.
#include <numeric>

#include "engine/core/checked_math.h"
#include "engine/core/error.h"
#include "engine/frontend/onnx/onnx_compose.h"

namespace tessera::frontend::onnx_import {

namespace {

/// x / ||x||_p along axis (p = 1 or 2); 0 where the norm is 0.
void convert_lp_normalization(NodeCtx& ctx) {
    Composer c(ctx);
    ctx.expect_outputs(1);
    const std::string x = ctx.node.input(0);
    const int64_t rank = int64_t(c.type(x).shape.size());
    const int64_t axis = normalize_axis(ctx, ctx.attr_int("axis", -1), rank);
    const int64_t p = ctx.attr_int("p", 2);
    TS_USER_CHECK(p == 1 || p == 2) << ctx.where() << ": p must be 1 or 2, got " << p;
    const std::string norm =
        c.op(p == 1 ? "ReduceL1" : "ReduceL2", {x}, {ints_attr("axes", {axis})});
    const std::string zero = c.op("Equal", {norm, c.scalar(0.0f)});
    c.op("Where", {zero, c.scalar(0.0f), c.op("Div", {x, norm})}, {}, ctx.node.output(0));
}

/// (sum over the window of |x|^p)^(1/p): the average pool of |x|^p with the
/// padding counted, times the window size (ONNX's reference does the same).
void convert_lp_pool(NodeCtx& ctx) {
    Composer c(ctx);
    ctx.expect_outputs(1);
    const std::string x = ctx.node.input(0);
    const int64_t p = ctx.attr_int("p", 2);
    TS_USER_CHECK(p >= 1) << ctx.where() << ": p must be at least 1, got " << p;
    const std::vector<int64_t> kernel = ctx.attr_ints("kernel_shape");
    TS_USER_CHECK(!kernel.empty()) << ctx.where() << ": kernel_shape is required";
    std::vector<onnx::AttributeProto> attrs = {ints_attr("kernel_shape", kernel),
                                               int_attr("count_include_pad", 1)};
    for (const char* a : {"strides", "pads", "dilations"})
        if (ctx.has_attr(a)) attrs.push_back(ints_attr(a, ctx.attr_ints(a)));
    if (ctx.attr_int("ceil_mode", 0) != 0) attrs.push_back(int_attr("ceil_mode", 1));
    if (ctx.has_attr("auto_pad")) {
        onnx::AttributeProto a;
        a.set_name("auto_pad");
        a.set_type(onnx::AttributeProto::STRING);
        a.set_s(ctx.attr_str("auto_pad"));
        attrs.push_back(a);
    }
    const int64_t window = std::accumulate(kernel.begin(), kernel.end(), int64_t(1),
                                           [](int64_t a, int64_t b) { return a * b; });
    const std::string powered = c.op("Pow", {c.op("Abs", {x}), c.scalar(float(p))});
    const std::string sum =
        c.op("Mul", {c.op("AveragePool", {powered}, attrs), c.scalar(float(window))});
    c.op("Pow", {sum, c.scalar(float(1.0 / double(p)))}, {}, ctx.node.output(0));
}

/// GroupNormalization: (x - mean) / sqrt(var + eps) over each group of
/// channels, then scale and bias per channel (opset 21) or per group (18).
void convert_group_normalization(NodeCtx& ctx) {
    Composer c(ctx);
    ctx.expect_outputs(1);
    const std::string x = ctx.node.input(0);
    const std::vector<int64_t> shape = c.type(x).shape;
    TS_USER_CHECK(shape.size() >= 2) << ctx.where() << ": X must have rank >= 2";
    const int64_t channels = shape[1], groups = ctx.attr_int("num_groups", 0);
    TS_USER_CHECK(groups >= 1 && channels % groups == 0)
        << ctx.where() << ": num_groups " << groups << " does not divide " << channels
        << " channels";
    TS_USER_CHECK(ctx.attr_int("stash_type", 1) == 1)
        << ctx.where() << ": stash_type other than 1 (float) is not supported";
    const std::string grouped = c.op("Reshape", {x, c.ints({0, groups, -1})});
    const std::string mean = c.op("ReduceMean", {grouped}, {ints_attr("axes", {2})});
    const std::string dev = c.op("Sub", {grouped, mean});
    const std::string var = c.op("ReduceMean", {c.op("Mul", {dev, dev})}, {ints_attr("axes", {2})});
    const std::string eps = c.scalar(float(ctx.attr_float("epsilon", 1e-5)));
    const std::string normed = c.op(
        "Reshape", {c.op("Div", {dev, c.op("Sqrt", {c.op("Add", {var, eps})})}), c.ints(shape)});
    // scale and bias: [C] per channel, or [G] per group (opset 18).
    std::vector<int64_t> per(shape.size(), 1);
    per[1] = channels;
    auto per_channel = [&](const std::string& v) {
        const int64_t n = c.type(v).num_elements();
        TS_USER_CHECK(n == channels || n == groups)
            << ctx.where() << ": scale and bias must have " << channels << " (channels) or "
            << groups << " (groups) values, got " << n;
        if (n == channels) return c.op("Reshape", {v, c.ints(per)});
        const std::string g = c.op("Reshape", {v, c.ints({groups, 1})});
        return c.op("Reshape",
                    {c.op("Expand", {g, c.ints({groups, channels / groups})}), c.ints(per)});
    };
    c.op("Add",
         {c.op("Mul", {normed, per_channel(ctx.node.input(1))}), per_channel(ctx.node.input(2))},
         {}, ctx.node.output(0));
}

/// Crops (centered, the start rounded down) or zero-pads each of `axes`
/// to the size `shape` gives.
void convert_center_crop_pad(NodeCtx& ctx) {
    Composer c(ctx);
    ctx.expect_outputs(1);
    std::string x = ctx.node.input(0);
    const std::vector<int64_t> in = c.type(x).shape;
    const int64_t rank = int64_t(in.size());
    const std::vector<int64_t> want = ctx.constant_ints(1);
    std::vector<int64_t> axes = ctx.attr_ints("axes");
    if (axes.empty())
        for (int64_t a = 0; a < rank; ++a) axes.push_back(a);
    TS_USER_CHECK(axes.size() == want.size())
        << ctx.where() << ": shape has " << want.size() << " values for " << axes.size() << " axes";
    std::vector<int64_t> begins, ends, crop_axes, pads(size_t(2 * rank), 0);
    for (size_t i = 0; i < axes.size(); ++i) {
        const int64_t a = normalize_axis(ctx, axes[i], rank), dim = in[size_t(a)];
        TS_USER_CHECK(want[i] >= 0) << ctx.where() << ": negative size " << want[i];
        if (want[i] < dim) {
            const int64_t start = (dim - want[i]) / 2;
            crop_axes.push_back(a);
            begins.push_back(start);
            ends.push_back(start + want[i]);
        } else if (want[i] > dim) {
            const int64_t before = (want[i] - dim) / 2;
            pads[size_t(a)] = before;
            pads[size_t(a + rank)] = want[i] - dim - before;
        }
    }
    if (!crop_axes.empty()) x = c.op("Slice", {x, c.ints(begins), c.ints(ends), c.ints(crop_axes)});
    c.op("Pad", {x, c.ints(pads)}, {}, ctx.node.output(0));
}

/// The sampling grid of theta [N, k, k + 1] over the constant size
/// [N, C, (D,) H, W]: theta times each point (x, y, (z,) 1) of the
/// normalized base grid.
void convert_affine_grid(NodeCtx& ctx) {
    Composer c(ctx);
    ctx.expect_outputs(1);
    const std::vector<int64_t> size = ctx.constant_ints(1);
    TS_USER_CHECK(size.size() == 4 || size.size() == 5)
        << ctx.where() << ": size must be [N, C, H, W] or [N, C, D, H, W]";
    const std::vector<int64_t> dims(size.begin() + 2, size.end());  // (D,) H, W
    const int64_t k = int64_t(dims.size());
    const bool align = ctx.attr_int("align_corners", 0) != 0;
    int64_t points = 1;
    for (int64_t d : dims) {
        TS_USER_CHECK(d >= 1) << ctx.where() << ": size must be positive";
        points *= d;
    }
    check_constant_size(ctx, {points, k + 1}, "the base grid");
    auto coord = [&](int64_t i, int64_t n) {
        if (align) return n == 1 ? -1.0 : -1.0 + 2.0 * double(i) / double(n - 1);
        return -1.0 + (2.0 * double(i) + 1.0) / double(n);
    };
    // base[k + 1, points]: row r is the coordinate along dims[k - 1 - r]
    // (x first), the last row ones.
    std::vector<double> base(size_t((k + 1) * points));
    for (int64_t pt = 0; pt < points; ++pt) {
        int64_t rest = pt;
        for (int64_t d = k - 1; d >= 0; --d) {
            const int64_t i = rest % dims[size_t(d)];
            rest /= dims[size_t(d)];
            base[size_t((k - 1 - d) * points + pt)] = coord(i, dims[size_t(d)]);
        }
        base[size_t(k * points + pt)] = 1.0;
    }
    const std::string grid = c.floats({k + 1, points}, base);
    const std::string moved = c.op("MatMul", {ctx.node.input(0), grid});  // [N, k, points]
    std::vector<int64_t> out = {size[0]};
    out.insert(out.end(), dims.begin(), dims.end());
    out.push_back(k);
    c.op("Reshape", {c.op("Transpose", {moved}, {ints_attr("perm", {0, 2, 1})}), c.ints(out)}, {},
         ctx.node.output(0));
}

/// SwiGLU-28: A sigmoid(alpha A) B.
void convert_swiglu(NodeCtx& ctx) {
    Composer c(ctx);
    ctx.expect_outputs(1);
    const std::string a = ctx.node.input(0);
    const float alpha = float(ctx.attr_float("alpha", 1.0));
    const std::string gate = c.op("Mul", {a, c.op("Sigmoid", {c.op("Mul", {a, c.scalar(alpha)})})});
    c.op("Mul", {gate, ctx.node.input(1)}, {}, ctx.node.output(0));
}

/// CausalConvWithState: a depthwise 1-D convolution over the input with
/// past_state (zeros without one) prepended, an optional SiLU, and the last
/// k - 1 positions of the padded input as present_state.
void convert_causal_conv_with_state(NodeCtx& ctx) {
    Composer c(ctx);
    const std::string x = ctx.node.input(0), w = ctx.node.input(1);
    const std::vector<int64_t> xs = c.type(x).shape, ws = c.type(w).shape;
    TS_USER_CHECK(xs.size() == 3 && ws.size() == 3 && ws[0] == xs[1] && ws[1] == 1)
        << ctx.where() << ": input must be (batch, channels, length) and weight (channels, 1, k)";
    const int64_t k = ws[2];
    const std::string activation = ctx.attr_str("activation", "none");
    TS_USER_CHECK(activation == "none" || activation == "silu" || activation == "swish")
        << ctx.where() << ": activation '" << activation << "' is not none, silu or swish";
    std::string padded = x;
    if (ctx.has_input(3)) {
        padded = c.op("Concat", {ctx.node.input(3), x}, {int_attr("axis", 2)});
    } else if (k > 1) {
        padded = c.op("Pad", {x, c.ints({0, 0, k - 1, 0, 0, 0})});
    }
    std::vector<std::string> conv_in = {padded, w};
    if (ctx.has_input(2)) conv_in.push_back(ctx.node.input(2));
    const bool silu = activation != "none";
    std::string y =
        c.op("Conv", conv_in, {int_attr("group", xs[1])}, silu ? "" : ctx.node.output(0));
    if (silu) c.op("Mul", {y, c.op("Sigmoid", {y})}, {}, ctx.node.output(0));
    if (ctx.node.output_size() > 1 && !ctx.node.output(1).empty()) {
        const int64_t len = c.type(padded).shape[2];
        c.op("Slice", {padded, c.ints({len - (k - 1)}), c.ints({len}), c.ints({2})}, {},
             ctx.node.output(1));
    }
}

/// TensorScatter (a KV-cache write): update's positions along `axis` go to
/// write_indices[b] + i of each batch's cache (modulo its length when
/// circular); the rest of the cache stays.
void convert_tensor_scatter(NodeCtx& ctx) {
    Composer c(ctx);
    ctx.expect_outputs(1);
    const std::string cache = ctx.node.input(0), update = ctx.node.input(1);
    const std::vector<int64_t> cs = c.type(cache).shape, us = c.type(update).shape;
    const int64_t rank = int64_t(cs.size());
    const int64_t axis = normalize_axis(ctx, ctx.attr_int("axis", -2), rank);
    TS_USER_CHECK(axis >= 1 && us.size() == cs.size())
        << ctx.where() << ": update must have the cache's rank and axis must not be the batch axis";
    const std::string mode = ctx.attr_str("mode", "linear");
    TS_USER_CHECK(mode == "linear" || mode == "circular")
        << ctx.where() << ": mode '" << mode << "' is not linear or circular";
    // index[b, ..., i, ...] = write_indices[b] + i along axis, as ScatterElements indices.
    std::vector<int64_t> iota(static_cast<size_t>(us[size_t(axis)]));
    for (size_t i = 0; i < iota.size(); ++i) iota[i] = int64_t(i);
    std::vector<int64_t> iota_shape(size_t(rank), 1), start_shape(size_t(rank), 1);
    iota_shape[size_t(axis)] = us[size_t(axis)];
    start_shape[0] = us[0];
    std::string index = c.op("Reshape", {c.ints(iota), c.ints(iota_shape)});
    if (ctx.has_input(2)) {
        const std::string start =
            c.op("Reshape",
                 {c.op("Cast", {ctx.node.input(2)}, {int_attr("to", 7)}), c.ints(start_shape)});
        index = c.op("Add", {index, start});
    }
    if (mode == "circular") index = c.op("Mod", {index, c.ints({cs[size_t(axis)]})});
    index = c.op("Expand", {index, c.ints(us)});
    c.op("ScatterElements", {cache, index, update}, {int_attr("axis", axis)}, ctx.node.output(0));
}

/// Col2Im: the column blocks summed back into the image (2-D or more), as a
/// grouped transposed convolution whose kernel picks block position k for
/// input channel c * K + k (K = the block's size).
void convert_col2im(NodeCtx& ctx) {
    Composer c(ctx);
    ctx.expect_outputs(1);
    const std::string x = ctx.node.input(0);
    const std::vector<int64_t> xs = c.type(x).shape;
    const std::vector<int64_t> image = ctx.constant_ints(1), block = ctx.constant_ints(2);
    const size_t nd = image.size();
    TS_USER_CHECK(xs.size() == 3 && nd >= 1 && block.size() == nd)
        << ctx.where() << ": needs input (N, C * block size, L) and image_shape and block_shape "
        << "of the same length";
    for (int64_t b : block) TS_USER_CHECK(b >= 1) << ctx.where() << ": block_shape values must be >= 1";
    const int64_t kk = checked_elements(block);
    TS_USER_CHECK(kk > 0) << ctx.where() << ": the block is too large";
    TS_USER_CHECK(xs[1] % kk == 0) << ctx.where() << ": input channels " << xs[1]
                                   << " are not a multiple of the block size " << kk;
    const int64_t channels = xs[1] / kk;
    const std::vector<int64_t> strides = ctx.attr_ints("strides", std::vector<int64_t>(nd, 1));
    const std::vector<int64_t> dilations = ctx.attr_ints("dilations", std::vector<int64_t>(nd, 1));
    const std::vector<int64_t> pads = ctx.attr_ints("pads", std::vector<int64_t>(2 * nd, 0));
    TS_USER_CHECK(strides.size() == nd && dilations.size() == nd && pads.size() == 2 * nd)
        << ctx.where() << ": strides and dilations need " << nd << " values, pads " << 2 * nd;
    std::vector<int64_t> blocks(nd);
    for (size_t d = 0; d < nd; ++d) {
        TS_USER_CHECK(strides[d] >= 1 && dilations[d] >= 1)
            << ctx.where() << ": bad stride or dilation";
        blocks[d] =
            (image[d] + pads[d] + pads[d + nd] - dilations[d] * (block[d] - 1) - 1) / strides[d] + 1;
        TS_USER_CHECK(blocks[d] >= 1) << ctx.where() << ": the block does not fit the image";
    }
    const int64_t total = checked_elements(blocks);
    TS_USER_CHECK(total == xs[2]) << ctx.where() << ": " << xs[2]
                                  << " blocks do not tile the image (" << total << " fit)";
    std::vector<int64_t> kernel_shape = {xs[1], 1};
    kernel_shape.insert(kernel_shape.end(), block.begin(), block.end());
    check_constant_size(ctx, kernel_shape, "the block selection kernel");
    std::vector<double> ones(size_t(xs[1] * kk), 0.0);
    for (int64_t ch = 0; ch < xs[1]; ++ch) ones[size_t(ch * kk + ch % kk)] = 1.0;
    const std::string kernel = c.floats(kernel_shape, ones);
    std::vector<int64_t> grid_shape = {xs[0], xs[1]};
    grid_shape.insert(grid_shape.end(), blocks.begin(), blocks.end());
    const std::string grid = c.op("Reshape", {x, c.ints(grid_shape)});
    c.op("ConvTranspose", {grid, kernel},
         {int_attr("group", channels), ints_attr("strides", strides),
          ints_attr("dilations", dilations), ints_attr("pads", pads),
          ints_attr("kernel_shape", block)},
         ctx.node.output(0));
}

}  // namespace

void add_composed_converters(ConverterTable& t) {
    t["LpNormalization"] = convert_lp_normalization;
    t["LpPool"] = convert_lp_pool;
    t["GroupNormalization"] = convert_group_normalization;
    t["CenterCropPad"] = convert_center_crop_pad;
    t["AffineGrid"] = convert_affine_grid;
    t["SwiGLU"] = convert_swiglu;
    t["CausalConvWithState"] = convert_causal_conv_with_state;
    t["TensorScatter"] = convert_tensor_scatter;
    t["Col2Im"] = convert_col2im;
}

}  // namespace tessera::frontend::onnx_import
