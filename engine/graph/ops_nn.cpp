// Neural-network graph ops (nn.*): descriptions, fusion patterns, shape rules.
#include <algorithm>

#include "engine/core/error.h"
#include "engine/graph/op_table.h"

namespace tessera::graph::detail {

namespace {

using Types = std::vector<TensorType>;

Types infer_conv2d(const Node& n, const Types& in) {
    expect_arity(n, in, 2, 3);
    // 8-bit data (a quantized conv's, read as float(x) * w; padded with
    // pad_value) or float32.
    const bool bytes = in[0].dtype == DType::UInt8 || in[0].dtype == DType::Int8;
    if (bytes)
        TS_USER_CHECK(in[0].shape.size() == 4)
            << where(n) << ": input 0 must have rank 4, got " << in[0].str();
    else
        expect_float(n, in, 0, 4);
    TS_USER_CHECK(!n.attrs.count("pad_value") || bytes)
        << where(n) << ": pad_value is for 8-bit data, got " << in[0].str();
    expect_float(n, in, 1, 4);
    const auto& x = in[0].shape;
    const auto& w = in[1].shape;
    int64_t groups = n.attr_int("groups", 1);
    TS_USER_CHECK(groups >= 1) << where(n) << ": groups must be >= 1";
    TS_USER_CHECK(x[1] == w[1] * groups)
        << where(n) << ": input has " << x[1] << " channels but the weight " << shape_str(w)
        << " with groups=" << groups << " expects " << w[1] * groups;
    TS_USER_CHECK(w[0] % groups == 0)
        << where(n) << ": " << w[0] << " output channels not divisible by groups=" << groups;
    if (in.size() == 3) {
        expect_float(n, in, 2, 1);
        TS_USER_CHECK(in[2].shape[0] == w[0]) << where(n) << ": bias " << in[2].str()
                                              << " does not match " << w[0] << " output channels";
    }
    auto strides = ints_of_size(n, "strides", 2, 1);
    auto pad = ints_of_size(n, "padding", 4, 0);
    auto dil = ints_of_size(n, "dilation", 2, 1);
    int64_t oh = window_out(n, x[2], pad[0], pad[2], w[2], strides[0], dil[0], false);
    int64_t ow = window_out(n, x[3], pad[1], pad[3], w[3], strides[1], dil[1], false);
    return {TensorType{DType::Float32, {x[0], w[0], oh, ow}}};
}

// float32, or float64 for both operands (models that compute in double).
void expect_float_or_double(const Node& n, const Types& in) {
    const bool doubles = !in.empty() && in[0].dtype == DType::Float64;
    for (size_t i = 0; i < in.size(); ++i) {
        if (!doubles) {
            expect_float(n, in, i, -1);
            continue;
        }
        TS_USER_CHECK(in[i].dtype == DType::Float64)
            << where(n) << ": input " << i << " must be float64 as input 0, got " << in[i].str();
    }
}

Types infer_matmul(const Node& n, const Types& in) {
    expect_arity(n, in, 2, 2);
    expect_float_or_double(n, in);
    std::vector<int64_t> a = in[0].shape, b = in[1].shape;
    TS_USER_CHECK(!a.empty() && !b.empty()) << where(n) << ": matmul of a scalar";
    bool a_vec = a.size() == 1, b_vec = b.size() == 1;
    if (a_vec) a.insert(a.begin(), 1);
    if (b_vec) b.push_back(1);
    TS_USER_CHECK(a.back() == b[b.size() - 2])
        << where(n) << ": inner dimensions of " << in[0].str() << " and " << in[1].str()
        << " differ";
    std::vector<int64_t> batch = broadcast_shapes(n, std::vector<int64_t>(a.begin(), a.end() - 2),
                                                  std::vector<int64_t>(b.begin(), b.end() - 2));
    std::vector<int64_t> out = batch;
    if (!a_vec) out.push_back(a[a.size() - 2]);
    if (!b_vec) out.push_back(b.back());
    return {TensorType{in[0].dtype, out}};
}

Types infer_gemm(const Node& n, const Types& in) {
    expect_arity(n, in, 2, 3);
    expect_float(n, in, 0, 2);
    expect_float(n, in, 1, 2);
    const auto& a = in[0].shape;
    const auto& b = in[1].shape;
    bool ta = n.attr_int("transA", 0) != 0, tb = n.attr_int("transB", 0) != 0;
    int64_t m = ta ? a[1] : a[0], ka = ta ? a[0] : a[1];
    int64_t kb = tb ? b[1] : b[0], nn = tb ? b[0] : b[1];
    TS_USER_CHECK(ka == kb) << where(n) << ": inner dimensions of " << in[0].str() << " and "
                            << in[1].str() << " differ (transA=" << ta << ", transB=" << tb << ")";
    if (in.size() == 3) {
        expect_float(n, in, 2, -1);
        TS_USER_CHECK(in[2].shape.size() <= 2)
            << where(n) << ": C must have rank <= 2, got " << in[2].str();
        auto c = broadcast_shapes(n, in[2].shape, {m, nn});
        TS_USER_CHECK(c == std::vector<int64_t>({m, nn}))
            << where(n) << ": C " << in[2].str() << " does not broadcast to " << shape_str({m, nn});
    }
    return {TensorType{DType::Float32, {m, nn}}};
}

Types infer_same(const Node& n, const Types& in) {
    expect_arity(n, in, 1, 1);
    expect_float(n, in, 0, -1);
    return {in[0]};
}

Types infer_max_pool2d(const Node& n, const Types& in) {
    expect_arity(n, in, 1, 1);
    const DType dt = in[0].dtype;
    TS_USER_CHECK((dt == DType::Float32 || dt == DType::UInt8 || dt == DType::Int8) &&
                  in[0].shape.size() == 4)
        << where(n) << ": input must be a 4-D float32, uint8 or int8 tensor, got " << in[0].str();
    const auto& x = in[0].shape;
    auto k = ints_of_size(n, "kernel", 2, 1);
    auto strides = ints_of_size(n, "strides", 2, 1);
    auto pad = ints_of_size(n, "padding", 4, 0);
    auto dil = ints_of_size(n, "dilation", 2, 1);
    TS_USER_CHECK(n.attrs.count("kernel")) << where(n) << ": missing attribute 'kernel'";
    bool ceil_mode = n.attr_int("ceil_mode", 0) != 0;
    for (size_t i = 0; i < 2; ++i) {
        TS_USER_CHECK(pad[i] < dil[i] * (k[i] - 1) + 1 && pad[i + 2] < dil[i] * (k[i] - 1) + 1)
            << where(n) << ": padding must be smaller than the window";
    }
    int64_t oh = window_out(n, x[2], pad[0], pad[2], k[0], strides[0], dil[0], ceil_mode);
    int64_t ow = window_out(n, x[3], pad[1], pad[3], k[1], strides[1], dil[1], ceil_mode);
    return {TensorType{dt, {x[0], x[1], oh, ow}}};
}

Types infer_global_avg_pool2d(const Node& n, const Types& in) {
    expect_arity(n, in, 1, 1);
    expect_float(n, in, 0, 4);
    const auto& x = in[0].shape;
    return {TensorType{DType::Float32, {x[0], x[1], 1, 1}}};
}

Types infer_softmax(const Node& n, const Types& in) {
    expect_arity(n, in, 1, 1);
    expect_float_or_double(n, in);
    int64_t rank = int64_t(in[0].shape.size());
    int64_t axis = n.attr_int("axis", rank - 1);
    if (axis < 0) axis += rank;  // numpy-style negative axis, as the compute accepts
    TS_USER_CHECK(axis >= 0 && axis < std::max<int64_t>(rank, 1))
        << where(n) << ": axis " << axis << " out of range for " << in[0].str();
    return {in[0]};
}

// A [.., Sq, D], B [.., D, Sk], V [.., Sk, Dv] with the same batch dims, an
// optional additive mask that broadcasts to the scores [.., Sq, Sk].
Types infer_attention(const Node& n, const Types& in) {
    expect_arity(n, in, 3, 4);
    const bool fills = n.attrs.count("mask_fill") != 0;
    for (size_t i = 0; i < 3; ++i) expect_float(n, in, i, -1);
    if (in.size() == 4 && !fills) expect_float(n, in, 3, -1);
    TS_USER_CHECK(!fills || (in.size() == 4 && in[3].dtype == DType::Bool))
        << where(n) << ": mask_fill needs a bool mask (where(mask, scores, mask_fill))";
    const auto& a = in[0].shape;
    const auto& b = in[1].shape;
    const auto& v = in[2].shape;
    const size_t r = a.size();
    TS_USER_CHECK(r >= 2 && b.size() == r && v.size() == r)
        << where(n) << ": Q, K^T and V must have one rank of at least 2, got " << in[0].str()
        << ", " << in[1].str() << ", " << in[2].str();
    TS_USER_CHECK(std::equal(a.begin(), a.end() - 2, b.begin()) &&
                  std::equal(a.begin(), a.end() - 2, v.begin()))
        << where(n) << ": Q, K^T and V must have the same batch dims, got " << in[0].str() << ", "
        << in[1].str() << ", " << in[2].str();
    TS_USER_CHECK(b[r - 2] == a[r - 1] && v[r - 2] == b[r - 1])
        << where(n) << ": Q " << in[0].str() << " x K^T " << in[1].str() << " x V " << in[2].str()
        << " do not chain";
    std::vector<int64_t> scores = a;
    scores[r - 1] = b[r - 1];
    if (in.size() == 4) {
        TS_USER_CHECK(broadcast_shapes(n, scores, in[3].shape) == scores)
            << where(n) << ": mask " << in[3].str() << " does not broadcast to the scores "
            << shape_str(scores);
    }
    std::vector<int64_t> out = a;
    out[r - 1] = v[r - 1];
    return {TensorType{DType::Float32, out}};
}

}  // namespace

void add_nn_ops(std::vector<OpDef>& table) {
    table.push_back(
        {"nn.conv2d",
         "2-D convolution, NCHW data and KCRS weights, optional bias (K); strides, padding "
         "(top, left, bottom, right), dilation, groups; uint8 / int8 data computes "
         "float(x) * w, padded with pad_value",
         OpPattern::OutEWiseFusable, infer_conv2d});
    table.push_back({"nn.matmul",
                     "Matrix product with numpy semantics (1-D operands, broadcast batch dims)",
                     OpPattern::OutEWiseFusable, infer_matmul});
    table.push_back({"nn.gemm",
                     "alpha * op(A) * op(B) + beta * C with optional transposes (ONNX Gemm)",
                     OpPattern::OutEWiseFusable, infer_gemm});
    table.push_back(
        {"nn.relu", "Rectified linear unit max(x, 0)", OpPattern::ElemWise, infer_same});
    table.push_back({"nn.max_pool2d",
                     "2-D max pooling over NCHW (float32, uint8, int8); kernel, strides, padding, "
                     "dilation, ceil_mode (pads never win)",
                     OpPattern::OutEWiseFusable, infer_max_pool2d});
    table.push_back({"nn.global_avg_pool2d", "Mean over H and W of NCHW data, giving (N, C, 1, 1)",
                     OpPattern::CommReduce, infer_global_avg_pool2d});
    table.push_back(
        {"nn.softmax",
         "Softmax along axis; coerce=1 normalises over all dims from axis on (ONNX opset < 13)",
         OpPattern::Opaque, infer_softmax});
    table.push_back({"nn.attention",
                     "Scaled dot-product attention softmax(Q K^T * scale + mask) V along the last "
                     "axis; inputs Q [.., Sq, D], K^T [.., D, Sk], V [.., Sk, Dv], optional "
                     "additive mask; scale (default 1); with mask_fill the mask is bool and "
                     "where(mask, scores, mask_fill) replaces the add",
                     OpPattern::Opaque, infer_attention});
}

}  // namespace tessera::graph::detail
