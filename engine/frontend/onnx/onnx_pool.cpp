// ONNX MaxPool/AveragePool -> nn.max_pool2d/nn.avg_pool2d (1-D pooling runs as
// 2-D over a unit height), GlobalAveragePool/GlobalMaxPool -> nn.global_*_pool2d.
#include "engine/core/error.h"
#include "engine/frontend/onnx/onnx_context.h"

namespace tessera::frontend::onnx_import {

namespace {

void convert_pool(NodeCtx& ctx, const std::string& op) {
    const bool want_indices = op == "nn.max_pool2d" && ctx.node.output_size() > 1 &&
                              !ctx.node.output(1).empty();
    if (!want_indices) ctx.expect_outputs(1);
    // ONNX 1.12's shape inference keeps a last ceil_mode window that starts in
    // the end padding; ONNX drops it since 1.15 (as Tessera's rule does), so
    // its inferred output shape is not checked against here.
    if (ctx.attr_int("ceil_mode", 0) != 0)
        for (const std::string& out : ctx.node.output()) ctx.imp.onnx_types.erase(out);
    int x = ctx.input(0);
    graph::TensorType xt = ctx.type_of(x);
    if (xt.shape.size() == 5) {
        TS_USER_CHECK(ctx.has_attr("kernel_shape"))
            << ctx.where() << ": missing attribute kernel_shape";
        std::vector<int64_t> kernel = ctx.attr_ints("kernel_shape");
        std::vector<int64_t> strides = ctx.attr_ints("strides", {1, 1, 1});
        std::vector<int64_t> dilations = ctx.attr_ints("dilations", {1, 1, 1});
        std::vector<int64_t> pads = resolve_pads_nd(
            ctx, std::vector<int64_t>(xt.shape.begin() + 2, xt.shape.end()), kernel, strides,
            dilations);
        std::map<std::string, graph::AttrValue> attrs = {{"kernel", kernel},
                                                         {"strides", strides},
                                                         {"padding", pads},
                                                         {"dilation", dilations},
                                                         {"ceil_mode", ctx.attr_int("ceil_mode", 0)}};
        if (op == "nn.avg_pool2d") {
            attrs["count_include_pad"] = ctx.attr_int("count_include_pad", 0);
            ctx.emit("nn.avg_pool3d", {x}, attrs);
        } else {
            ctx.emit("nn.max_pool3d", {x}, attrs);
        }
        return;
    }
    TS_USER_CHECK(xt.shape.size() == 4 || xt.shape.size() == 3)
        << ctx.where() << ": only 1-D, 2-D and 3-D pooling (3-D, 4-D or 5-D input) is supported, got "
        << xt.str();
    TS_USER_CHECK(ctx.has_attr("kernel_shape"))
        << ctx.where() << ": missing attribute kernel_shape";
    bool one_d = xt.shape.size() == 3;
    std::vector<int64_t> kernel = ctx.attr_ints("kernel_shape");
    std::vector<int64_t> strides = ctx.attr_ints("strides", std::vector<int64_t>(kernel.size(), 1));
    std::vector<int64_t> dilations =
        ctx.attr_ints("dilations", std::vector<int64_t>(kernel.size(), 1));
    size_t rank = one_d ? 1 : 2;
    TS_USER_CHECK(kernel.size() == rank && strides.size() == rank && dilations.size() == rank)
        << ctx.where() << ": kernel_shape, strides and dilations need " << rank << " values each";
    std::vector<int64_t> pads;
    if (one_d) {
        kernel.insert(kernel.begin(), 1);
        strides.insert(strides.begin(), 1);
        dilations.insert(dilations.begin(), 1);
        std::vector<int64_t> p1 = ctx.attr_ints("pads", {0, 0});
        const std::string auto_pad = ctx.attr_str("auto_pad", "NOTSET");
        TS_USER_CHECK(auto_pad == "NOTSET" || auto_pad == "VALID")
            << ctx.where() << ": auto_pad " << auto_pad << " is not supported for 1-D pooling";
        TS_USER_CHECK(p1.size() == 2) << ctx.where() << ": pads needs 2 values";
        pads = auto_pad == "VALID" ? std::vector<int64_t>{0, 0, 0, 0}
                                   : std::vector<int64_t>{0, p1[0], 0, p1[1]};
        x = ctx.emit_internal("reshape", {x},
                              {{"newshape", std::vector<int64_t>{xt.shape[0], xt.shape[1], 1,
                                                                 xt.shape[2]}}});
        xt = ctx.type_of(x);
    } else {
        pads = resolve_pads_2d(ctx, {xt.shape[2], xt.shape[3]}, kernel, strides, dilations);
    }
    std::map<std::string, graph::AttrValue> attrs = {{"kernel", kernel},
                                                     {"strides", strides},
                                                     {"padding", pads},
                                                     {"dilation", dilations},
                                                     {"ceil_mode", ctx.attr_int("ceil_mode", 0)}};
    if (op == "nn.avg_pool2d") attrs["count_include_pad"] = ctx.attr_int("count_include_pad", 0);
    if (want_indices) {
        TS_USER_CHECK(!one_d) << ctx.where() << ": the Indices output needs 2-D pooling";
        ctx.emit_outputs({0}, op, {x}, attrs);
        attrs["storage_order"] = ctx.attr_int("storage_order", 0);
        ctx.emit_outputs({1}, "nn.max_pool2d_indices", {x}, attrs);
        return;
    }
    if (!one_d) {
        ctx.emit(op, {x}, attrs);
        return;
    }
    int y = ctx.emit_internal(op, {x}, attrs);
    std::vector<int64_t> s = ctx.type_of(y).shape;
    ctx.emit("reshape", {y}, {{"newshape", std::vector<int64_t>{s[0], s[1], s[3]}}});
}

Converter global_pool(const std::string& op) {
    return [op](NodeCtx& ctx) {
        int x = ctx.input(0);
        const std::vector<int64_t> s = ctx.type_of(x).shape;
        TS_USER_CHECK(s.size() == 3 || s.size() == 4)
            << ctx.where() << ": only 3-D and 4-D input is supported, got "
            << ctx.type_of(x).str();
        if (s.size() == 4) {
            ctx.emit(op, {x});
            return;
        }
        // (N, C, L): pooled as (N, C, 1, L), then back to (N, C, 1).
        x = ctx.emit_internal("reshape", {x},
                              {{"newshape", std::vector<int64_t>{s[0], s[1], 1, s[2]}}});
        int y = ctx.emit_internal(op, {x});
        ctx.emit("reshape", {y}, {{"newshape", std::vector<int64_t>{s[0], s[1], 1}}});
    };
}

}  // namespace

void add_pool_converters(ConverterTable& t) {
    t["MaxPool"] = [](NodeCtx& ctx) { convert_pool(ctx, "nn.max_pool2d"); };
    t["AveragePool"] = [](NodeCtx& ctx) { convert_pool(ctx, "nn.avg_pool2d"); };
    t["GlobalAveragePool"] = global_pool("nn.global_avg_pool2d");
    t["GlobalMaxPool"] = global_pool("nn.global_max_pool2d");
}

}  // namespace tessera::frontend::onnx_import
