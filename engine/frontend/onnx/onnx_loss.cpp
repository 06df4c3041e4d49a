// ONNX NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (expanded at import
// into log_softmax, gather_elements, take, where and reductions) and the
// training-mode forms of BatchNormalization (batch statistics, running-stat updates).
#include <set>

#include "engine/core/error.h"
#include "engine/frontend/onnx/onnx_context.h"
#include "engine/frontend/onnx/onnx_gradient.h"
#include "engine/frontend/onnx/onnx_index.h"

namespace tessera::frontend::onnx_import {

namespace {

using graph::DType;
using Attrs = std::map<std::string, graph::AttrValue>;

// A generated constant graph value holding `c`.
int constant_value(NodeCtx& ctx, ConstTensor c) {
    return ctx.imp.value(ctx.imp.define_helper_constant(ctx.name, std::move(c)), ctx.where());
}

// A rank-0 constant of dtype t.
int scalar(NodeCtx& ctx, DType t, double v) { return constant_value(ctx, make_tensor({t, {}}, {v})); }

// Emits `op` as an internal step, or as ONNX output `out` when out >= 0.
int step(NodeCtx& ctx, int out, const std::string& op, std::vector<int> in, Attrs attrs = {}) {
    if (out < 0) return ctx.emit_internal(op, std::move(in), std::move(attrs));
    return ctx.emit_outputs({out}, op, std::move(in), std::move(attrs))[0];
}

bool is_float(DType t) { return t == DType::Float32 || t == DType::Float64; }

// Checks the loss operands: x (N, C, d...) float, target (N, d...) int64/int32,
// weight (C) of x's dtype; a constant target must hold class indices in
// [0, C) or ignore_index.
void check_loss_operands(NodeCtx& ctx, const graph::TensorType& x, int target_input,
                         const graph::TensorType& target, const graph::TensorType* weight,
                         bool has_ii, int64_t ii) {
    TS_USER_CHECK(is_float(x.dtype) && x.shape.size() >= 2)
        << ctx.where() << ": input 0 must be a float tensor of shape (N, C, d1, ...), got "
        << x.str();
    TS_USER_CHECK(target.dtype == DType::Int64 || target.dtype == DType::Int32)
        << ctx.where() << ": the target must be int64 or int32, got " << target.str();
    std::vector<int64_t> want = x.shape;
    want.erase(want.begin() + 1);
    graph::TensorType expected{target.dtype, want};
    TS_USER_CHECK(target.shape == want)
        << ctx.where() << ": the target must have shape (N, d1, ...) = " << expected.str()
        << " for input " << x.str() << ", got " << target.str();
    const int64_t classes = x.shape[1];
    if (weight) {
        TS_USER_CHECK(weight->dtype == x.dtype && weight->shape == std::vector<int64_t>{classes})
            << ctx.where() << ": the weight must have shape (" << classes << ") and dtype "
            << graph::dtype_name(x.dtype) << ", got " << weight->str();
    }
    if (const ConstTensor* t = ctx.constant_input(target_input)) {
        std::vector<double> v = constant_values(*t);
        for (size_t i = 0; i < v.size(); ++i) {
            int64_t c = int64_t(v[i]);
            if (has_ii && c == ii) continue;
            TS_USER_CHECK(c >= 0 && c < classes)
                << ctx.where() << ": target element " << i << " is class " << c
                << ", outside [0, " << classes << ")"
                << (has_ii ? " and not ignore_index " + std::to_string(ii) : std::string());
        }
    }
}

// Emits the negative log-likelihood loss of log-probabilities `x` (N, C, d...)
// at `target` (N, d...) with optional class `weight` (-1 when absent) as ONNX
// output `out`, following the node's reduction and ignore_index attributes.
void emit_nll(NodeCtx& ctx, int x, int target, int weight, int target_input, int out) {
    const graph::TensorType xt = ctx.type_of(x);
    const graph::TensorType tt = ctx.type_of(target);
    const std::string reduction = ctx.attr_str("reduction", "mean");
    TS_USER_CHECK(reduction == "none" || reduction == "sum" || reduction == "mean")
        << ctx.where() << ": reduction must be none, sum or mean, got '" << reduction << "'";
    const bool has_ii = ctx.has_attr("ignore_index");
    const int64_t ii = ctx.attr_int("ignore_index", 0);
    graph::TensorType wt;
    if (weight >= 0) wt = ctx.type_of(weight);
    check_loss_operands(ctx, xt, target_input, tt, weight >= 0 ? &wt : nullptr, has_ii, ii);
    const DType ft = xt.dtype;

    // Ignored positions read class 0 (any valid class) and get weight 0.
    int mask = -1, safe = target;
    if (has_ii) {
        mask = step(ctx, -1, "equal", {target, scalar(ctx, tt.dtype, double(ii))});
        safe = step(ctx, -1, "where", {mask, scalar(ctx, tt.dtype, 0), target});
    }
    std::vector<int64_t> unsq = tt.shape;
    unsq.insert(unsq.begin() + 1, 1);
    int idx = step(ctx, -1, "reshape", {safe}, {{"newshape", unsq}});
    int picked = step(ctx, -1, "gather_elements", {x, idx}, {{"axis", int64_t(1)}});
    picked = step(ctx, -1, "reshape", {picked}, {{"newshape", tt.shape}});

    // Per-element weights: weight[target], 0 where ignored; none when all are 1.
    int w = -1;
    if (weight >= 0) {
        w = step(ctx, -1, "take", {weight, safe}, {{"axis", int64_t(0)}});
        if (has_ii) w = step(ctx, -1, "where", {mask, scalar(ctx, ft, 0), w});
    } else if (has_ii) {
        w = step(ctx, -1, "where", {mask, scalar(ctx, ft, 0), scalar(ctx, ft, 1)});
    }
    const bool reduce = reduction != "none";
    int loss;
    if (w < 0) {
        loss = step(ctx, reduce ? -1 : out, "negative", {picked});
    } else {
        int neg_w = step(ctx, -1, "negative", {w});
        loss = step(ctx, reduce ? -1 : out, "multiply", {picked, neg_w});
    }
    if (!reduce) return;
    std::vector<int64_t> all;
    for (size_t i = 0; i < tt.shape.size(); ++i) all.push_back(int64_t(i));
    const Attrs sum_all = {{"axes", all}, {"keepdims", int64_t(0)}};
    if (reduction == "sum") {
        step(ctx, out, "reduce_sum", {loss}, sum_all);
    } else if (w < 0) {
        step(ctx, out, "reduce_mean", {loss}, sum_all);
    } else {
        // Mean over the weights of the non-ignored targets (NaN when all are ignored).
        int num = step(ctx, -1, "reduce_sum", {loss}, sum_all);
        int den = step(ctx, -1, "reduce_sum", {w}, sum_all);
        step(ctx, out, "divide", {num, den});
    }
}

void convert_nll_loss(NodeCtx& ctx) {
    ctx.expect_outputs(1);
    int weight = ctx.has_input(2) ? ctx.input(2) : -1;
    emit_nll(ctx, ctx.input(0), ctx.input(1), weight, 1, 0);
}

void convert_softmax_cross_entropy(NodeCtx& ctx) {
    ctx.expect_outputs(2);
    const graph::TensorType& st = ctx.input_type(0);
    TS_USER_CHECK(is_float(st.dtype) && st.shape.size() >= 2)
        << ctx.where() << ": scores must be a float tensor of shape (N, C, d1, ...), got "
        << st.str();
    // Output 1 (log_prob) gets a generated name when the model does not use it.
    int log_prob = ctx.emit_outputs({1}, "nn.log_softmax", {ctx.input(0)}, {{"axis", int64_t(1)}})[0];
    int weight = ctx.has_input(2) ? ctx.input(2) : -1;
    emit_nll(ctx, log_prob, ctx.input(1), weight, 1, 0);
}

// BatchNormalization with training_mode=1: normalizes with the batch mean and
// (population) variance over all axes but 1, and outputs the running
// statistics input * momentum + batch * (1 - momentum).
void convert_batch_norm_training(NodeCtx& ctx) {
    ctx.expect_outputs(3);
    const graph::TensorType xt = ctx.input_type(0);
    TS_USER_CHECK(is_float(xt.dtype) && xt.shape.size() >= 2)
        << ctx.where() << ": input must be a float tensor of rank >= 2, got " << xt.str();
    const int64_t c = xt.shape[1];
    std::vector<int64_t> axes, keep(xt.shape.size(), 1);
    keep[1] = c;
    for (size_t i = 0; i < xt.shape.size(); ++i)
        if (i != 1) axes.push_back(int64_t(i));
    int x = ctx.input(0);
    const Attrs mean_attrs = {{"axes", axes}, {"keepdims", int64_t(1)}};
    int mean = step(ctx, -1, "reduce_mean", {x}, mean_attrs);
    int centered = step(ctx, -1, "subtract", {x, mean});
    int sq = step(ctx, -1, "multiply", {centered, centered});
    int var = step(ctx, -1, "reduce_mean", {sq}, mean_attrs);
    const Attrs flat = {{"newshape", std::vector<int64_t>{c}}};
    int mean_c = step(ctx, -1, "reshape", {mean}, flat);
    int var_c = step(ctx, -1, "reshape", {var}, flat);
    std::vector<int> in = {x, ctx.input(1), ctx.input(2), mean_c, var_c};
    ctx.emit_outputs({0}, "nn.batch_norm", in, {{"epsilon", ctx.attr_float("epsilon", 1e-5)}});

    const double momentum = ctx.attr_float("momentum", 0.9);
    const int outs[2][2] = {{1, 3}, {2, 4}};  // (ONNX output, running-stat input)
    const int batch[2] = {mean_c, var_c};
    for (int k = 0; k < 2; ++k) {
        const int o = outs[k][0];
        if (o >= ctx.node.output_size() || ctx.node.output(o).empty()) continue;
        int running = ctx.input(outs[k][1]);
        TS_USER_CHECK(ctx.type_of(running) == ctx.type_of(batch[k]))
            << ctx.where() << ": input " << outs[k][1] << " must be "
            << ctx.type_of(batch[k]).str() << ", got " << ctx.type_of(running).str();
        int a = step(ctx, -1, "multiply", {running, scalar(ctx, xt.dtype, momentum)});
        int b = step(ctx, -1, "multiply", {batch[k], scalar(ctx, xt.dtype, 1.0 - momentum)});
        step(ctx, o, "add", {a, b});
    }
}

}  // namespace

void add_loss_converters(ConverterTable& t) {
    t["NegativeLogLikelihoodLoss"] = convert_nll_loss;
    t["SoftmaxCrossEntropyLoss"] = convert_softmax_cross_entropy;
    // Training mode extends the inference converter (onnx_reduce.cpp), registered before.
    auto inference = t.find("BatchNormalization");
    TS_CHECK(inference != t.end()) << "add_reduce_converters must run before add_loss_converters";
    t["BatchNormalization"] = [infer = inference->second](NodeCtx& ctx) {
        if (ctx.attr_int("training_mode", 0) != 0)
            convert_batch_norm_training(ctx);
        else
            infer(ctx);
    };
    add_gradient_converters(t);
}

}  // namespace tessera::frontend::onnx_import
