// ONNX Flatten/Reshape/Identity/Dropout -> reshape, Softmax -> nn.softmax.
#include "engine/core/error.h"
#include "engine/frontend/onnx/onnx_context.h"

namespace tessera::frontend::onnx_import {

namespace {

std::string shape_str(const std::vector<int64_t>& s) {
    std::string out = "(";
    for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
    return out + ")";
}

// Input 0 viewed with `shape`: a constant stays a constant, anything else
// becomes a "reshape" node.
void reshape_to(NodeCtx& ctx, const std::vector<int64_t>& shape) {
    if (const ConstTensor* c = ctx.constant_input(0)) {
        ConstTensor r = *c;
        r.type.shape = shape;
        ctx.define_constant(std::move(r));
        return;
    }
    ctx.emit("reshape", {ctx.input(0)}, {{"newshape", shape}});
}

void convert_reshape(NodeCtx& ctx) {
    const graph::TensorType in = ctx.input_type(0);
    std::vector<int64_t> spec = ctx.opset() >= 5 ? ctx.constant_ints(1) : ctx.attr_ints("shape");
    bool allow_zero = ctx.attr_int("allowzero", 0) != 0;
    std::vector<int64_t> out = spec;
    int infer_at = -1;
    for (size_t i = 0; i < spec.size(); ++i) {
        if (spec[i] == 0 && !allow_zero) {
            TS_USER_CHECK(i < in.shape.size())
                << ctx.where() << ": shape " << shape_str(spec) << " copies dimension " << i
                << " that the input " << in.str() << " lacks";
            out[i] = in.shape[i];
        } else if (spec[i] == -1) {
            TS_USER_CHECK(infer_at < 0)
                << ctx.where() << ": shape " << shape_str(spec) << " has more than one -1";
            infer_at = int(i);
        } else {
            TS_USER_CHECK(spec[i] >= 0) << ctx.where() << ": invalid dimension " << spec[i]
                                        << " in shape " << shape_str(spec);
        }
    }
    if (infer_at >= 0) {
        int64_t known = 1;
        for (size_t i = 0; i < out.size(); ++i)
            if (int(i) != infer_at) known *= out[i];
        TS_USER_CHECK(known > 0 && in.num_elements() % known == 0)
            << ctx.where() << ": cannot reshape " << in.str() << " to " << shape_str(spec);
        out[size_t(infer_at)] = in.num_elements() / known;
    }
    int64_t count = 1;
    for (int64_t d : out) count *= d;
    TS_USER_CHECK(count == in.num_elements())
        << ctx.where() << ": cannot reshape " << in.str() << " to " << shape_str(spec);
    reshape_to(ctx, out);
}

void convert_flatten(NodeCtx& ctx) {
    const graph::TensorType in = ctx.input_type(0);
    int64_t rank = int64_t(in.shape.size());
    int64_t axis = ctx.attr_int("axis", 1);
    if (axis < 0) axis += rank;
    TS_USER_CHECK(axis >= 0 && axis <= rank)
        << ctx.where() << ": axis out of range for " << in.str();
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < rank; ++i) (i < axis ? outer : inner) *= in.shape[size_t(i)];
    reshape_to(ctx, {outer, inner});
}

void convert_identity(NodeCtx& ctx) { reshape_to(ctx, ctx.input_type(0).shape); }

void convert_dropout(NodeCtx& ctx) {
    // Inference: the output is the input and the mask is all true. Training
    // mode is only deterministic with ratio 0.
    if (ctx.has_input(2)) {
        const ConstTensor* training = ctx.constant_input(2);
        bool train = !training || training->type.num_elements() != 1 || training->data->bytes[0] != 0;
        if (train) {
            const ConstTensor* ratio = ctx.constant_input(1);
            bool zero = ratio && ratio->type.dtype == graph::DType::Float32 &&
                        ratio->type.num_elements() == 1 && ratio->data->as<float>()[0] == 0.0f;
            TS_USER_CHECK(training)
                << ctx.where() << ": training_mode must be a constant (an initializer or a "
                << "Constant node)";
            TS_USER_CHECK(zero) << ctx.where()
                                << ": random dropout mask in training mode is not reproducible "
                                << "(only ratio 0 is deterministic)";
        }
    }
    if (ctx.node.output_size() > 1 && !ctx.node.output(1).empty()) {
        const graph::TensorType t = ctx.input_type(0);
        ConstTensor mask;
        mask.type = {graph::DType::Bool, t.shape};
        check_constant_size(ctx, t.shape, "the mask");
        auto data = std::make_shared<graph::ConstantData>();
        data->bytes.assign(size_t(t.num_elements()), 1);
        mask.data = data;
        TS_USER_CHECK(!ctx.imp.values.count(ctx.node.output(1)))
            << ctx.where() << ": output '" << ctx.node.output(1) << "' is defined twice";
        ctx.imp.constants[ctx.node.output(1)] = mask;
    }
    if (const ConstTensor* c = ctx.constant_input(0)) {
        ctx.imp.constants[ctx.node.output(0)] = *c;
        return;
    }
    ctx.emit_outputs({0}, "reshape", {ctx.input(0)}, {{"newshape", ctx.input_type(0).shape}});
}

void convert_softmax(NodeCtx& ctx) {
    int x = ctx.input(0);
    int64_t rank = int64_t(ctx.imp.g.values[size_t(x)].type.shape.size());
    bool legacy =
        ctx.opset() < 13;  // before 13: flatten to 2-D at axis, normalise the trailing block
    int64_t axis = ctx.attr_int("axis", legacy ? 1 : -1);
    if (axis < 0) axis += rank;
    TS_USER_CHECK(axis >= 0 && axis < std::max<int64_t>(rank, 1))
        << ctx.where() << ": axis " << ctx.attr_int("axis", legacy ? 1 : -1)
        << " out of range for rank " << rank;
    std::map<std::string, graph::AttrValue> attrs = {{"axis", axis}};
    if (legacy && axis < rank - 1) attrs["coerce"] = int64_t(1);
    ctx.emit("nn.softmax", {x}, attrs);
}

}  // namespace

void add_tensor_converters(ConverterTable& t) {
    t["Reshape"] = convert_reshape;
    t["Flatten"] = convert_flatten;
    t["Identity"] = convert_identity;
    t["Dropout"] = convert_dropout;
    t["Softmax"] = convert_softmax;
}

}  // namespace tessera::frontend::onnx_import
