// ONNX elementwise ops: unary math and activations, Clip, Cast, variadic
// Sum/Mean/Max/Min, comparisons, logic, Where, Pow, Mod, PRelu.
#include <cstring>

#include "engine/core/error.h"
#include "engine/frontend/onnx/onnx_context.h"

namespace tessera::frontend::onnx_import {

namespace {

using Attrs = std::map<std::string, graph::AttrValue>;

Converter unary(const std::string& op, std::vector<std::pair<std::string, double>> floats = {},
                std::vector<std::string> strings = {}) {
    return [op, floats, strings](NodeCtx& ctx) {
        Attrs attrs;
        for (const auto& [key, dflt] : floats) attrs[key] = ctx.attr_float(key, dflt);
        for (const auto& key : strings)
            if (ctx.has_attr(key)) attrs[key] = ctx.attr_str(key);
        ctx.emit(op, {ctx.input(0)}, attrs);
    };
}

Converter binary(const std::string& op) {
    return [op](NodeCtx& ctx) {
        Attrs attrs;
        if (op == "mod") attrs["fmod"] = ctx.attr_int("fmod", 0);
        ctx.emit(op, {ctx.input(0), ctx.input(1)}, attrs);
    };
}

// Sum/Mean/Max/Min of any number of inputs: a chain of binary ops.
Converter variadic(const std::string& op, bool mean) {
    return [op, mean](NodeCtx& ctx) {
        int n = ctx.node.input_size();
        TS_USER_CHECK(n >= 1) << ctx.where() << ": needs at least one input";
        if (n == 1 && !mean) {
            ctx.emit("reshape", {ctx.input(0)}, {{"newshape", ctx.input_type(0).shape}});
            return;
        }
        int acc = ctx.input(0);
        for (int i = 1; i < n; ++i) {
            bool last = i == n - 1 && !mean;
            if (last)
                ctx.emit(op, {acc, ctx.input(i)});
            else
                acc = ctx.emit_internal(op, {acc, ctx.input(i)});
        }
        if (!mean) return;
        const graph::TensorType& t = ctx.type_of(acc);
        TS_USER_CHECK(t.dtype == graph::DType::Float32)
            << ctx.where() << ": Mean needs float32 inputs, got " << t.str();
        float scale = 1.0f / float(n);
        ConstTensor c;
        c.type = {graph::DType::Float32, {}};
        auto data = std::make_shared<graph::ConstantData>();
        data->bytes.resize(sizeof scale);
        std::memcpy(data->bytes.data(), &scale, sizeof scale);
        c.data = data;
        std::string cname = ctx.imp.define_helper_constant(ctx.name + "__mean_scale", c);
        ctx.emit("multiply", {acc, ctx.imp.value(cname, ctx.where())});
    };
}

// A scalar bound of Clip (input 1 or 2), as a double; false when absent.
bool clip_bound(NodeCtx& ctx, int i, double& out) {
    if (!ctx.has_input(i)) return false;
    const ConstTensor* c = ctx.constant_input(i);
    TS_USER_CHECK(c && c->type.num_elements() == 1)
        << ctx.where() << ": input " << i << " must be a constant scalar";
    switch (c->type.dtype) {
        case graph::DType::Float32: out = c->data->as<float>()[0]; break;
        case graph::DType::Float64: out = c->data->as<double>()[0]; break;
        case graph::DType::Int64: out = double(c->data->as<int64_t>()[0]); break;
        case graph::DType::Int32: out = c->data->as<int32_t>()[0]; break;
        case graph::DType::Int8: out = c->data->as<int8_t>()[0]; break;
        case graph::DType::UInt8: out = c->data->as<uint8_t>()[0]; break;
        default: TS_USER_FAIL() << ctx.where() << ": unsupported bound type " << c->type.str();
    }
    return true;
}

void convert_clip(NodeCtx& ctx) {
    Attrs attrs;
    double v = 0;
    if (ctx.opset() < 11) {
        if (ctx.has_attr("min")) attrs["a_min"] = ctx.attr_float("min", 0);
        if (ctx.has_attr("max")) attrs["a_max"] = ctx.attr_float("max", 0);
        ctx.emit("clip", {ctx.input(0)}, attrs);
        return;
    }
    bool lo_tensor = ctx.has_input(1) && !ctx.constant_input(1);
    bool hi_tensor = ctx.has_input(2) && !ctx.constant_input(2);
    if (lo_tensor || hi_tensor) {
        // Bounds computed at run time: max(x, lo) then min(., hi).
        int x = ctx.input(0);
        if (ctx.has_input(1) && ctx.has_input(2)) x = ctx.emit_internal("maximum", {x, ctx.input(1)});
        if (ctx.has_input(2))
            ctx.emit("minimum", {x, ctx.input(2)});
        else
            ctx.emit("maximum", {x, ctx.input(1)});
        return;
    }
    if (clip_bound(ctx, 1, v)) attrs["a_min"] = v;
    if (clip_bound(ctx, 2, v)) attrs["a_max"] = v;
    ctx.emit("clip", {ctx.input(0)}, attrs);
}

void emit_cast(NodeCtx& ctx, int elem_type) {
    graph::DType to = dtype_from_onnx(elem_type, ctx.where() + ": cast target");
    ctx.emit("cast", {ctx.input(0)}, {{"dtype", std::string(graph::dtype_name(to))}});
}

void convert_cast(NodeCtx& ctx) {
    TS_USER_CHECK(ctx.has_attr("to")) << ctx.where() << ": missing attribute 'to'";
    emit_cast(ctx, int(ctx.attr_int("to", 0)));
}

void convert_cast_like(NodeCtx& ctx) {
    emit_cast(ctx, dtype_to_onnx(ctx.input_type(1).dtype));
}

void convert_isinf(NodeCtx& ctx) {
    ctx.emit("isinf", {ctx.input(0)},
             {{"detect_positive", ctx.attr_int("detect_positive", 1)},
              {"detect_negative", ctx.attr_int("detect_negative", 1)}});
}

}  // namespace

void add_unary_converters(ConverterTable& t) {
    const std::pair<const char*, const char*> plain[] = {
        {"Neg", "negative"},      {"Abs", "abs"},
        {"Sign", "sign"},         {"Floor", "floor"},
        {"Ceil", "ceil"},         {"Round", "round"},
        {"Exp", "exp"},           {"Log", "log"},
        {"Sqrt", "sqrt"},         {"Reciprocal", "reciprocal"},
        {"Sin", "sin"},           {"Cos", "cos"},
        {"Sigmoid", "sigmoid"},   {"Tanh", "tanh"},
        {"Erf", "erf"},           {"Softplus", "nn.softplus"},
        {"Softsign", "nn.softsign"}, {"HardSwish", "nn.hard_swish"},
        {"Not", "logical_not"},   {"IsNaN", "isnan"},
    };
    for (const auto& [onnx_op, op] : plain) t[onnx_op] = unary(op);
    t["LeakyRelu"] = unary("nn.leaky_relu", {{"alpha", 0.01}});
    t["ThresholdedRelu"] = unary("nn.thresholded_relu", {{"alpha", 1.0}});
    t["Elu"] = unary("nn.elu", {{"alpha", 1.0}});
    t["Celu"] = unary("nn.celu", {{"alpha", 1.0}});
    t["Selu"] = unary("nn.selu", {{"alpha", 1.67326319217681884765625},
                                  {"gamma", 1.05070102214813232421875}});
    t["HardSigmoid"] = unary("nn.hard_sigmoid", {{"alpha", 0.2}, {"beta", 0.5}});
    t["Gelu"] = unary("nn.gelu", {}, {"approximate"});
    t["IsInf"] = convert_isinf;
    t["Clip"] = convert_clip;
    t["Cast"] = convert_cast;
    t["CastLike"] = convert_cast_like;
    const std::pair<const char*, const char*> bin[] = {
        {"Pow", "power"},        {"Mod", "mod"},
        {"PRelu", "nn.prelu"},   {"Equal", "equal"},
        {"Less", "less"},        {"Greater", "greater"},
        {"LessOrEqual", "less_equal"}, {"GreaterOrEqual", "greater_equal"},
        {"And", "logical_and"},  {"Or", "logical_or"},
        {"Xor", "logical_xor"},
    };
    for (const auto& [onnx_op, op] : bin) t[onnx_op] = binary(op);
    t["PRelu"] = [](NodeCtx& ctx) {
        int x = ctx.input(0), slope = ctx.input(1);
        const auto xs = ctx.type_of(x).shape;
        const auto ss = ctx.type_of(slope).shape;
        // Old exporters give a per-channel slope (C) for (N, C, ...) data.
        if (ss.size() == 1 && xs.size() > 2 && ss[0] == xs[1] && ss[0] != xs.back()) {
            std::vector<int64_t> shape(xs.size() - 1, 1);
            shape[0] = ss[0];
            slope = ctx.emit_internal("reshape", {slope}, {{"newshape", shape}});
        }
        ctx.emit("nn.prelu", {x, slope});
    };
    t["Sum"] = variadic("add", false);
    t["Mean"] = variadic("add", true);
    t["Max"] = variadic("maximum", false);
    t["Min"] = variadic("minimum", false);
    t["Where"] = [](NodeCtx& ctx) {
        ctx.emit("where", {ctx.input(0), ctx.input(1), ctx.input(2)});
    };
}

}  // namespace tessera::frontend::onnx_import
