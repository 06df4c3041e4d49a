// ONNX Constant nodes become constant values (no graph node).
#include "engine/core/error.h"
#include "engine/frontend/onnx/onnx_context.h"

namespace tessera::frontend::onnx_import {

namespace {

void convert_constant(NodeCtx& ctx) {
    const onnx::NodeProto& node = ctx.node;
    TS_USER_CHECK(node.attribute_size() == 1) << ctx.where() << ": expects exactly one attribute";
    const onnx::AttributeProto& a = node.attribute(0);
    const std::string what = ctx.where() + ": value";
    auto scalar = [](graph::DType dt, std::vector<int64_t> shape, const void* src, size_t n) {
        ConstTensor c;
        c.type = {dt, std::move(shape)};
        auto data = std::make_shared<graph::ConstantData>();
        data->bytes.assign(static_cast<const uint8_t*>(src), static_cast<const uint8_t*>(src) + n);
        c.data = std::move(data);
        return c;
    };
    if (a.name() == "value") {
        ctx.define_constant(decode_tensor(a.t(), what));
    } else if (a.name() == "value_float") {
        float f = a.f();
        ctx.define_constant(scalar(graph::DType::Float32, {}, &f, sizeof f));
    } else if (a.name() == "value_int") {
        int64_t i = a.i();
        ctx.define_constant(scalar(graph::DType::Int64, {}, &i, sizeof i));
    } else if (a.name() == "value_floats") {
        std::vector<float> v(a.floats().begin(), a.floats().end());
        ctx.define_constant(
            scalar(graph::DType::Float32, {int64_t(v.size())}, v.data(), v.size() * sizeof(float)));
    } else if (a.name() == "value_ints") {
        std::vector<int64_t> v(a.ints().begin(), a.ints().end());
        ctx.define_constant(
            scalar(graph::DType::Int64, {int64_t(v.size())}, v.data(), v.size() * sizeof(int64_t)));
    } else {
        TS_USER_FAIL() << ctx.where() << ": attribute '" << a.name() << "' is not supported";
    }
}

}  // namespace

void add_constant_converters(ConverterTable& t) { t["Constant"] = convert_constant; }

}  // namespace tessera::frontend::onnx_import
