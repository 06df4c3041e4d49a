// ONNX RNN, GRU and LSTM (forward, reverse, bidirectional; layout 0 and 1)
// expanded at import into matmul / add / multiply / sigmoid / tanh nodes,
// unrolled over the time steps, so each step runs on the fast kernels; and
// ONNX Runtime's DynamicQuantizeLSTM, whose products are integer ones.
#include <algorithm>
#include <cstring>
#include <functional>

#include "engine/core/error.h"
#include "engine/frontend/onnx/onnx_context.h"
#include "engine/frontend/onnx/onnx_index.h"
#include "engine/frontend/onnx/onnx_quantization.h"

namespace tessera::frontend::onnx_import {

namespace {

using Shape = std::vector<int64_t>;

/// Small emit helpers over one NodeCtx.
struct Builder {
    NodeCtx& ctx;

    const Shape& shape(int v) const { return ctx.type_of(v).shape; }
    int slice(int v, size_t axis, int64_t b, int64_t e) {
        Shape s = shape(v), lo(s.size(), 0), st(s.size(), 1);
        lo[axis] = b;
        s[axis] = e;
        return ctx.emit_internal("strided_slice", {v}, {{"begin", lo}, {"end", s}, {"strides", st}});
    }
    int reshape(int v, Shape s) { return ctx.emit_internal("reshape", {v}, {{"newshape", s}}); }
    int transpose(int v, Shape perm) { return ctx.emit_internal("transpose", {v}, {{"axes", perm}}); }
    int op(const std::string& name, std::vector<int> in) { return ctx.emit_internal(name, in); }
    int concat(std::vector<int> in, int64_t axis) {
        return in.size() == 1 ? in[0] : ctx.emit_internal("concatenate", in, {{"axis", axis}});
    }
    /// Float32 constant of `s` filled with `value`.
    int constant(const Shape& s, float value, const std::string& tag) {
        const int64_t count = check_constant_size(ctx, s, "the constant " + tag);
        ConstTensor c;
        c.type = {graph::DType::Float32, s};
        auto data = std::make_shared<graph::ConstantData>();
        data->bytes.resize(size_t(count) * sizeof(float));
        for (int64_t i = 0; i < count; ++i)
            std::memcpy(data->bytes.data() + i * sizeof(float), &value, sizeof value);
        c.data = data;
        std::string name = ctx.imp.define_helper_constant(ctx.name + "__" + tag, c);
        return ctx.imp.value(name, ctx.where());
    }
    /// Direction d of a (D, rows, cols) weight, transposed to (cols, rows).
    int weight_t(int w, int64_t d) {
        Shape s = shape(w);
        return transpose(reshape(slice(w, 0, d, d + 1), {s[1], s[2]}), {1, 0});
    }
};

struct RnnSpec {
    int gates;  // 1 (RNN), 3 (GRU), 4 (LSTM)
    bool lstm;
    /// ONNX Runtime's DynamicQuantizeLSTM: W (D, I, 4H) and R (D, H, 4H)
    /// 8-bit, a scale and zero point per direction or per direction and
    /// column (inputs 8-11); X and each step's h quantized to uint8 at run
    /// time (as DynamicQuantizeLinear), the products integer ones, as ORT
    /// computes them.
    bool quantized = false;
};

/// Direction d of a quantized weight (D, rows, G): its bytes (rows, G) with
/// their zero point ([] or [G]; none when zero) as integer products read
/// them, and its scale ([] or [G]).
struct QuantizedWeight {
    IntegerWeight w;
    int scale = -1;
};

QuantizedWeight quantized_weight(NodeCtx& ctx, Builder& b, int w_in, int scale_in, int zp_in,
                                 int64_t d) {
    const int w = ctx.input(w_in);
    const Shape ws = b.shape(w);
    const graph::DType wt = ctx.type_of(w).dtype;
    TS_USER_CHECK(wt == graph::DType::Int8 || wt == graph::DType::UInt8)
        << ctx.where() << ": input " << w_in << " must be int8 or uint8, got "
        << ctx.type_of(w).str();
    QuantizedWeight q;
    const int bytes = b.reshape(b.slice(w, 0, d, d + 1), {ws[1], ws[2]});
    auto per_direction = [&](int v, const char* what) {
        const Shape vs = b.shape(v);
        TS_USER_CHECK(vs.size() >= 1 && vs.size() <= 2 && vs[0] == ws[0] &&
                      (vs.size() == 1 || vs[1] == ws[2]))
            << ctx.where() << ": the " << what << " of input " << w_in << " "
            << ctx.type_of(v).str() << " is not per direction or per direction and column of "
            << ctx.type_of(w).str();
        return b.reshape(b.slice(v, 0, d, d + 1), vs.size() == 1 ? Shape{} : Shape{vs[1]});
    };
    TS_USER_CHECK(ctx.has_input(scale_in)) << ctx.where() << ": the scale of input " << w_in
                                           << " (input " << scale_in << ") is missing";
    q.scale = per_direction(ctx.input(scale_in), "scale");
    bool zero = !ctx.has_input(zp_in);
    if (const ConstTensor* c = ctx.has_input(zp_in) ? ctx.constant_input(zp_in) : nullptr) {
        const std::vector<double> v = constant_values(*c);
        zero = std::all_of(v.begin(), v.end(), [](double x) { return x == 0; });
    }
    TS_USER_CHECK(!ctx.has_input(zp_in) ||
                  ctx.input_type(zp_in).shape == ctx.input_type(scale_in).shape)
        << ctx.where() << ": the zero point of input " << w_in << " (input " << zp_in << ") "
        << ctx.input_type(zp_in).str() << " must have its scale's shape "
        << ctx.input_type(scale_in).str();
    q.w = integer_weight(ctx, bytes, zero ? -1 : per_direction(ctx.input(zp_in), "zero point"));
    return q;
}

/// a (M, K) float32 times the quantized weight, as ORT's quantized LSTM
/// computes it: a quantized to uint8 over all its elements (the inputs of
/// all steps), or `per_row` (each batch row of h), the int32 product scaled
/// by both scales.
int quantized_product(NodeCtx& ctx, Builder& b, int a, QuantizedWeight& q, bool per_row) {
    const DynamicQuantized aq = per_row ? dynamic_quantize_rows(ctx, a) : dynamic_quantize(ctx, a);
    const int a_zp = per_row ? b.reshape(aq.zero_point, {b.shape(a)[0]}) : aq.zero_point;
    const int acc = integer_product(ctx, aq.q, a_zp, q.w);
    const int real = ctx.emit_internal("cast", {acc}, {{"dtype", std::string("float32")}});
    return b.op("multiply", {real, b.op("multiply", {aq.scale, q.scale})});
}

void check_activations(NodeCtx& ctx, const std::vector<std::string>& defaults) {
    if (!ctx.has_attr("activations")) return;
    for (const auto& a : ctx.node.attribute()) {
        if (a.name() != "activations") continue;
        for (int i = 0; i < a.strings_size(); ++i) {
            const std::string& want = defaults[size_t(i) % defaults.size()];
            TS_USER_CHECK(a.strings(i) == want)
                << ctx.where() << ": activation '" << a.strings(i)
                << "' is not supported (only the defaults)";
        }
    }
}

void convert_rnn(NodeCtx& ctx, RnnSpec spec) {
    Builder b{ctx};
    TS_USER_CHECK(!ctx.has_attr("clip")) << ctx.where() << ": attribute clip is not supported";
    TS_USER_CHECK(ctx.attr_int("input_forget", 0) == 0)
        << ctx.where() << ": input_forget=1 is not supported";
    check_activations(ctx, spec.lstm        ? std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"}
                           : spec.gates == 3 ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                             : std::vector<std::string>{"Tanh"});
    const bool batch_first = ctx.attr_int("layout", 0) != 0;
    const std::string dir = ctx.attr_str("direction", "forward");
    TS_USER_CHECK(dir == "forward" || dir == "reverse" || dir == "bidirectional")
        << ctx.where() << ": unknown direction '" << dir << "'";
    const int64_t D = dir == "bidirectional" ? 2 : 1;
    int x = ctx.input(0);
    if (batch_first) x = b.transpose(x, {1, 0, 2});
    const Shape xs = b.shape(x);
    TS_USER_CHECK(xs.size() == 3) << ctx.where() << ": X must be 3-D, got " << ctx.type_of(x).str();
    const int64_t S = xs[0], B = xs[1], I = xs[2];
    TS_USER_CHECK(S <= kMaxUnroll) << ctx.where() << ": sequence length " << S
                                   << " is above the unroll limit of " << kMaxUnroll << " steps";
    int w = ctx.input(1), r = ctx.input(2);
    const Shape ws = b.shape(w);
    // W is (D, G, I) in ONNX, (D, I, G) in ORT's quantized LSTM; R likewise.
    const size_t gate_axis = spec.quantized ? 2 : 1, input_axis = spec.quantized ? 1 : 2;
    TS_USER_CHECK(ws.size() == 3 && ws[0] == D && ws[gate_axis] % spec.gates == 0 &&
                  ws[input_axis] == I)
        << ctx.where() << ": W " << ctx.type_of(w).str() << " does not fit X and direction";
    const int64_t H = ws[gate_axis] / spec.gates, G = ws[gate_axis];
    TS_USER_CHECK(b.shape(r) == (spec.quantized ? Shape({D, H, G}) : Shape({D, G, H})))
        << ctx.where() << ": R has the wrong shape";
    TS_USER_CHECK(!ctx.has_attr("hidden_size") || ctx.attr_int("hidden_size", H) == H)
        << ctx.where() << ": hidden_size " << ctx.attr_int("hidden_size", H)
        << " does not match the weights' hidden size " << H;
    // The optional inputs' shapes (they are sliced per direction below).
    auto expect_shape = [&](int i, const char* what, const Shape& want) {
        if (!ctx.has_input(i)) return;
        std::string dims;
        for (int64_t d : want) dims += (dims.empty() ? "" : ", ") + std::to_string(d);
        TS_USER_CHECK(ctx.input_type(i).shape == want)
            << ctx.where() << ": " << what << " (input " << i << ") " << ctx.input_type(i).str()
            << " must have shape (" << dims << ")";
    };
    expect_shape(3, "B", {D, 2 * G});
    expect_shape(5, "initial_h", batch_first ? Shape{B, D, H} : Shape{D, B, H});
    if (spec.lstm) {
        expect_shape(6, "initial_c", batch_first ? Shape{B, D, H} : Shape{D, B, H});
        expect_shape(7, "P", {D, 3 * H});
    }
    if (ctx.has_input(4)) {
        std::vector<int64_t> lens = ctx.constant_ints(4);
        for (int64_t l : lens)
            TS_USER_CHECK(l == S) << ctx.where()
                                  << ": sequence_lens shorter than the sequence are not supported";
    }
    int bias = ctx.has_input(3) ? ctx.input(3) : b.constant({D, 2 * G}, 0.0f, "bias");
    auto initial = [&](int idx, const std::string& tag) {
        if (!ctx.has_input(idx)) return b.constant({D, B, H}, 0.0f, tag);
        int v = ctx.input(idx);
        return batch_first ? b.transpose(v, {1, 0, 2}) : v;
    };
    int h0 = initial(5, "h0");
    int c0 = spec.lstm ? initial(6, "c0") : -1;
    int peep = spec.lstm && ctx.has_input(7) ? ctx.input(7) : -1;
    const bool lbr = ctx.attr_int("linear_before_reset", 0) != 0;

    int x2 = b.reshape(x, {S * B, I});
    std::vector<int> ys, yh, yc;
    for (int64_t d = 0; d < D; ++d) {
        const bool reverse = dir == "reverse" || d == 1;
        int wt = -1, rt = -1;  // (I, G), (H, G)
        QuantizedWeight wq, rq;
        if (spec.quantized) {
            wq = quantized_weight(ctx, b, 1, 8, 9, d);
            rq = quantized_weight(ctx, b, 2, 10, 11, d);
        } else {
            wt = b.weight_t(w, d);
            rt = b.weight_t(r, d);
        }
        // h (B, H) times R: the recurrence.
        auto recurrent = [&](int hv) {
            return spec.quantized ? quantized_product(ctx, b, hv, rq, true)
                                  : b.op("nn.matmul", {hv, rt});
        };
        int bd = b.reshape(b.slice(bias, 0, d, d + 1), {2 * G});
        int wb = b.slice(bd, 0, 0, G), rb = b.slice(bd, 0, G, 2 * G);
        // Input projection of all steps at once; for GRU the R bias of the
        // candidate gate is applied inside the step.
        int xb = spec.gates == 3 ? wb : b.op("add", {wb, rb});
        int xp =
            spec.quantized ? quantized_product(ctx, b, x2, wq, false) : b.op("nn.matmul", {x2, wt});
        int xw = b.reshape(b.op("add", {xp, xb}), {S, B, G});
        int rt_zr = -1, rt_h = -1, rb_zr = -1, rb_h = -1;
        if (spec.gates == 3) {
            rt_zr = b.slice(rt, 1, 0, 2 * H);
            rt_h = b.slice(rt, 1, 2 * H, 3 * H);
            rb_zr = b.slice(rb, 0, 0, 2 * H);
            rb_h = b.slice(rb, 0, 2 * H, 3 * H);
        }
        int pi = -1, po = -1, pf = -1;
        if (peep >= 0) {
            int pd = b.reshape(b.slice(peep, 0, d, d + 1), {3 * H});
            pi = b.slice(pd, 0, 0, H);
            po = b.slice(pd, 0, H, 2 * H);
            pf = b.slice(pd, 0, 2 * H, 3 * H);
        }
        int h = b.reshape(b.slice(h0, 0, d, d + 1), {B, H});
        int c = spec.lstm ? b.reshape(b.slice(c0, 0, d, d + 1), {B, H}) : -1;
        std::vector<int> steps(size_t(S), -1);
        for (int64_t k = 0; k < S; ++k) {
            int64_t t = reverse ? S - 1 - k : k;
            int xt = b.reshape(b.slice(xw, 0, t, t + 1), {B, G});
            if (spec.lstm) {
                int g = b.op("add", {xt, recurrent(h)});
                auto gate = [&](int64_t j) { return b.slice(g, 1, j * H, (j + 1) * H); };
                int gi = gate(0), go = gate(1), gf = gate(2), gc = gate(3);
                if (pi >= 0) {
                    gi = b.op("add", {gi, b.op("multiply", {pi, c})});
                    gf = b.op("add", {gf, b.op("multiply", {pf, c})});
                }
                int it = b.op("sigmoid", {gi}), ft = b.op("sigmoid", {gf});
                int ct = b.op("tanh", {gc});
                c = b.op("add", {b.op("multiply", {ft, c}), b.op("multiply", {it, ct})});
                if (po >= 0) go = b.op("add", {go, b.op("multiply", {po, c})});
                h = b.op("multiply", {b.op("sigmoid", {go}), b.op("tanh", {c})});
            } else if (spec.gates == 3) {
                int zr = b.op("add", {b.slice(xt, 1, 0, 2 * H),
                                      b.op("add", {b.op("nn.matmul", {h, rt_zr}), rb_zr})});
                int z = b.op("sigmoid", {b.slice(zr, 1, 0, H)});
                int rr = b.op("sigmoid", {b.slice(zr, 1, H, 2 * H)});
                int hx = b.slice(xt, 1, 2 * H, 3 * H);
                int hr = lbr ? b.op("multiply",
                                    {rr, b.op("add", {b.op("nn.matmul", {h, rt_h}), rb_h})})
                             : b.op("add", {b.op("nn.matmul", {b.op("multiply", {rr, h}), rt_h}),
                                            rb_h});
                int hh = b.op("tanh", {b.op("add", {hx, hr})});
                // h = (1 - z) * hh + z * h = hh + z * (h - hh)
                h = b.op("add", {hh, b.op("multiply", {z, b.op("subtract", {h, hh})})});
            } else {
                h = b.op("tanh", {b.op("add", {xt, recurrent(h)})});
            }
            steps[size_t(t)] = b.reshape(h, {1, 1, B, H});
        }
        ys.push_back(b.concat(steps, 0));
        yh.push_back(b.reshape(h, {1, B, H}));
        if (spec.lstm) yc.push_back(b.reshape(c, {1, B, H}));
    }
    auto finish = [&](int out, int v, Shape perm) {
        if (out >= ctx.node.output_size() || ctx.node.output(out).empty()) return;
        if (batch_first) v = b.transpose(v, perm);
        ctx.emit_outputs({out}, "reshape", {v}, {{"newshape", b.shape(v)}});
    };
    finish(0, b.concat(ys, 1), {2, 0, 1, 3});
    finish(1, b.concat(yh, 0), {1, 0, 2});
    if (spec.lstm) finish(2, b.concat(yc, 0), {1, 0, 2});
}

}  // namespace

void add_rnn_converters(ConverterTable& t) {
    t["RNN"] = [](NodeCtx& ctx) { convert_rnn(ctx, {1, false}); };
    t["GRU"] = [](NodeCtx& ctx) { convert_rnn(ctx, {3, false}); };
    t["LSTM"] = [](NodeCtx& ctx) { convert_rnn(ctx, {4, true}); };
    t["com.microsoft.DynamicQuantizeLSTM"] = [](NodeCtx& ctx) {
        convert_rnn(ctx, {4, true, true});
    };
}

}  // namespace tessera::frontend::onnx_import
