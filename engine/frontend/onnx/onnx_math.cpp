// ONNX Add/Sub/Mul/Div/Relu/MatMul/Gemm -> elementwise and nn.* graph ops.
#include "engine/core/error.h"
#include "engine/frontend/onnx/onnx_context.h"

namespace tessera::frontend::onnx_import {

namespace {

// Before opset 7, broadcast=1 with `axis` aligns B's dims with A's starting at
// axis. Appending trailing 1s to B turns that into numpy broadcasting.
int legacy_broadcast_operand(NodeCtx& ctx, int a, int b) {
    const std::vector<int64_t> a_shape = ctx.imp.g.values[size_t(a)].type.shape;
    const graph::Value bv = ctx.imp.g.values[size_t(b)];
    int64_t rank_a = int64_t(a_shape.size()), rank_b = int64_t(bv.type.shape.size());
    int64_t axis = ctx.attr_int("axis", rank_a - rank_b);
    if (axis < 0) axis += rank_a;
    int64_t trailing = rank_a - axis - rank_b;
    TS_USER_CHECK(axis >= 0 && trailing >= 0)
        << ctx.where() << ": legacy broadcast axis " << ctx.attr_int("axis", 0)
        << " does not fit B " << bv.type.str() << " into A of rank " << rank_a;
    if (trailing == 0) return b;
    std::vector<int64_t> shape = bv.type.shape;
    shape.insert(shape.end(), size_t(trailing), 1);
    if (bv.is_constant()) {
        graph::Value v = bv;
        v.name = bv.name + "_" + ctx.name + "_bcast";
        v.type.shape = shape;
        return ctx.imp.g.add_value(std::move(v));
    }
    graph::Value v;
    v.name = bv.name + "_" + ctx.name + "_bcast";
    v.type = {bv.type.dtype, shape};
    int out = ctx.imp.g.add_value(std::move(v));
    graph::Node n;
    n.op = "reshape";
    n.name = ctx.name + "_bcast";
    n.attrs["newshape"] = shape;
    n.inputs = {b};
    n.outputs = {out};
    ctx.imp.g.add_node(std::move(n));
    return out;
}

Converter binary(const std::string& op) {
    return [op](NodeCtx& ctx) {
        int a = ctx.input(0);
        int b = ctx.input(1);
        if (ctx.opset() < 7 && ctx.attr_int("broadcast", 0) != 0 && ctx.has_attr("axis"))
            b = legacy_broadcast_operand(ctx, a, b);
        ctx.emit(op, {a, b});
    };
}

void convert_relu(NodeCtx& ctx) { ctx.emit("nn.relu", {ctx.input(0)}); }

void convert_matmul(NodeCtx& ctx) { ctx.emit("nn.matmul", {ctx.input(0), ctx.input(1)}); }

void convert_gemm(NodeCtx& ctx) {
    std::vector<int> inputs = {ctx.input(0), ctx.input(1)};
    if (ctx.has_input(2)) inputs.push_back(ctx.input(2));
    ctx.emit("nn.gemm", inputs,
             {{"alpha", ctx.attr_float("alpha", 1.0)},
              {"beta", ctx.attr_float("beta", 1.0)},
              {"transA", ctx.attr_int("transA", 0)},
              {"transB", ctx.attr_int("transB", 0)}});
}

}  // namespace

void add_math_converters(ConverterTable& t) {
    t["Add"] = binary("add");
    t["Sub"] = binary("subtract");
    t["Mul"] = binary("multiply");
    t["Div"] = binary("divide");
    t["Relu"] = convert_relu;
    t["MatMul"] = convert_matmul;
    t["Gemm"] = convert_gemm;
}

}  // namespace tessera::frontend::onnx_import
