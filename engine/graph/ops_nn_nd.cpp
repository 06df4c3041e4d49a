// 3-D nn.* graph ops (nn.conv3d, nn.max_pool3d, nn.avg_pool3d; NCDHW data,
// padding as (begins..., ends...)) and einsum (explicit "ab,bc->ac" equations).
#include <algorithm>
#include <cctype>
#include <map>

#include "engine/core/error.h"
#include "engine/graph/op_table.h"

namespace tessera::graph::detail {

namespace {

using Types = std::vector<TensorType>;

constexpr size_t kSpatial = 3;

Types infer_conv3d(const Node& n, const Types& in) {
    expect_arity(n, in, 2, 3);
    expect_float(n, in, 0, 5);
    expect_float(n, in, 1, 5);
    const auto& x = in[0].shape;
    const auto& w = in[1].shape;
    int64_t groups = n.attr_int("groups", 1);
    TS_USER_CHECK(groups >= 1 && x[1] == w[1] * groups && w[0] % groups == 0)
        << where(n) << ": input " << in[0].str() << " does not fit the weight " << shape_str(w)
        << " with groups=" << groups;
    if (in.size() == 3) {
        expect_float(n, in, 2, 1);
        TS_USER_CHECK(in[2].shape[0] == w[0]) << where(n) << ": bias " << in[2].str()
                                              << " does not match " << w[0] << " output channels";
    }
    auto s = ints_of_size(n, "strides", kSpatial, 1);
    auto p = ints_of_size(n, "padding", 2 * kSpatial, 0);
    auto d = ints_of_size(n, "dilation", kSpatial, 1);
    std::vector<int64_t> out = {x[0], w[0]};
    for (size_t i = 0; i < kSpatial; ++i)
        out.push_back(
            window_out(n, x[i + 2], p[i], p[i + kSpatial], w[i + 2], s[i], d[i], false));
    return {TensorType{DType::Float32, out}};
}

Types infer_pool3d(const Node& n, const Types& in) {
    expect_arity(n, in, 1, 1);
    expect_float(n, in, 0, 5);
    TS_USER_CHECK(n.attrs.count("kernel")) << where(n) << ": missing attribute 'kernel'";
    const auto& x = in[0].shape;
    auto k = ints_of_size(n, "kernel", kSpatial, 1);
    auto s = ints_of_size(n, "strides", kSpatial, 1);
    auto p = ints_of_size(n, "padding", 2 * kSpatial, 0);
    auto d = ints_of_size(n, "dilation", kSpatial, 1);
    bool ceil_mode = n.attr_int("ceil_mode", 0) != 0;
    std::vector<int64_t> out = {x[0], x[1]};
    for (size_t i = 0; i < kSpatial; ++i)
        out.push_back(
            window_out(n, x[i + 2], p[i], p[i + kSpatial], k[i], s[i], d[i], ceil_mode));
    return {TensorType{in[0].dtype, out}};
}

Types infer_conv3d_transpose(const Node& n, const Types& in) {
    expect_arity(n, in, 2, 3);
    expect_float(n, in, 0, 5);
    expect_float(n, in, 1, 5);
    const auto& x = in[0].shape;
    const auto& w = in[1].shape;  // (C, K / groups, T, R, S)
    int64_t groups = n.attr_int("groups", 1);
    TS_USER_CHECK(groups >= 1 && x[1] == w[0] && w[0] % groups == 0)
        << where(n) << ": input channels " << x[1] << " do not match the weight " << shape_str(w)
        << " with groups=" << groups;
    int64_t k = w[1] * groups;
    if (in.size() == 3)
        TS_USER_CHECK(in[2].shape == std::vector<int64_t>({k}))
            << where(n) << ": bias " << in[2].str() << " does not match " << k << " channels";
    auto s = ints_of_size(n, "strides", kSpatial, 1);
    auto p = ints_of_size(n, "padding", 2 * kSpatial, 0);
    auto d = ints_of_size(n, "dilation", kSpatial, 1);
    auto op = ints_of_size(n, "output_padding", kSpatial, 0);
    std::vector<int64_t> out = {x[0], k};
    for (size_t i = 0; i < kSpatial; ++i) {
        TS_USER_CHECK(s[i] >= 1 && d[i] >= 1 && p[i] >= 0 && p[i + kSpatial] >= 0 && op[i] >= 0)
            << where(n) << ": strides and dilations must be positive, pads non-negative";
        out.push_back((x[i + 2] - 1) * s[i] - p[i] - p[i + kSpatial] + d[i] * (w[i + 2] - 1) +
                      op[i] + 1);
        TS_USER_CHECK(out.back() > 0) << where(n) << ": empty output";
    }
    return {TensorType{DType::Float32, out}};
}

Types infer_max_pool2d_indices(const Node& n, const Types& in) {
    const OpDef* pool = find_op("nn.max_pool2d");
    TS_CHECK(pool != nullptr) << "nn.max_pool2d is registered";
    Types t = pool->infer(n, in);
    t[0].dtype = DType::Int64;
    return t;
}

Types infer_einsum(const Node& n, const Types& in) {
    TS_USER_CHECK(!in.empty()) << where(n) << ": einsum needs at least one operand";
    std::string eq = n.attr_str("equation", "");
    auto arrow = eq.find("->");
    TS_USER_CHECK(arrow != std::string::npos)
        << where(n) << ": einsum equation '" << eq << "' needs an explicit '->' output";
    std::vector<std::string> terms(1);
    for (size_t i = 0; i < arrow; ++i) {
        if (eq[i] == ',') terms.emplace_back();
        else terms.back().push_back(eq[i]);
    }
    std::string outs = eq.substr(arrow + 2);
    TS_USER_CHECK(terms.size() == in.size())
        << where(n) << ": equation '" << eq << "' has " << terms.size() << " operands, got "
        << in.size();
    std::map<char, int64_t> extent;
    for (size_t t = 0; t < terms.size(); ++t) {
        TS_USER_CHECK((in[t].dtype == DType::Float32 || in[t].dtype == DType::Float64) &&
                      in[t].dtype == in[0].dtype)
            << where(n) << ": operands must all be float32 or all float64, got " << in[t].str();
        TS_USER_CHECK(terms[t].size() == in[t].shape.size())
            << where(n) << ": term '" << terms[t] << "' does not match operand " << in[t].str();
        for (size_t j = 0; j < terms[t].size(); ++j) {
            char c = terms[t][j];
            TS_USER_CHECK(std::isalpha(static_cast<unsigned char>(c)))
                << where(n) << ": label '" << c << "' (ellipsis is not supported)";
            auto [it, fresh] = extent.emplace(c, in[t].shape[j]);
            TS_USER_CHECK(fresh || it->second == in[t].shape[j])
                << where(n) << ": label '" << c << "' has extents " << it->second << " and "
                << in[t].shape[j];
        }
    }
    std::vector<int64_t> shape;
    for (char c : outs) {
        TS_USER_CHECK(extent.count(c)) << where(n) << ": output label '" << c << "' is unknown";
        TS_USER_CHECK(std::count(outs.begin(), outs.end(), c) == 1)
            << where(n) << ": output label '" << c << "' repeats";
        shape.push_back(extent[c]);
    }
    return {TensorType{in[0].dtype, shape}};
}

}  // namespace

void add_nn_nd_ops(std::vector<OpDef>& table) {
    table.push_back({"nn.conv3d",
                     "3-D convolution, NCDHW data and KCTRS weights, optional bias (K); strides, "
                     "padding (3 begins, 3 ends), dilation, groups",
                     OpPattern::OutEWiseFusable, infer_conv3d});
    table.push_back({"nn.max_pool3d",
                     "3-D max pooling over NCDHW; kernel, strides, padding (3 begins, 3 ends), "
                     "dilation, ceil_mode",
                     OpPattern::OutEWiseFusable, infer_pool3d});
    table.push_back({"nn.avg_pool3d",
                     "3-D average pooling over NCDHW; kernel, strides, padding, dilation, "
                     "ceil_mode, count_include_pad",
                     OpPattern::OutEWiseFusable, infer_pool3d});
    table.push_back({"nn.conv3d_transpose",
                     "3-D transposed convolution, NCDHW data and (C, K/groups, T, R, S) weights, "
                     "optional bias; strides, padding (3 begins, 3 ends), dilation, "
                     "output_padding, groups",
                     OpPattern::OutEWiseFusable, infer_conv3d_transpose});
    table.push_back({"nn.max_pool2d_indices",
                     "Flat input index (n, c, h, w row-major; storage_order=1: column-major "
                     "h, w) of each nn.max_pool2d output, the first maximum in the window",
                     OpPattern::Opaque, infer_max_pool2d_indices});
    table.push_back({"einsum",
                     "Einstein summation with an explicit equation 'ij,jk->ik' (no ellipsis): "
                     "sums over labels missing from the output",
                     OpPattern::Opaque, infer_einsum});
}

}  // namespace tessera::graph::detail
