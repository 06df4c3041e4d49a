// Private to the ONNX frontend: an ONNX op converted as a composition of other
// ONNX ops (opset-17 forms), each converted by its standard converter. Used
// for ops newer than ONNX 1.12 whose definitions are such compositions
// (Attention, RMSNormalization, RotaryEmbedding...): the steps get the same
// shape rules, constant folding and diagnostics as the ops a model writes.
#pragma once

#include <string>
#include <vector>

#include "engine/frontend/onnx/onnx_context.h"

namespace tessera::frontend::onnx_import {

/// One attribute of a step.
onnx::AttributeProto int_attr(const std::string& name, int64_t v);
onnx::AttributeProto ints_attr(const std::string& name, const std::vector<int64_t>& v);
onnx::AttributeProto float_attr(const std::string& name, float v);

class Composer {
public:
    /// Steps are named after `ctx`'s node; their errors name it too.
    explicit Composer(NodeCtx& ctx) : ctx_(ctx) {}

    /// Converts ONNX op `type` on the ONNX values `inputs` ("" for an omitted
    /// optional input); returns the name of its output 0, which is `output`
    /// when given (an output of the composed node) or a fresh name.
    std::string op(const std::string& type, const std::vector<std::string>& inputs,
                   const std::vector<onnx::AttributeProto>& attrs = {},
                   const std::string& output = "");
    /// A constant int64 vector / float32 scalar / float32 tensor of `shape`
    /// under a fresh name.
    std::string ints(const std::vector<int64_t>& v);
    std::string scalar(float v);
    std::string floats(std::vector<int64_t> shape, const std::vector<double>& v);
    /// The type of ONNX value `name` (graph value or constant).
    const graph::TensorType& type(const std::string& name);
    /// True when ONNX value `name` is a constant (known at import).
    bool is_constant(const std::string& name) const;
    const ConstTensor& constant(const std::string& name) const;

private:
    NodeCtx& ctx_;
    int steps_ = 0;
};

}  // namespace tessera::frontend::onnx_import
