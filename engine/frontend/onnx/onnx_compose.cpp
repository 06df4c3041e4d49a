// ONNX ops composed of other ONNX ops at import (see the header).
#include "engine/frontend/onnx/onnx_compose.h"

#include "engine/core/error.h"
#include "engine/frontend/onnx/onnx_math_signal.h"

namespace tessera::frontend::onnx_import {

onnx::AttributeProto int_attr(const std::string& name, int64_t v) {
    onnx::AttributeProto a;
    a.set_name(name);
    a.set_type(onnx::AttributeProto::INT);
    a.set_i(v);
    return a;
}

onnx::AttributeProto ints_attr(const std::string& name, const std::vector<int64_t>& v) {
    onnx::AttributeProto a;
    a.set_name(name);
    a.set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a.add_ints(x);
    return a;
}

onnx::AttributeProto float_attr(const std::string& name, float v) {
    onnx::AttributeProto a;
    a.set_name(name);
    a.set_type(onnx::AttributeProto::FLOAT);
    a.set_f(v);
    return a;
}

std::string Composer::op(const std::string& type, const std::vector<std::string>& inputs,
                         const std::vector<onnx::AttributeProto>& attrs,
                         const std::string& output) {
    onnx::NodeProto n;
    n.set_op_type(type);
    for (const std::string& i : inputs) n.add_input(i);
    for (const onnx::AttributeProto& a : attrs) *n.add_attribute() = a;
    n.add_output(output.empty() ? ctx_.imp.fresh_name(ctx_.name + "_" + type) : output);
    auto it = converters().find(type);
    TS_CHECK(it != converters().end()) << "no converter for composed step " << type;
    // Diagnostics of a step name the composed node and the step.
    NodeCtx step(ctx_.imp, n, ctx_.name + " (step " + std::to_string(++steps_) + ": " + type + ")");
    it->second(step);
    return n.output(0);
}

std::string Composer::ints(const std::vector<int64_t>& v) {
    return ctx_.imp.define_helper_constant(ctx_.name + "_ints",
                                           make_int64_tensor({int64_t(v.size())}, v));
}

std::string Composer::scalar(float v) { return floats({}, {v}); }

std::string Composer::floats(std::vector<int64_t> shape, const std::vector<double>& v) {
    return ctx_.imp.define_helper_constant(
        ctx_.name + "_floats", typed_tensor(graph::DType::Float32, std::move(shape), v));
}

bool Composer::is_constant(const std::string& name) const {
    return ctx_.imp.constants.count(name) > 0;
}

const ConstTensor& Composer::constant(const std::string& name) const {
    return ctx_.imp.constants.at(name);
}

const graph::TensorType& Composer::type(const std::string& name) {
    if (auto c = ctx_.imp.constants.find(name); c != ctx_.imp.constants.end())
        return c->second.type;
    return ctx_.imp.g.values[size_t(ctx_.imp.value(name, ctx_.where()))].type;
}

}  // namespace tessera::frontend::onnx_import
