// ONNX's preview training optimizers (ai.onnx.preview.training Adagrad, Adam,
// Momentum), each one step of its update rule over N tensors, composed of
// standard ops (onnx_compose.h) as ONNX's reference computes them. Inputs:
// R (learning rate), T (update count), then N of each per-tensor input; the
// outputs are N of each new state.
#include "engine/core/error.h"
#include "engine/frontend/onnx/onnx_compose.h"

namespace tessera::frontend::onnx_import {

namespace {

/// The number of tensors an optimizer node updates: (inputs - 2) / `per`.
int64_t tensor_count(NodeCtx& ctx, int per) {
    const int64_t inputs = ctx.node.input_size() - 2;
    TS_USER_CHECK(inputs > 0 && inputs % per == 0)
        << ctx.where() << ": expects R, T and " << per << " inputs per tensor";
    return inputs / per;
}

/// T as float, and T > 0.
std::pair<std::string, std::string> step(Composer& c, NodeCtx& ctx) {
    const std::string t = c.op("Cast", {ctx.node.input(1)}, {int_attr("to", 1)});
    return {t, c.op("Greater", {t, c.scalar(0.0f)})};
}

std::string output(NodeCtx& ctx, int64_t i) {
    return i < ctx.node.output_size() ? ctx.node.output(int(i)) : "";
}

void convert_adagrad(NodeCtx& ctx) {
    Composer c(ctx);
    const int64_t n = tensor_count(ctx, 3);
    const std::string t = step(c, ctx).first;
    const std::string decay = c.scalar(float(ctx.attr_float("decay_factor", 0.0)));
    const std::string rate =
        c.op("Div", {ctx.node.input(0), c.op("Add", {c.scalar(1.0f), c.op("Mul", {t, decay})})});
    const std::string norm = c.scalar(float(ctx.attr_float("norm_coefficient", 0.0)));
    const std::string eps = c.scalar(float(ctx.attr_float("epsilon", 0.0)));
    for (int64_t i = 0; i < n; ++i) {
        const std::string x = ctx.node.input(int(2 + i)), g = ctx.node.input(int(2 + n + i)),
                          h = ctx.node.input(int(2 + 2 * n + i));
        const std::string gr = c.op("Add", {c.op("Mul", {norm, x}), g});
        const std::string h_new = c.op("Add", {h, c.op("Mul", {gr, gr})}, {}, output(ctx, n + i));
        const std::string scaled =
            c.op("Div", {c.op("Mul", {rate, gr}), c.op("Add", {c.op("Sqrt", {h_new}), eps})});
        c.op("Sub", {x, scaled}, {}, output(ctx, i));
    }
}

void convert_adam(NodeCtx& ctx) {
    Composer c(ctx);
    const int64_t n = tensor_count(ctx, 4);
    const auto [t, counted] = step(c, ctx);
    const float alpha = float(ctx.attr_float("alpha", 0.9)),
                beta = float(ctx.attr_float("beta", 0.999));
    const std::string a = c.scalar(alpha), b = c.scalar(beta), one = c.scalar(1.0f);
    const std::string norm = c.scalar(float(ctx.attr_float("norm_coefficient", 0.0)));
    const std::string post = c.scalar(float(1.0 - ctx.attr_float("norm_coefficient_post", 0.0)));
    const std::string eps = c.scalar(float(ctx.attr_float("epsilon", 1e-6)));
    // r sqrt(1 - beta^t) / (1 - alpha^t) once T > 0 (bias correction), else r.
    const std::string corrected = c.op(
        "Div",
        {c.op("Mul", {ctx.node.input(0), c.op("Sqrt", {c.op("Sub", {one, c.op("Pow", {b, t})})})}),
         c.op("Sub", {one, c.op("Pow", {a, t})})});
    const std::string rate = c.op("Where", {counted, corrected, ctx.node.input(0)});
    for (int64_t i = 0; i < n; ++i) {
        const std::string x = ctx.node.input(int(2 + i)), g = ctx.node.input(int(2 + n + i)),
                          v = ctx.node.input(int(2 + 2 * n + i)),
                          h = ctx.node.input(int(2 + 3 * n + i));
        const std::string gr = c.op("Add", {c.op("Mul", {norm, x}), g});
        const std::string v_new =
            c.op("Add", {c.op("Mul", {a, v}), c.op("Mul", {c.op("Sub", {one, a}), gr})}, {},
                 output(ctx, n + i));
        const std::string h_new =
            c.op("Add",
                 {c.op("Mul", {b, h}), c.op("Mul", {c.op("Sub", {one, b}), c.op("Mul", {gr, gr})})},
                 {}, output(ctx, 2 * n + i));
        const std::string update =
            c.op("Mul", {rate, c.op("Div", {v_new, c.op("Add", {c.op("Sqrt", {h_new}), eps})})});
        c.op("Mul", {post, c.op("Sub", {x, update})}, {}, output(ctx, i));
    }
}

void convert_momentum(NodeCtx& ctx) {
    Composer c(ctx);
    const int64_t n = tensor_count(ctx, 3);
    const std::string counted = step(c, ctx).second;
    const std::string mode = ctx.attr_str("mode", "standard");
    TS_USER_CHECK(mode == "standard" || mode == "nesterov")
        << ctx.where() << ": mode '" << mode << "' is not standard or nesterov";
    const std::string a = c.scalar(float(ctx.attr_float("alpha", 0.0)));
    const std::string norm = c.scalar(float(ctx.attr_float("norm_coefficient", 0.0)));
    // The gradient's coefficient is 1 at the first update (T = 0).
    const std::string b =
        c.op("Where", {counted, c.scalar(float(ctx.attr_float("beta", 0.0))), c.scalar(1.0f)});
    for (int64_t i = 0; i < n; ++i) {
        const std::string x = ctx.node.input(int(2 + i)), g = ctx.node.input(int(2 + n + i)),
                          v = ctx.node.input(int(2 + 2 * n + i));
        const std::string gr = c.op("Add", {c.op("Mul", {norm, x}), g});
        const std::string v_new =
            c.op("Add", {c.op("Mul", {a, v}), c.op("Mul", {b, gr})}, {}, output(ctx, n + i));
        const std::string direction =
            mode == "standard" ? v_new : c.op("Add", {gr, c.op("Mul", {a, v_new})});
        c.op("Sub", {x, c.op("Mul", {ctx.node.input(0), direction})}, {}, output(ctx, i));
    }
}

}  // namespace

void add_optimizer_converters(ConverterTable& t) {
    const std::string domain = "ai.onnx.preview.training.";
    t[domain + "Adagrad"] = convert_adagrad;
    t[domain + "Adam"] = convert_adam;
    t[domain + "Momentum"] = convert_momentum;
}

}  // namespace tessera::frontend::onnx_import
