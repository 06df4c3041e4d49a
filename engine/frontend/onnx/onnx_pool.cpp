// ONNX MaxPool -> nn.max_pool2d, GlobalAveragePool -> nn.global_avg_pool2d.
#include "engine/core/error.h"
#include "engine/frontend/onnx/onnx_context.h"

namespace tessera::frontend::onnx_import {

namespace {

void convert_max_pool(NodeCtx& ctx) {
    ctx.expect_outputs(1);  // the Indices output is not supported
    int x = ctx.input(0);
    const graph::TensorType& xt = ctx.imp.g.values[size_t(x)].type;
    TS_USER_CHECK(xt.shape.size() == 4)
        << ctx.where() << ": only 2-D pooling (4-D input) is supported, got " << xt.str();
    TS_USER_CHECK(ctx.has_attr("kernel_shape"))
        << ctx.where() << ": missing attribute kernel_shape";
    std::vector<int64_t> kernel = ctx.attr_ints("kernel_shape");
    std::vector<int64_t> strides = ctx.attr_ints("strides", {1, 1});
    std::vector<int64_t> dilations = ctx.attr_ints("dilations", {1, 1});
    TS_USER_CHECK(kernel.size() == 2 && strides.size() == 2 && dilations.size() == 2)
        << ctx.where() << ": kernel_shape, strides and dilations need 2 values each";
    std::vector<int64_t> pads =
        resolve_pads_2d(ctx, {xt.shape[2], xt.shape[3]}, kernel, strides, dilations);
    ctx.emit("nn.max_pool2d", {x},
             {{"kernel", kernel},
              {"strides", strides},
              {"padding", pads},
              {"dilation", dilations},
              {"ceil_mode", ctx.attr_int("ceil_mode", 0)}});
}

void convert_global_average_pool(NodeCtx& ctx) {
    int x = ctx.input(0);
    const graph::TensorType& xt = ctx.imp.g.values[size_t(x)].type;
    TS_USER_CHECK(xt.shape.size() == 4)
        << ctx.where() << ": only 4-D input is supported, got " << xt.str();
    ctx.emit("nn.global_avg_pool2d", {x});
}

}  // namespace

void add_pool_converters(ConverterTable& t) {
    t["MaxPool"] = convert_max_pool;
    t["GlobalAveragePool"] = convert_global_average_pool;
}

}  // namespace tessera::frontend::onnx_import
