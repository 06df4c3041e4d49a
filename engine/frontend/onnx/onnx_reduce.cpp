// ONNX reductions (Reduce*, ArgMax, ArgMin), LogSoftmax, TopK, CumSum and the
// normalizations (BatchNormalization, LayerNormalization, InstanceNormalization).
#include <algorithm>

#include "engine/core/error.h"
#include "engine/frontend/onnx/onnx_context.h"

namespace tessera::frontend::onnx_import {

namespace {

Converter reduce(const std::string& op) {
    return [op](NodeCtx& ctx) {
        int64_t rank = int64_t(ctx.input_type(0).shape.size());
        std::vector<int64_t> axes;
        bool given = false;
        if (ctx.has_attr("axes")) {
            axes = ctx.attr_ints("axes");
            given = true;
        } else if (ctx.has_input(1)) {
            axes = ctx.constant_ints(1);
            given = true;
        }
        if (axes.empty()) {
            if (given || ctx.attr_int("noop_with_empty_axes", 0) != 0) {
                if (ctx.attr_int("noop_with_empty_axes", 0) != 0) {
                    reshape_output(ctx, ctx.input_type(0).shape);
                    return;
                }
            }
            for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
        }
        for (int64_t& a : axes) a = normalize_axis(ctx, a, rank);
        std::sort(axes.begin(), axes.end());
        ctx.emit(op, {ctx.input(0)}, {{"axes", axes}, {"keepdims", ctx.attr_int("keepdims", 1)}});
    };
}

Converter arg(const std::string& op) {
    return [op](NodeCtx& ctx) {
        int64_t rank = int64_t(ctx.input_type(0).shape.size());
        ctx.emit(op, {ctx.input(0)},
                 {{"axis", normalize_axis(ctx, ctx.attr_int("axis", 0), rank)},
                  {"keepdims", ctx.attr_int("keepdims", 1)},
                  {"select_last_index", ctx.attr_int("select_last_index", 0)}});
    };
}

void convert_log_softmax(NodeCtx& ctx) {
    int64_t rank = int64_t(ctx.input_type(0).shape.size());
    TS_USER_CHECK(ctx.opset() >= 13 || rank <= 1 || ctx.attr_int("axis", 1) == rank - 1 ||
                  ctx.attr_int("axis", 1) == -1)
        << ctx.where() << ": LogSoftmax before opset 13 over several axes is not supported";
    int64_t axis = ctx.attr_int("axis", ctx.opset() >= 13 ? -1 : 1);
    ctx.emit("nn.log_softmax", {ctx.input(0)}, {{"axis", normalize_axis(ctx, axis, rank)}});
}

void convert_topk(NodeCtx& ctx) {
    int64_t rank = int64_t(ctx.input_type(0).shape.size());
    std::vector<int64_t> k = ctx.opset() < 10 ? std::vector<int64_t>{ctx.attr_int("k", 1)}
                                              : ctx.constant_ints(1);
    TS_USER_CHECK(k.size() == 1) << ctx.where() << ": K must hold one value";
    ctx.emit_outputs({0, 1}, "topk", {ctx.input(0)},
                     {{"k", k[0]},
                      {"axis", normalize_axis(ctx, ctx.attr_int("axis", -1), rank)},
                      {"largest", ctx.attr_int("largest", 1)}});
}

/// CumSum, CumProd-26.
void convert_cumulative(NodeCtx& ctx) {
    int64_t rank = int64_t(ctx.input_type(0).shape.size());
    std::vector<int64_t> axis = ctx.constant_ints(1);
    TS_USER_CHECK(axis.size() == 1) << ctx.where() << ": axis must hold one value";
    ctx.emit(ctx.node.op_type() == "CumProd" ? "cumprod" : "cumsum", {ctx.input(0)},
             {{"axis", normalize_axis(ctx, axis[0], rank)},
              {"exclusive", ctx.attr_int("exclusive", 0)},
              {"reverse", ctx.attr_int("reverse", 0)}});
}

void convert_batch_norm(NodeCtx& ctx) {
    TS_USER_CHECK(ctx.attr_int("training_mode", 0) == 0)
        << ctx.where() << ": training_mode=1 is not supported (inference only)";
    ctx.expect_outputs(1);
    std::vector<int> in;
    for (int i = 0; i < 5; ++i) in.push_back(ctx.input(i));
    ctx.emit("nn.batch_norm", in, {{"epsilon", ctx.attr_float("epsilon", 1e-5)}});
}

void convert_instance_norm(NodeCtx& ctx) {
    ctx.emit("nn.instance_norm", {ctx.input(0), ctx.input(1), ctx.input(2)},
             {{"epsilon", ctx.attr_float("epsilon", 1e-5)}});
}

void convert_layer_norm(NodeCtx& ctx) {
    int64_t rank = int64_t(ctx.input_type(0).shape.size());
    std::vector<int> in = {ctx.input(0), ctx.input(1)};
    if (ctx.has_input(2)) in.push_back(ctx.input(2));
    bool stats = (ctx.node.output_size() > 1 && !ctx.node.output(1).empty()) ||
                 (ctx.node.output_size() > 2 && !ctx.node.output(2).empty());
    std::map<std::string, graph::AttrValue> attrs = {
        {"axis", normalize_axis(ctx, ctx.attr_int("axis", -1), rank)},
        {"epsilon", ctx.attr_float("epsilon", 1e-5)}};
    if (!stats) {
        ctx.emit("nn.layer_norm", in, attrs);
        return;
    }
    attrs["stats"] = int64_t(1);
    ctx.emit_outputs({0, 1, 2}, "nn.layer_norm", in, attrs);
}

}  // namespace

void add_reduce_converters(ConverterTable& t) {
    const std::pair<const char*, const char*> reduces[] = {
        {"ReduceSum", "reduce_sum"},       {"ReduceMean", "reduce_mean"},
        {"ReduceMax", "reduce_max"},       {"ReduceMin", "reduce_min"},
        {"ReduceProd", "reduce_prod"},     {"ReduceL1", "reduce_l1"},
        {"ReduceL2", "reduce_l2"},         {"ReduceSumSquare", "reduce_sum_square"},
        {"ReduceLogSum", "reduce_log_sum"}, {"ReduceLogSumExp", "reduce_log_sum_exp"},
    };
    for (const auto& [onnx_op, op] : reduces) t[onnx_op] = reduce(op);
    t["ArgMax"] = arg("argmax");
    t["ArgMin"] = arg("argmin");
    t["LogSoftmax"] = convert_log_softmax;
    t["TopK"] = convert_topk;
    t["CumSum"] = convert_cumulative;
    t["CumProd"] = convert_cumulative;
    t["BatchNormalization"] = convert_batch_norm;
    t["InstanceNormalization"] = convert_instance_norm;
    t["LayerNormalization"] = convert_layer_norm;
}

}  // namespace tessera::frontend::onnx_import
