// Graph ops for extra elementwise/unary/window/quantization ops: inverse and
// hyperbolic trigonometry, shrink, bit shifts, LRN, determinant, DFT and STFT.
// (Quantization, windows, Hardmax, OneHot, EyeLike and MVN are expanded at
// import into existing ops; see onnx_math_signal.cpp.)
#include <string>

#include "engine/core/error.h"
#include "engine/graph/op_table.h"

namespace tessera::graph::detail {

namespace {

using Types = std::vector<TensorType>;

Types infer_unary_float(const Node& n, const Types& in) {
    expect_arity(n, in, 1, 1);
    TS_USER_CHECK(in[0].dtype == DType::Float32 || in[0].dtype == DType::Float64)
        << where(n) << ": input must be floating point, got " << in[0].str();
    return {in[0]};
}

// left_shift / right_shift / bitwise_and / bitwise_or / bitwise_xor:
// integers of one dtype, numpy broadcasting.
Types infer_integer_binary(const Node& n, const Types& in) {
    expect_arity(n, in, 2, 2);
    TS_USER_CHECK(in[0].dtype == in[1].dtype)
        << where(n) << ": operand types differ: " << in[0].str() << " and " << in[1].str();
    const std::string dt = dtype_name(in[0].dtype);
    TS_USER_CHECK(dt.find("int") != std::string::npos)
        << where(n) << ": bit operations need integers, got " << in[0].str();
    return {TensorType{in[0].dtype, broadcast_shapes(n, in[0].shape, in[1].shape)}};
}

// bitwise_not: one integer operand.
Types infer_integer_unary(const Node& n, const Types& in) {
    expect_arity(n, in, 1, 1);
    TS_USER_CHECK(std::string(dtype_name(in[0].dtype)).find("int") != std::string::npos)
        << where(n) << ": bit operations need integers, got " << in[0].str();
    return {in[0]};
}

// nn.lrn: (N, C, ...) float32, window of `size` channels.
Types infer_lrn(const Node& n, const Types& in) {
    expect_arity(n, in, 1, 1);
    expect_float(n, in, 0, -1);
    TS_USER_CHECK(in[0].shape.size() >= 2)
        << where(n) << ": input must have rank >= 2 (N, C, ...), got " << in[0].str();
    TS_USER_CHECK(n.attr_int("size", 0) >= 1)
        << where(n) << ": size must be >= 1, got " << n.attr_int("size", 0);
    return {in[0]};
}

// det: (..., M, M) -> (...); the closed-form expansion limits M.
Types infer_det(const Node& n, const Types& in) {
    expect_arity(n, in, 1, 1);
    expect_float(n, in, 0, -1);
    const auto& s = in[0].shape;
    TS_USER_CHECK(s.size() >= 2 && s[s.size() - 1] == s[s.size() - 2])
        << where(n) << ": input must be (..., M, M), got " << in[0].str();
    TS_USER_CHECK(s.back() >= 1 && s.back() <= 5)
        << where(n) << ": determinants of " << s.back() << "x" << s.back()
        << " matrices are not supported (at most 5x5)";
    return {TensorType{in[0].dtype, std::vector<int64_t>(s.begin(), s.end() - 2)}};
}

// The number of frequency bins of a transform of length `length`; an
// inverse one-sided transform (irfft) gives `length` real samples.
int64_t dft_bins(const Node& n, int64_t length) {
    const bool irfft = n.attr_int("inverse", 0) != 0 && n.attr_int("onesided", 0) != 0;
    return n.attr_int("onesided", 0) != 0 && !irfft ? length / 2 + 1 : length;
}

// dft: (batch, signal..., 1|2) -> same with axis extent = bins and last dim 2
// (inverse one-sided: complex bins -> `length` real samples, last dim 1).
Types infer_dft(const Node& n, const Types& in) {
    expect_arity(n, in, 1, 1);
    expect_float(n, in, 0, -1);
    auto s = in[0].shape;
    TS_USER_CHECK(s.size() >= 3 && (s.back() == 1 || s.back() == 2))
        << where(n) << ": input must be (batch, signal..., 1 or 2), got " << in[0].str();
    int64_t axis = n.attr_int("axis", 1);
    TS_USER_CHECK(axis >= 1 && axis < int64_t(s.size()) - 1)
        << where(n) << ": axis " << axis << " is not a signal axis of " << in[0].str();
    const bool irfft = n.attr_int("inverse", 0) != 0 && n.attr_int("onesided", 0) != 0;
    // irfft's default length: 2 (bins - 1), numpy's.
    int64_t length = n.attr_int("length", irfft ? 2 * (s[size_t(axis)] - 1) : s[size_t(axis)]);
    TS_USER_CHECK(length >= 1) << where(n) << ": dft length must be >= 1, got " << length;
    TS_USER_CHECK(!irfft || s.back() == 2)
        << where(n) << ": an inverse one-sided DFT needs complex input (last dim 2), got "
        << in[0].str();
    s[size_t(axis)] = dft_bins(n, length);
    s.back() = irfft ? 1 : 2;  // irfft: real samples
    return {TensorType{DType::Float32, s}};
}

// stft: signal (batch, length, 1|2) [, window (frame_length)] ->
// (batch, frames, bins, 2).
Types infer_stft(const Node& n, const Types& in) {
    expect_arity(n, in, 1, 2);
    expect_float(n, in, 0, 3);
    const auto& s = in[0].shape;
    TS_USER_CHECK(s[2] == 1 || s[2] == 2)
        << where(n) << ": signal must be (batch, length, 1 or 2), got " << in[0].str();
    int64_t frame = n.attr_int("frame_length", 0), step = n.attr_int("frame_step", 0);
    if (in.size() == 2) {
        expect_float(n, in, 1, 1);
        TS_USER_CHECK(frame == in[1].shape[0])
            << where(n) << ": window " << in[1].str() << " does not match frame_length " << frame;
    }
    TS_USER_CHECK(frame >= 1 && frame <= s[1] && step >= 1)
        << where(n) << ": frame_length " << frame << " and frame_step " << step
        << " do not fit a signal of length " << s[1];
    return {TensorType{DType::Float32, {s[0], (s[1] - frame) / step + 1, dft_bins(n, frame), 2}}};
}

}  // namespace

void add_math_signal_ops(std::vector<OpDef>& table) {
    const std::pair<const char*, const char*> trig[] = {
        {"tan", "Elementwise tangent"},
        {"asin", "Elementwise arcsine"},
        {"acos", "Elementwise arccosine"},
        {"atan", "Elementwise arctangent"},
        {"sinh", "Elementwise hyperbolic sine"},
        {"cosh", "Elementwise hyperbolic cosine"},
        {"asinh", "Elementwise inverse hyperbolic sine"},
        {"acosh", "Elementwise inverse hyperbolic cosine"},
        {"atanh", "Elementwise inverse hyperbolic tangent"},
    };
    for (const auto& [name, desc] : trig)
        table.push_back({name, desc, OpPattern::ElemWise, infer_unary_float});
    table.push_back({"nn.shrink", "Elementwise x < -lambd ? x + bias : x > lambd ? x - bias : 0",
                     OpPattern::ElemWise, infer_unary_float});
    table.push_back({"left_shift", "Elementwise a << b of integers (0 when b >= bits)",
                     OpPattern::Broadcast, infer_integer_binary});
    table.push_back({"right_shift",
                     "Elementwise a >> b of integers, arithmetic when signed (0 when b >= bits)",
                     OpPattern::Broadcast, infer_integer_binary});
    table.push_back({"bitwise_and", "Elementwise a & b of integers", OpPattern::Broadcast,
                     infer_integer_binary});
    table.push_back({"bitwise_or", "Elementwise a | b of integers", OpPattern::Broadcast,
                     infer_integer_binary});
    table.push_back({"bitwise_xor", "Elementwise a ^ b of integers", OpPattern::Broadcast,
                     infer_integer_binary});
    table.push_back({"bitwise_not", "Elementwise ~a of integers", OpPattern::ElemWise,
                     infer_integer_unary});
    table.push_back({"nn.lrn",
                     "Local response normalization across channels: x / (bias + alpha / size * "
                     "sum of squares in the window)^beta",
                     OpPattern::Opaque, infer_lrn});
    table.push_back({"det", "Determinant of each (M, M) matrix of the last two axes (M <= 5)",
                     OpPattern::Opaque, infer_det});
    table.push_back({"dft",
                     "Discrete Fourier transform along attribute axis of real (1) or complex (2) "
                     "input; inverse, onesided, length (zero-pad or truncate)",
                     OpPattern::Opaque, infer_dft});
    table.push_back({"stft",
                     "Short-time Fourier transform of (batch, length, 1|2) frames of "
                     "frame_length every frame_step, optionally windowed; onesided",
                     OpPattern::Opaque, infer_stft});
}

}  // namespace tessera::graph::detail
