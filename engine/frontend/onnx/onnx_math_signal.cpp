// ONNX converters for extra elementwise/unary/window ops: inverse and
// hyperbolic trigonometry, Shrink, BitShift, Hardmax, OneHot, EyeLike, LRN,
// MeanVarianceNormalization, Det, Hann/Hamming/Blackman windows,
// MelWeightMatrix, DFT and STFT. Quantization ops: onnx_quantization.cpp.
#include "engine/frontend/onnx/onnx_math_signal.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "engine/core/error.h"
#include "engine/frontend/onnx/onnx_dtype.h"
#include "engine/frontend/onnx/onnx_index.h"

namespace tessera::frontend::onnx_import {

namespace {

using Attrs = std::map<std::string, graph::AttrValue>;

// OneHot: indices (any numeric), depth (constant scalar), values [off, on].
void convert_one_hot(NodeCtx& ctx) {
    std::vector<double> depth_v = constant_doubles(ctx, 1, "depth");
    TS_USER_CHECK(depth_v.size() == 1) << ctx.where() << ": depth must be a scalar";
    int64_t depth = int64_t(depth_v[0]);
    TS_USER_CHECK(depth >= 1) << ctx.where() << ": depth must be >= 1, got " << depth;
    const ConstTensor* values = ctx.constant_input(2);
    TS_USER_CHECK(values && values->type.num_elements() == 2)
        << ctx.where() << ": values must be a constant [off_value, on_value]";
    std::vector<double> vals = constant_doubles(ctx, 2, "values");
    graph::DType vt = values->type.dtype;

    int idx = ctx.input(0);
    std::vector<int64_t> shape = ctx.type_of(idx).shape;
    if (ctx.type_of(idx).dtype != graph::DType::Int64)
        idx = ctx.emit_internal("cast", {idx}, {{"dtype", std::string("int64")}});
    // Negative indices count from the end.
    int zero = internal_constant(ctx, typed_tensor(graph::DType::Int64, {}, {0}));
    int d = internal_constant(ctx, typed_tensor(graph::DType::Int64, {}, {double(depth)}));
    int neg = ctx.emit_internal("less", {idx, zero});
    idx = ctx.emit_internal("where", {neg, ctx.emit_internal("add", {idx, d}), idx});

    int64_t rank = int64_t(shape.size()) + 1;
    int64_t axis = normalize_axis(ctx, ctx.attr_int("axis", -1), rank);
    std::vector<int64_t> ushape = shape;
    ushape.insert(ushape.begin() + axis, 1);
    idx = ctx.emit_internal("reshape", {idx}, {{"newshape", ushape}});
    int hot = ctx.emit_internal("equal", {idx, iota_along(ctx, rank, axis, depth)});
    int off = internal_constant(ctx, typed_tensor(vt, {}, {vals[0]}));
    int on = internal_constant(ctx, typed_tensor(vt, {}, {vals[1]}));
    ctx.emit("where", {hot, on, off});
}

// Hardmax: 1 at the first maximum along axis, else 0 (argmax == iota).
void convert_hardmax(NodeCtx& ctx) {
    int x = ctx.input(0);
    const graph::TensorType xt = ctx.type_of(x);
    int64_t rank = int64_t(xt.shape.size());
    bool coerce_2d = ctx.opset() < 13;
    int64_t axis = normalize_axis(ctx, ctx.attr_int("axis", coerce_2d ? 1 : -1), rank);
    if (coerce_2d) {
        // Before opset 13 the input is viewed as (prod(dims < axis), prod(dims >= axis)).
        int64_t outer = 1, inner = 1;
        for (int64_t i = 0; i < rank; ++i) (i < axis ? outer : inner) *= xt.shape[size_t(i)];
        x = ctx.emit_internal("reshape", {x}, {{"newshape", std::vector<int64_t>{outer, inner}}});
        rank = 2;
        axis = 1;
    }
    int64_t extent = ctx.type_of(x).shape[size_t(axis)];
    int am = ctx.emit_internal(
        "argmax", {x},
        {{"axis", axis}, {"keepdims", int64_t(1)}, {"select_last_index", int64_t(0)}});
    int hot = ctx.emit_internal("equal", {am, iota_along(ctx, rank, axis, extent)});
    std::string dt = graph::dtype_name(xt.dtype);
    if (!coerce_2d) {
        ctx.emit("cast", {hot}, {{"dtype", dt}});
        return;
    }
    int y = ctx.emit_internal("cast", {hot}, {{"dtype", dt}});
    ctx.emit("reshape", {y}, {{"newshape", xt.shape}});
}

// EyeLike: a constant with ones on diagonal k of the input's (2-D) shape.
void convert_eye_like(NodeCtx& ctx) {
    const graph::TensorType& xt = ctx.input_type(0);
    TS_USER_CHECK(xt.shape.size() == 2) << ctx.where() << ": input must be 2-D, got " << xt.str();
    graph::DType dt = ctx.has_attr("dtype")
                          ? dtype_from_onnx(int(ctx.attr_int("dtype", 1)), ctx.where() + ": dtype")
                          : xt.dtype;
    int64_t k = ctx.attr_int("k", 0), rows = xt.shape[0], cols = xt.shape[1];
    std::vector<double> v(size_t(check_constant_size(ctx, xt.shape, "the output")), 0.0);
    for (int64_t i = 0; i < rows; ++i)
        if (i + k >= 0 && i + k < cols) v[size_t(i * cols + i + k)] = 1.0;
    ctx.define_constant(typed_tensor(dt, xt.shape, v));
}

// MeanVarianceNormalization as ONNX's function body: (x - E[x]) / (sqrt(E[x^2] - E[x]^2) + 1e-9).
void convert_mvn(NodeCtx& ctx) {
    int x = ctx.input(0);
    int64_t rank = int64_t(ctx.type_of(x).shape.size());
    std::vector<int64_t> axes = ctx.attr_ints("axes", {0, 2, 3});
    for (int64_t& a : axes) a = normalize_axis(ctx, a, rank);
    std::sort(axes.begin(), axes.end());
    Attrs red = {{"axes", axes}, {"keepdims", int64_t(1)}};
    int mean = ctx.emit_internal("reduce_mean", {x}, red);
    int mean_sq = ctx.emit_internal("reduce_mean", {ctx.emit_internal("multiply", {x, x})}, red);
    int var = ctx.emit_internal("subtract", {mean_sq, ctx.emit_internal("multiply", {mean, mean})});
    int eps = internal_constant(ctx, typed_tensor(graph::DType::Float32, {}, {1e-9}));
    int den = ctx.emit_internal("add", {ctx.emit_internal("sqrt", {var}), eps});
    ctx.emit("divide", {ctx.emit_internal("subtract", {x, mean}), den});
}

// Hann, Hamming and Blackman windows of a constant size: constants.
Converter window(int kind) {
    return [kind](NodeCtx& ctx) {
        std::vector<int64_t> size = ctx.constant_ints(0);
        TS_USER_CHECK(size.size() == 1 && size[0] >= 0)
            << ctx.where() << ": size must be a non-negative scalar";
        int64_t n = size[0];
        check_constant_size(ctx, {n}, "the window");
        double denom = double(ctx.attr_int("periodic", 1) != 0 ? n : n - 1);
        if (denom <= 0) denom = 1;
        std::vector<double> v(static_cast<size_t>(n));
        for (int64_t i = 0; i < n; ++i) {
            double t = 2.0 * M_PI * double(i) / denom;
            if (kind == 0)
                v[size_t(i)] = 0.5 - 0.5 * std::cos(t);
            else if (kind == 1)
                v[size_t(i)] = 25.0 / 46.0 - (1.0 - 25.0 / 46.0) * std::cos(t);
            else
                v[size_t(i)] = 0.42 - 0.5 * std::cos(t) + 0.08 * std::cos(2.0 * t);
        }
        graph::DType dt = dtype_from_onnx(int(ctx.attr_int("output_datatype", 1)),
                                          ctx.where() + ": output_datatype");
        ctx.define_constant(typed_tensor(dt, {n}, v));
    };
}

// MelWeightMatrix of constant parameters, following ONNX's reference.
void convert_mel_weight_matrix(NodeCtx& ctx) {
    auto scalar = [&](int i, const char* what) {
        std::vector<double> v = constant_doubles(ctx, i, what);
        TS_USER_CHECK(v.size() == 1) << ctx.where() << ": " << what << " must be a scalar";
        return v[0];
    };
    int64_t mel_bins = int64_t(scalar(0, "num_mel_bins")),
            dft_length = int64_t(scalar(1, "dft_length"));
    int64_t sample_rate = int64_t(scalar(2, "sample_rate"));
    double lower = scalar(3, "lower_edge_hertz"), upper = scalar(4, "upper_edge_hertz");
    TS_USER_CHECK(mel_bins >= 1 && dft_length >= 1 && sample_rate >= 1 && lower >= 0 &&
                  upper > lower)
        << ctx.where() << ": invalid mel parameters";
    int64_t spec_bins = dft_length / 2 + 1;
    check_constant_size(ctx, {spec_bins, mel_bins + 2}, "the matrix");
    double low_mel = 2595.0 * std::log10(1.0 + lower / 700.0);
    double high_mel = 2595.0 * std::log10(1.0 + upper / 700.0);
    double step = (high_mel - low_mel) / double(mel_bins + 2);
    std::vector<int64_t> bins(size_t(mel_bins + 2));
    for (int64_t i = 0; i < mel_bins + 2; ++i) {
        double hz = 700.0 * (std::pow(10.0, (double(i) * step + low_mel) / 2595.0) - 1.0);
        bins[size_t(i)] = int64_t(std::floor(double(dft_length + 1) * hz / double(sample_rate)));
        TS_USER_CHECK(bins[size_t(i)] >= 0 && bins[size_t(i)] < spec_bins)
            << ctx.where() << ": upper_edge_hertz is above the Nyquist frequency";
    }
    std::vector<double> out(size_t(spec_bins * mel_bins), 0.0);
    auto at = [&](int64_t j, int64_t i) -> double& { return out[size_t(j * mel_bins + i)]; };
    for (int64_t i = 0; i < mel_bins; ++i) {
        int64_t lo = bins[size_t(i)], mid = bins[size_t(i + 1)], hi = bins[size_t(i + 2)];
        if (mid == lo)
            at(mid, i) = 1.0;
        else
            for (int64_t j = lo; j <= mid; ++j) at(j, i) = double(j - lo) / double(mid - lo);
        for (int64_t j = mid; j < hi; ++j) at(j, i) = double(hi - j) / double(hi - mid);
    }
    graph::DType dt =
        dtype_from_onnx(int(ctx.attr_int("output_datatype", 1)), ctx.where() + ": output_datatype");
    ctx.define_constant(typed_tensor(dt, {spec_bins, mel_bins}, out));
}

void convert_dft(NodeCtx& ctx) {
    int x = ctx.input(0);
    int64_t rank = int64_t(ctx.type_of(x).shape.size());
    TS_USER_CHECK(rank >= 3) << ctx.where() << ": input must be (batch, signal..., 1 or 2)";
    // DFT-20 takes the axis as input 2 (default -2, the last signal axis).
    int64_t axis = ctx.imp.source_opset >= 20 ? (ctx.has_input(2) ? ctx.constant_ints(2).at(0) : -2)
                                              : ctx.attr_int("axis", 1);
    if (axis < 0) axis += rank;  // negative axes count from the end, like ONNX's reference
    TS_USER_CHECK(axis >= 1 && axis < rank - 1)
        << ctx.where() << ": axis " << axis << " is not a signal axis";
    Attrs attrs = {{"axis", axis},
                   {"inverse", ctx.attr_int("inverse", 0)},
                   {"onesided", ctx.attr_int("onesided", 0)}};
    if (ctx.has_input(1)) {
        std::vector<int64_t> len = ctx.constant_ints(1);
        TS_USER_CHECK(len.size() == 1) << ctx.where() << ": dft_length must be a scalar";
        attrs["length"] = len[0];
    }
    ctx.emit("dft", {x}, attrs);
}

// The largest frame a real STFT computes as a product with a constant DFT
// matrix (frame x 2 bins floats: 32 MB at 2048, kept to a few MB below).
constexpr int64_t kMaxGemmFrame = 2048;

// A real signal's STFT as a GEMM: the frames [B, F, N] (slices of the
// signal's rows of `step` samples) times the constant [N, 2K] matrix of
// w[n] cos(2 pi k n / N) and -w[n] sin(2 pi k n / N) (the window folded in
// when constant, else multiplied into the frames), reshaped to [B, F, K, 2].
// The direct form evaluated a float64 cosine and sine per term: onnx-asr's
// NeMo preprocessor (512-point frames of 1 s at 16 kHz) took 280 ms, ONNX
// Runtime 0.8. -1 when the signal is complex.
int stft_as_gemm(NodeCtx& ctx, int x, int64_t step, int64_t frame, int window,
                 const ConstTensor* window_data, int64_t onesided) {
    const std::vector<int64_t>& xs = ctx.type_of(x).shape;
    if (xs.size() != 3 || xs[2] != 1 || frame > kMaxGemmFrame || step < 1 || xs[1] < frame ||
        ctx.type_of(x).dtype != graph::DType::Float32 ||
        (window >= 0 && !window_data && ctx.type_of(window).dtype != graph::DType::Float32))
        return -1;
    const int64_t B = xs[0], L = xs[1], N = frame, F = (L - N) / step + 1;
    const int64_t K = onesided != 0 ? N / 2 + 1 : N;
    std::vector<double> w(size_t(N), 1.0);
    bool window_folded = window < 0;
    if (window_data) {
        w = constant_values(*window_data);
        window_folded = true;
    }
    // The frames without an index table (Whisper's 3,001 x 400 positions were
    // 9.6 MB of int64): the signal as rows of `step` samples, [B, R, step],
    // frame f the rows f .. f + parts - 1 side by side, cut to N. The rows
    // past the signal's end (zeros) only reach the cut-off part.
    const int64_t parts = (N + step - 1) / step, R = F - 1 + parts;
    int signal = ctx.emit_internal("reshape", {x}, {{"newshape", std::vector<int64_t>{B, L}}});
    if (R * step > L)
        signal = ctx.emit_internal("nn.pad", {signal},
                                   {{"pads", std::vector<int64_t>{0, 0, 0, R * step - L}},
                                    {"mode", std::string("constant")},
                                    {"value", 0.0}});
    else if (R * step < L)
        signal = ctx.emit_internal("strided_slice", {signal},
                                   {{"begin", std::vector<int64_t>{0, 0}},
                                    {"end", std::vector<int64_t>{B, R * step}},
                                    {"strides", std::vector<int64_t>{1, 1}}});
    const int rows =
        ctx.emit_internal("reshape", {signal}, {{"newshape", std::vector<int64_t>{B, R, step}}});
    std::vector<int> pieces;
    for (int64_t j = 0; j < parts; ++j)
        pieces.push_back(ctx.emit_internal("strided_slice", {rows},
                                           {{"begin", std::vector<int64_t>{0, j, 0}},
                                            {"end", std::vector<int64_t>{B, j + F, step}},
                                            {"strides", std::vector<int64_t>{1, 1, 1}}}));
    int frames =
        parts == 1 ? pieces[0] : ctx.emit_internal("concatenate", pieces, {{"axis", int64_t(2)}});
    if (parts * step != N)
        frames = ctx.emit_internal("strided_slice", {frames},
                                   {{"begin", std::vector<int64_t>{0, 0, 0}},
                                    {"end", std::vector<int64_t>{B, F, N}},
                                    {"strides", std::vector<int64_t>{1, 1, 1}}});
    if (!window_folded) frames = ctx.emit_internal("multiply", {frames, window});
    // Columns padded with zeros to a multiple of 32 (two AVX-512 vectors: a
    // 512-point frame's 257 bins are 514 columns, whose last 2 ran as a
    // guarded tail of every register tile), cut after the product.
    const int64_t cols = (2 * K + 31) / 32 * 32;
    std::vector<double> dft(size_t(N * cols), 0.0);
    for (int64_t n = 0; n < N; ++n)
        for (int64_t k = 0; k < K; ++k) {
            const double theta = 2.0 * M_PI * double((k * n) % N) / double(N);
            dft[size_t(n * cols + 2 * k)] = w[size_t(n)] * std::cos(theta);
            dft[size_t(n * cols + 2 * k + 1)] = -w[size_t(n)] * std::sin(theta);
        }
    int y = ctx.emit_internal(
        "nn.matmul",
        {frames, internal_constant(ctx, typed_tensor(graph::DType::Float32, {N, cols}, dft))});
    if (cols != 2 * K)
        y = ctx.emit_internal("strided_slice", {y},
                              {{"begin", std::vector<int64_t>{0, 0, 0}},
                               {"end", std::vector<int64_t>{B, F, 2 * K}},
                               {"strides", std::vector<int64_t>{1, 1, 1}}});
    return ctx.emit("reshape", {y}, {{"newshape", std::vector<int64_t>{B, F, K, 2}}});
}

void convert_stft(NodeCtx& ctx) {
    int x = ctx.input(0);
    const std::vector<int64_t>& shape = ctx.input_type(0).shape;
    if (shape.size() == 2) {
        // [batch, length] without the trailing 1 of a real signal: ONNX
        // Runtime accepts it and onnx-asr's NeMo and Whisper preprocessors
        // are exported that way.
        x = ctx.emit_internal("reshape", {x},
                              {{"newshape", std::vector<int64_t>{shape[0], shape[1], 1}}});
    }
    std::vector<int64_t> step = ctx.constant_ints(1);
    TS_USER_CHECK(step.size() == 1) << ctx.where() << ": frame_step must be a scalar";
    std::vector<int> inputs = {x};
    int64_t frame = -1;
    if (ctx.has_input(2)) {
        inputs.push_back(ctx.input(2));
        TS_USER_CHECK(ctx.type_of(inputs[1]).shape.size() == 1)
            << ctx.where() << ": window must be 1-D";
        frame = ctx.type_of(inputs[1]).shape[0];
    }
    if (ctx.has_input(3)) {
        std::vector<int64_t> len = ctx.constant_ints(3);
        TS_USER_CHECK(len.size() == 1) << ctx.where() << ": frame_length must be a scalar";
        TS_USER_CHECK(frame < 0 || frame == len[0])
            << ctx.where() << ": frame_length " << len[0] << " differs from the window's " << frame;
        frame = len[0];
    }
    TS_USER_CHECK(frame >= 1) << ctx.where() << ": needs a window or a frame_length";
    int64_t onesided = ctx.attr_int("onesided", 1);
    // ONNX 1.12's shape inference declares frame_length bins even for the
    // (default) one-sided transform, whose data has frame_length / 2 + 1: the
    // declared output type is not checked against ours.
    if (onesided != 0) ctx.imp.onnx_types.erase(ctx.node.output(0));
    if (stft_as_gemm(ctx, x, step[0], frame, inputs.size() > 1 ? inputs[1] : -1,
                     ctx.has_input(2) ? ctx.constant_input(2) : nullptr, onesided) >= 0)
        return;
    ctx.emit("stft", inputs,
             {{"frame_step", step[0]}, {"frame_length", frame}, {"onesided", onesided}});
}

}  // namespace

std::vector<double> constant_doubles(const NodeCtx& ctx, int i, const std::string& what) {
    const ConstTensor* c = ctx.constant_input(i);
    TS_USER_CHECK(c) << ctx.where() << ": " << what << " (input " << i << ") must be a constant";
    int64_t n = c->type.num_elements();
    std::vector<double> v(static_cast<size_t>(n));
    for (int64_t k = 0; k < n; ++k) {
        switch (c->type.dtype) {
            case graph::DType::Float32:
                v[size_t(k)] = c->data->as<float>()[k];
                break;
            case graph::DType::Float64:
                v[size_t(k)] = c->data->as<double>()[k];
                break;
            case graph::DType::Int64:
                v[size_t(k)] = double(c->data->as<int64_t>()[k]);
                break;
            case graph::DType::Int32:
                v[size_t(k)] = c->data->as<int32_t>()[k];
                break;
            case graph::DType::Int8:
                v[size_t(k)] = c->data->as<int8_t>()[k];
                break;
            case graph::DType::UInt8:
                v[size_t(k)] = c->data->as<uint8_t>()[k];
                break;
            case graph::DType::Bool:
                v[size_t(k)] = c->data->as<uint8_t>()[k];
                break;
            default:
                TS_USER_FAIL() << ctx.where() << ": " << what << " has unsupported type "
                               << c->type.str();
        }
    }
    return v;
}

ConstTensor typed_tensor(graph::DType dt, std::vector<int64_t> shape,
                         const std::vector<double>& v) {
    ConstTensor c;
    c.type = {dt, std::move(shape)};
    TS_CHECK(c.type.num_elements() == int64_t(v.size())) << "typed_tensor: size mismatch";
    auto data = std::make_shared<graph::ConstantData>();
    data->bytes.resize(size_t(c.type.num_bytes()));
    auto put = [&](auto tag) {
        using T = decltype(tag);
        for (size_t k = 0; k < v.size(); ++k) {
            T x = T(v[k]);
            std::memcpy(data->bytes.data() + k * sizeof(T), &x, sizeof(T));
        }
    };
    switch (dt) {
        case graph::DType::Float32:
            put(float{});
            break;
        case graph::DType::Float64:
            put(double{});
            break;
        case graph::DType::Int64:
            put(int64_t{});
            break;
        case graph::DType::Int32:
            put(int32_t{});
            break;
        case graph::DType::Int8:
            put(int8_t{});
            break;
        case graph::DType::UInt8:
            put(uint8_t{});
            break;
        case graph::DType::Bool:
            for (size_t k = 0; k < v.size(); ++k) data->bytes[k] = v[k] != 0 ? 1 : 0;
            break;
        default:
            TS_USER_FAIL() << "unsupported constant dtype " << graph::dtype_name(dt);
    }
    c.data = data;
    return c;
}

int internal_constant(NodeCtx& ctx, ConstTensor c) {
    return ctx.imp.value(ctx.imp.define_helper_constant(ctx.name + "__const", std::move(c)),
                         ctx.where());
}

int iota_along(NodeCtx& ctx, int64_t rank, int64_t axis, int64_t extent) {
    std::vector<int64_t> shape(size_t(rank), 1);
    shape[size_t(axis)] = extent;
    check_constant_size(ctx, shape, "the index range");
    std::vector<double> v(static_cast<size_t>(extent));
    for (int64_t i = 0; i < extent; ++i) v[size_t(i)] = double(i);
    return internal_constant(ctx, typed_tensor(graph::DType::Int64, shape, v));
}

void add_math_signal_converters(ConverterTable& t) {
    const std::pair<const char*, const char*> trig[] = {
        {"Tan", "tan"},     {"Asin", "asin"},   {"Acos", "acos"},
        {"Atan", "atan"},   {"Sinh", "sinh"},   {"Cosh", "cosh"},
        {"Asinh", "asinh"}, {"Acosh", "acosh"}, {"Atanh", "atanh"},
    };
    for (const auto& [onnx_op, op] : trig) {
        std::string name = op;
        t[onnx_op] = [name](NodeCtx& ctx) { ctx.emit(name, {ctx.input(0)}); };
    }
    t["Shrink"] = [](NodeCtx& ctx) {
        ctx.emit("nn.shrink", {ctx.input(0)},
                 {{"lambd", ctx.attr_float("lambd", 0.5)}, {"bias", ctx.attr_float("bias", 0.0)}});
    };
    // BitCast-26: the bits read as `to`. Integers and bool convert exactly
    // (narrow unsigned outputs are wrapped by onnx_dtype.cpp); a float and an
    // integer of one width reinterpret their bits.
    t["BitCast"] = [](NodeCtx& ctx) {
        const graph::DType from = ctx.input_type(0).dtype;
        const int to_elem = int(ctx.attr_int("to", 0));
        const graph::DType to = dtype_from_onnx(to_elem, ctx.where() + ": to");
        const bool from_float = from == graph::DType::Float32 || from == graph::DType::Float64;
        const bool to_float = to == graph::DType::Float32 || to == graph::DType::Float64;
        TS_USER_CHECK(!is_boundary_elem_type(to_elem) || !to_float)
            << ctx.where() << ": BitCast to a narrow float type is not supported";
        if (from_float == to_float && from != to) {
            TS_USER_CHECK(!from_float)
                << ctx.where() << ": BitCast between float types is not supported";
            ctx.emit("cast", {ctx.input(0)}, {{"dtype", std::string(graph::dtype_name(to))}});
            return;
        }
        if (from == to) {
            ctx.emit("cast", {ctx.input(0)}, {{"dtype", std::string(graph::dtype_name(to))}});
            return;
        }
        // float <-> integer: reinterpret at the float's width, then widen.
        const graph::DType same =
            from_float
                ? (from == graph::DType::Float32 ? graph::DType::Int32 : graph::DType::Int64)
                : (graph::dtype_bytes(from) == 4 ? graph::DType::Float32 : graph::DType::Float64);
        TS_USER_CHECK(graph::dtype_bytes(same) == graph::dtype_bytes(from))
            << ctx.where() << ": BitCast of " << graph::dtype_name(from) << " is not supported";
        if (same == to) {
            ctx.emit("bitcast", {ctx.input(0)}, {{"dtype", std::string(graph::dtype_name(to))}});
            return;
        }
        const int bits = ctx.emit_internal("bitcast", {ctx.input(0)},
                                           {{"dtype", std::string(graph::dtype_name(same))}});
        ctx.emit("cast", {bits}, {{"dtype", std::string(graph::dtype_name(to))}});
    };
    for (const char* op : {"BitwiseAnd", "BitwiseOr", "BitwiseXor"}) {
        const std::string graph_op = std::string(op) == "BitwiseAnd"  ? "bitwise_and"
                                     : std::string(op) == "BitwiseOr" ? "bitwise_or"
                                                                      : "bitwise_xor";
        t[op] = [graph_op](NodeCtx& ctx) { ctx.emit(graph_op, {ctx.input(0), ctx.input(1)}); };
    }
    t["BitwiseNot"] = [](NodeCtx& ctx) { ctx.emit("bitwise_not", {ctx.input(0)}); };
    t["BitShift"] = [](NodeCtx& ctx) {
        std::string dir = ctx.attr_str("direction", "");
        TS_USER_CHECK(dir == "LEFT" || dir == "RIGHT")
            << ctx.where() << ": direction must be LEFT or RIGHT, got '" << dir << "'";
        ctx.emit(dir == "LEFT" ? "left_shift" : "right_shift", {ctx.input(0), ctx.input(1)});
    };
    t["Hardmax"] = convert_hardmax;
    t["OneHot"] = convert_one_hot;
    t["EyeLike"] = convert_eye_like;
    t["LRN"] = [](NodeCtx& ctx) {
        TS_USER_CHECK(ctx.has_attr("size")) << ctx.where() << ": missing attribute 'size'";
        ctx.emit("nn.lrn", {ctx.input(0)},
                 {{"size", ctx.attr_int("size", 1)},
                  {"alpha", ctx.attr_float("alpha", 1e-4)},
                  {"beta", ctx.attr_float("beta", 0.75)},
                  {"bias", ctx.attr_float("bias", 1.0)}});
    };
    t["MeanVarianceNormalization"] = convert_mvn;
    t["Det"] = [](NodeCtx& ctx) { ctx.emit("det", {ctx.input(0)}); };
    t["HannWindow"] = window(0);
    t["HammingWindow"] = window(1);
    t["BlackmanWindow"] = window(2);
    t["MelWeightMatrix"] = convert_mel_weight_matrix;
    t["DFT"] = convert_dft;
    t["STFT"] = convert_stft;
    add_quant_converters(t);
}

}  // namespace tessera::frontend::onnx_import
