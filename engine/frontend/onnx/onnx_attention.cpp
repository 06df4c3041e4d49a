// ONNX ops of the transformer family newer than ONNX 1.12, composed of the
// opset-17 ops their definitions use (onnx_compose.h): Attention-23/24,
// RMSNormalization-23, RotaryEmbedding-23. Each follows ONNX's reference
// implementation (onnx/reference/ops/op_*.py of the onnx release the node
// suite comes from), step for step where the rounding matters; and
// LinearAttention-27 (linear, gated, delta and gated-delta recurrences).
#include <cmath>
#include <limits>

#include "engine/core/error.h"
#include "engine/frontend/onnx/onnx_compose.h"

namespace tessera::frontend::onnx_import {

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

std::string output_or_empty(const NodeCtx& ctx, int i) {
    return i < ctx.node.output_size() ? ctx.node.output(i) : "";
}

/// [b, s, heads * d] -> [b, heads, s, d].
std::string split_heads(Composer& c, const std::string& x, int64_t heads) {
    return c.op("Transpose", {c.op("Reshape", {x, c.ints({0, 0, heads, -1})})},
                {ints_attr("perm", {0, 2, 1, 3})});
}

/// [b, h, s, d] -> [b, h * reps, s, d], each head repeated in place
/// ([h0, h0, h1, h1, ...]): grouped-query attention's K/V heads.
std::string repeat_heads(Composer& c, const std::string& x, int64_t reps) {
    const std::vector<int64_t> s = c.type(x).shape;
    const std::string wide = c.op(
        "Expand", {c.op("Unsqueeze", {x, c.ints({2})}), c.ints({s[0], s[1], reps, s[2], s[3]})});
    return c.op("Reshape", {wide, c.ints({s[0], s[1] * reps, s[2], s[3]})});
}

/// Float additive bias (0 where allowed, -inf where not) of a boolean
/// "allowed" tensor.
std::string bias_of(Composer& c, const std::string& allowed) {
    return c.op("Where", {allowed, c.scalar(0.0f), c.scalar(kNegInf)});
}

/// The additive mask of Attention: attn_mask (bool or float, padded with
/// "masked" up to kv), the causal frontier j <= i + offset and the window,
/// and the padding of nonpad_kv_seqlen. "" when nothing masks.
std::string attention_bias(NodeCtx& ctx, Composer& c, int64_t q_len, int64_t kv_len, int64_t batch,
                           int64_t past_len) {
    std::string bias;
    if (ctx.has_input(3)) {
        std::string mask = ctx.node.input(3);
        if (c.type(mask).dtype == graph::DType::Bool) mask = bias_of(c, mask);
        const int64_t rank = int64_t(c.type(mask).shape.size());
        const int64_t pad = kv_len - c.type(mask).shape.back();
        TS_USER_CHECK(pad >= 0) << ctx.where() << ": attn_mask has more keys ("
                                << c.type(mask).shape.back() << ") than K (" << kv_len << ")";
        if (pad > 0) {
            std::vector<int64_t> pads(size_t(2 * rank), 0);
            pads.back() = pad;
            mask = c.op("Pad", {mask, c.ints(pads), c.scalar(kNegInf)});
        }
        bias = mask;
    }
    const bool causal = ctx.attr_int("is_causal", 0) != 0;
    const int64_t left = ctx.attr_int("left_window_size", -1);
    const int64_t right = ctx.attr_int("right_window_size", -1);
    const bool nonpad = ctx.has_input(6);
    TS_USER_CHECK(!(nonpad && ctx.has_input(4)))
        << ctx.where() << ": nonpad_kv_seqlen cannot be combined with past_key";
    if (causal || left >= 0 || right >= 0) {
        // diff[b?, i, j] = i + offset - j; offset = past length, or per batch
        // nonpad_kv_seqlen[b] - q_len.
        std::vector<int64_t> i_idx(static_cast<size_t>(q_len)), j_idx(static_cast<size_t>(kv_len));
        for (int64_t i = 0; i < q_len; ++i) i_idx[size_t(i)] = i + past_len;
        for (int64_t j = 0; j < kv_len; ++j) j_idx[size_t(j)] = j;
        std::string i_pos = c.op("Reshape", {c.ints(i_idx), c.ints({q_len, 1})});
        if (nonpad) {
            std::string offset = c.op(
                "Sub", {c.op("Cast", {ctx.node.input(6)}, {int_attr("to", 7)}), c.ints({q_len})});
            i_pos = c.op("Add", {i_pos, c.op("Reshape", {offset, c.ints({-1, 1, 1})})});
        }
        const std::string diff = c.op("Sub", {i_pos, c.ints(j_idx)});
        std::string allowed;
        auto both = [&](const std::string& cond) {
            allowed = allowed.empty() ? cond : c.op("And", {allowed, cond});
        };
        if (causal) both(c.op("GreaterOrEqual", {diff, c.ints({0})}));
        if (left >= 0) both(c.op("LessOrEqual", {diff, c.ints({left})}));
        if (right >= 0) both(c.op("GreaterOrEqual", {diff, c.ints({-right})}));
        std::string frontier = bias_of(c, allowed);
        if (nonpad) frontier = c.op("Reshape", {frontier, c.ints({batch, 1, q_len, kv_len})});
        bias = bias.empty() ? frontier : c.op("Add", {bias, frontier});
    }
    if (nonpad) {
        std::vector<int64_t> j_idx(static_cast<size_t>(kv_len));
        for (int64_t j = 0; j < kv_len; ++j) j_idx[size_t(j)] = j;
        const std::string lens = c.op(
            "Reshape", {c.op("Cast", {ctx.node.input(6)}, {int_attr("to", 7)}), c.ints({-1, 1})});
        std::string padding = bias_of(c, c.op("Less", {c.ints(j_idx), lens}));
        padding = c.op("Reshape", {padding, c.ints({batch, 1, 1, kv_len})});
        bias = bias.empty() ? padding : c.op("Add", {bias, padding});
    }
    return bias;
}

/// True when some row (last axis) of constant float `bias` is all -inf.
bool has_fully_masked_row(const ConstTensor& bias) {
    if (bias.type.dtype != graph::DType::Float32) return true;
    const int64_t n = bias.type.num_elements();
    const int64_t row = bias.type.shape.empty() ? 1 : bias.type.shape.back();
    const float* v = bias.data->as<float>();
    for (int64_t r = 0; row > 0 && r < n / row; ++r) {
        bool all = true;
        for (int64_t k = 0; k < row && all; ++k) all = v[r * row + k] == kNegInf;
        if (all) return true;
    }
    return false;
}

void convert_attention(NodeCtx& ctx) {
    Composer c(ctx);
    std::string q = ctx.node.input(0), k = ctx.node.input(1), v = ctx.node.input(2);
    const size_t rank = c.type(q).shape.size();
    TS_USER_CHECK((rank == 3 || rank == 4) && c.type(k).shape.size() == rank &&
                  c.type(v).shape.size() == rank)
        << ctx.where() << ": Q, K and V must all be 3-D or all 4-D";
    if (rank == 3) {
        const int64_t qh = ctx.attr_int("q_num_heads", 0), kvh = ctx.attr_int("kv_num_heads", 0);
        TS_USER_CHECK(qh > 0 && kvh > 0)
            << ctx.where() << ": 3-D inputs need q_num_heads and kv_num_heads";
        q = split_heads(c, q, qh);
        k = split_heads(c, k, kvh);
        v = split_heads(c, v, kvh);
    }
    const std::vector<int64_t> qs = c.type(q).shape;
    const int64_t batch = qs[0], q_heads = qs[1], q_len = qs[2], head = qs[3];
    // Q and K are each scaled by sqrt(scale), rounded to float as the reference does.
    const double scale =
        ctx.has_attr("scale") ? ctx.attr_float("scale", 1.0) : 1.0 / std::sqrt(double(head));
    const std::string root = c.scalar(float(std::sqrt(scale)));

    int64_t past_len = 0;
    TS_USER_CHECK(ctx.has_input(4) == ctx.has_input(5))
        << ctx.where() << ": past_key and past_value must be given together";
    if (ctx.has_input(4)) {
        past_len = c.type(ctx.node.input(4)).shape.at(2);
        k = c.op("Concat", {ctx.node.input(4), k}, {int_attr("axis", 2)});
        v = c.op("Concat", {ctx.node.input(5), v}, {int_attr("axis", 2)});
    }
    if (!output_or_empty(ctx, 1).empty()) c.op("Identity", {k}, {}, ctx.node.output(1));
    if (!output_or_empty(ctx, 2).empty()) c.op("Identity", {v}, {}, ctx.node.output(2));
    const int64_t kv_heads = c.type(k).shape[1], kv_len = c.type(k).shape[2];

    // Grouped-query attention: each K/V head serves q_heads / kv_heads query
    // heads, repeated in place ([h0, h0, h1, h1, ...]).
    if (q_heads != kv_heads) {
        TS_USER_CHECK(kv_heads > 0 && q_heads % kv_heads == 0)
            << ctx.where() << ": " << q_heads << " query heads are not a multiple of " << kv_heads
            << " key/value heads";
        k = repeat_heads(c, k, q_heads / kv_heads);
        v = repeat_heads(c, v, q_heads / kv_heads);
    }

    std::string scores = c.op(
        "MatMul", {c.op("Mul", {q, root}),
                   c.op("Mul", {c.op("Transpose", {k}, {ints_attr("perm", {0, 1, 3, 2})}), root})});
    const double softcap = ctx.attr_float("softcap", 0.0);
    if (softcap > 0) {
        const std::string cap = c.scalar(float(softcap));
        scores = c.op("Mul", {c.op("Tanh", {c.op("Div", {scores, cap})}), cap});
    }
    const std::string bias = attention_bias(ctx, c, q_len, kv_len, batch, past_len);
    const std::string biased = bias.empty() ? scores : c.op("Add", {scores, bias});
    std::string probs = c.op("Softmax", {biased}, {int_attr("axis", -1)});
    // A row every key of which is masked attends to nothing: 0, not NaN.
    if (!bias.empty() && (!c.is_constant(bias) || has_fully_masked_row(c.constant(bias)))) {
        const std::string row_max = c.op("ReduceMax", {bias}, {ints_attr("axes", {-1})});
        const std::string masked = c.op("Equal", {row_max, c.scalar(kNegInf)});
        probs = c.op("Where", {masked, c.scalar(0.0f), probs});
    }
    const std::string qk_out = output_or_empty(ctx, 3);
    if (!qk_out.empty()) {
        const int64_t mode = ctx.attr_int("qk_matmul_output_mode", 0);
        TS_USER_CHECK(mode >= 0 && mode <= 3)
            << ctx.where() << ": qk_matmul_output_mode " << mode << " is not 0 to 3";
        c.op("Identity", {mode == 2 ? biased : mode == 3 ? probs : scores}, {}, qk_out);
    }
    const std::string y = c.op("MatMul", {probs, v});
    if (rank == 3) {
        c.op("Reshape",
             {c.op("Transpose", {y}, {ints_attr("perm", {0, 2, 1, 3})}), c.ints({0, 0, -1})}, {},
             ctx.node.output(0));
    } else {
        c.op("Identity", {y}, {}, ctx.node.output(0));
    }
}

/// LinearAttention-27: a state S [b, kv heads, dk, dv] updated once per time
/// step (unrolled at import): decayed by exp(decay_t) (gated rules), the
/// value corrected by beta_t (v_t - S^T k_t) (delta rules), S += k_t v_t^T;
/// each step reads scale * q_t S (K/V heads repeated for grouped queries).
void convert_linear_attention(NodeCtx& ctx) {
    Composer c(ctx);
    const int64_t qh = ctx.attr_int("q_num_heads", 0), kvh = ctx.attr_int("kv_num_heads", 0);
    TS_USER_CHECK(qh > 0 && kvh > 0 && qh % kvh == 0)
        << ctx.where() << ": q_num_heads (" << qh
        << ") must be a positive multiple of kv_num_heads (" << kvh << ")";
    const std::string rule = ctx.attr_str("update_rule", "gated_delta");
    TS_USER_CHECK(rule == "linear" || rule == "gated" || rule == "delta" || rule == "gated_delta")
        << ctx.where() << ": update_rule '" << rule
        << "' is not linear, gated, delta or gated_delta";
    const bool gating = rule == "gated" || rule == "gated_delta";
    const bool delta = rule == "delta" || rule == "gated_delta";
    TS_USER_CHECK(gating == ctx.has_input(4) && delta == ctx.has_input(5))
        << ctx.where() << ": update_rule '" << rule << "' " << (gating ? "needs" : "takes no")
        << " decay and " << (delta ? "needs" : "takes no") << " beta";
    for (int i = 0; i < 3; ++i)
        TS_USER_CHECK(c.type(ctx.node.input(i)).shape.size() == 3)
            << ctx.where() << ": query, key and value must be (batch, time, heads * dim)";
    const std::string q = split_heads(c, ctx.node.input(0), qh);
    const std::string k = split_heads(c, ctx.node.input(1), kvh);
    const std::string v = split_heads(c, ctx.node.input(2), kvh);
    const std::vector<int64_t> qs = c.type(q).shape, vs = c.type(v).shape;
    const int64_t b = qs[0], steps = qs[2], dk = qs[3], dv = vs[3];
    TS_USER_CHECK(steps <= kMaxUnroll)
        << ctx.where() << ": " << steps << " time steps are more than Tessera unrolls ("
        << kMaxUnroll << ")";
    // decay (b, t, kvh or kvh * dk) and beta (b, t, kvh or 1) as (b, h, t, 1 or dk).
    auto per_step = [&](int input) {
        const std::string x = ctx.node.input(input);
        const int64_t last = c.type(x).shape.back();
        if (input == 4 && last == kvh * dk) return split_heads(c, x, kvh);
        return c.op("Transpose", {c.op("Reshape", {x, c.ints({0, 0, last, 1})})},
                    {ints_attr("perm", {0, 2, 1, 3})});
    };
    const std::string decay = gating ? per_step(4) : "", beta = delta ? per_step(5) : "";
    std::string state = ctx.has_input(3)
                            ? ctx.node.input(3)
                            : c.op("Expand", {c.scalar(0.0f), c.ints({b, kvh, dk, dv})});
    const double scale_attr = ctx.attr_float("scale", 0.0);
    const std::string scale =
        c.scalar(float(scale_attr == 0.0 ? 1.0 / std::sqrt(double(dk)) : scale_attr));
    auto at = [&](const std::string& x, int64_t t) {
        return c.op("Slice", {x, c.ints({t}), c.ints({t + 1}), c.ints({2})});
    };
    std::vector<std::string> outputs;
    for (int64_t t = 0; t < steps; ++t) {
        const std::string kt = at(k, t);
        std::string vt = at(v, t);
        if (gating) {
            const std::string g =
                c.op("Transpose", {c.op("Exp", {at(decay, t)})}, {ints_attr("perm", {0, 1, 3, 2})});
            state = c.op("Mul", {state, g});
        }
        if (delta) {
            const std::string retrieved = c.op("MatMul", {kt, state});
            vt = c.op("Mul", {at(beta, t), c.op("Sub", {vt, retrieved})});
        }
        state = c.op(
            "Add", {state, c.op("MatMul",
                                {c.op("Transpose", {kt}, {ints_attr("perm", {0, 1, 3, 2})}), vt})});
        const std::string read = qh == kvh ? state : repeat_heads(c, state, qh / kvh);
        outputs.push_back(c.op("Mul", {c.op("MatMul", {at(q, t), read}), scale}));
    }
    const std::string all =
        outputs.size() == 1 ? outputs[0] : c.op("Concat", outputs, {int_attr("axis", 2)});
    c.op("Reshape",
         {c.op("Transpose", {all}, {ints_attr("perm", {0, 2, 1, 3})}), c.ints({0, 0, -1})}, {},
         ctx.node.output(0));
    if (ctx.node.output_size() > 1 && !ctx.node.output(1).empty())
        c.op("Identity", {state}, {}, ctx.node.output(1));
}

/// RMSNormalization-23: X / sqrt(mean(X^2 over axes [axis, rank)) + epsilon) * Scale.
void convert_rms_normalization(NodeCtx& ctx) {
    Composer c(ctx);
    ctx.expect_outputs(1);
    const std::string x = ctx.node.input(0);
    const int64_t rank = int64_t(c.type(x).shape.size());
    const int64_t axis = normalize_axis(ctx, ctx.attr_int("axis", -1), rank);
    TS_USER_CHECK(ctx.attr_int("stash_type", 1) == 1)
        << ctx.where() << ": stash_type other than 1 (float) is not supported";
    std::vector<int64_t> axes;
    for (int64_t a = axis; a < rank; ++a) axes.push_back(a);
    const std::string mean = c.op("ReduceMean", {c.op("Mul", {x, x})}, {ints_attr("axes", axes)});
    const std::string eps = c.scalar(float(ctx.attr_float("epsilon", 1e-5)));
    const std::string inv = c.op("Reciprocal", {c.op("Sqrt", {c.op("Add", {mean, eps})})});
    c.op("Mul", {c.op("Mul", {x, inv}), ctx.node.input(1)}, {}, ctx.node.output(0));
}

/// RotaryEmbedding-23 on [b, heads, s, d] or [b, s, heads * d] input.
void convert_rotary_embedding(NodeCtx& ctx) {
    Composer c(ctx);
    ctx.expect_outputs(1);
    std::string x = ctx.node.input(0);
    const std::vector<int64_t> in_shape = c.type(x).shape;
    TS_USER_CHECK(in_shape.size() == 3 || in_shape.size() == 4)
        << ctx.where() << ": input must be 3-D or 4-D";
    if (in_shape.size() == 4) {
        x = c.op("Transpose", {x}, {ints_attr("perm", {0, 2, 1, 3})});
    } else {
        const int64_t heads = ctx.attr_int("num_heads", 0);
        TS_USER_CHECK(heads > 0) << ctx.where() << ": 3-D input needs num_heads";
        x = c.op("Reshape", {x, c.ints({0, 0, heads, -1})});
    }
    const int64_t head = c.type(x).shape[3];
    int64_t dim = ctx.attr_int("rotary_embedding_dim", 0);
    if (dim == 0) dim = head;
    TS_USER_CHECK(dim > 0 && dim <= head && dim % 2 == 0)
        << ctx.where() << ": rotary_embedding_dim " << dim << " must be even and at most " << head;
    std::string cosv = ctx.node.input(1), sinv = ctx.node.input(2);
    if (ctx.has_input(3)) {
        cosv = c.op("Gather", {cosv, ctx.node.input(3)}, {int_attr("axis", 0)});
        sinv = c.op("Gather", {sinv, ctx.node.input(3)}, {int_attr("axis", 0)});
    }
    TS_USER_CHECK(c.type(cosv).shape.back() == dim / 2 && c.type(sinv).shape.back() == dim / 2)
        << ctx.where() << ": the cos/sin caches' last dimension must be rotary_embedding_dim / 2 ("
        << dim / 2 << ")";
    cosv = c.op("Unsqueeze", {cosv, c.ints({2})});
    sinv = c.op("Unsqueeze", {sinv, c.ints({2})});
    auto slice = [&](const std::string& t, int64_t begin, int64_t end, int64_t step) {
        return c.op("Slice", {t, c.ints({begin}), c.ints({end}), c.ints({3}), c.ints({step})});
    };
    const bool interleaved = ctx.attr_int("interleaved", 0) != 0;
    const std::string x1 = interleaved ? slice(x, 0, dim, 2) : slice(x, 0, dim / 2, 1);
    const std::string x2 = interleaved ? slice(x, 1, dim, 2) : slice(x, dim / 2, dim, 1);
    const std::string real = c.op("Sub", {c.op("Mul", {cosv, x1}), c.op("Mul", {sinv, x2})});
    const std::string imag = c.op("Add", {c.op("Mul", {sinv, x1}), c.op("Mul", {cosv, x2})});
    std::string rotated;
    if (interleaved) {
        const std::vector<int64_t> s = c.type(real).shape;
        rotated = c.op(
            "Reshape",
            {c.op("Concat",
                  {c.op("Unsqueeze", {real, c.ints({4})}), c.op("Unsqueeze", {imag, c.ints({4})})},
                  {int_attr("axis", 4)}),
             c.ints({s[0], s[1], s[2], dim})});
    } else {
        rotated = c.op("Concat", {real, imag}, {int_attr("axis", 3)});
    }
    if (dim < head)
        rotated = c.op("Concat", {rotated, slice(x, dim, head, 1)}, {int_attr("axis", 3)});
    if (in_shape.size() == 4) {
        c.op("Transpose", {rotated}, {ints_attr("perm", {0, 2, 1, 3})}, ctx.node.output(0));
    } else {
        c.op("Reshape", {rotated, c.ints(in_shape)}, {}, ctx.node.output(0));
    }
}

}  // namespace

void add_attention_converters(ConverterTable& t) {
    t["Attention"] = convert_attention;
    t["RMSNormalization"] = convert_rms_normalization;
    t["RotaryEmbedding"] = convert_rotary_embedding;
    t["LinearAttention"] = convert_linear_attention;
}

}  // namespace tessera::frontend::onnx_import
