// Reductions (reduce_*, argmax/argmin, cumsum, topk), log_softmax and the
// normalizations (batch, layer and instance norm) with their shape rules.
#include <algorithm>

#include "engine/core/error.h"
#include "engine/graph/op_table.h"

namespace tessera::graph::detail {

namespace {

using Types = std::vector<TensorType>;

int64_t checked_axis(const Node& n, const TensorType& t, int64_t axis) {
    int64_t rank = int64_t(t.shape.size());
    TS_USER_CHECK(axis >= 0 && axis < rank)
        << where(n) << ": axis " << axis << " out of range for " << t.str();
    return axis;
}

Types infer_reduce(const Node& n, const Types& in) {
    expect_arity(n, in, 1, 1);
    std::vector<int64_t> axes = n.attr_ints("axes");
    bool keep = n.attr_int("keepdims", 1) != 0;
    std::vector<bool> reduced(in[0].shape.size(), false);
    for (int64_t a : axes) {
        checked_axis(n, in[0], a);
        TS_USER_CHECK(!reduced[size_t(a)]) << where(n) << ": axis " << a << " given twice";
        reduced[size_t(a)] = true;
    }
    std::vector<int64_t> out;
    for (size_t i = 0; i < reduced.size(); ++i) {
        if (!reduced[i])
            out.push_back(in[0].shape[i]);
        else if (keep)
            out.push_back(1);
    }
    return {TensorType{in[0].dtype, out}};
}

Types infer_arg(const Node& n, const Types& in) {
    expect_arity(n, in, 1, 1);
    int64_t axis = checked_axis(n, in[0], n.attr_int("axis", 0));
    std::vector<int64_t> out = in[0].shape;
    if (n.attr_int("keepdims", 1) != 0)
        out[size_t(axis)] = 1;
    else
        out.erase(out.begin() + axis);
    return {TensorType{DType::Int64, out}};
}

Types infer_axis_same(const Node& n, const Types& in) {
    expect_arity(n, in, 1, 1);
    checked_axis(n, in[0], n.attr_int("axis", 0));
    return {in[0]};
}

Types infer_topk(const Node& n, const Types& in) {
    expect_arity(n, in, 1, 1);
    int64_t axis = checked_axis(n, in[0], n.attr_int("axis", 0));
    int64_t k = n.attr_int("k", 1);
    TS_USER_CHECK(k >= 0 && k <= in[0].shape[size_t(axis)])
        << where(n) << ": k=" << k << " exceeds axis " << axis << " of " << in[0].str();
    std::vector<int64_t> out = in[0].shape;
    out[size_t(axis)] = k;
    return {TensorType{in[0].dtype, out}, TensorType{DType::Int64, out}};
}

void expect_channel_param(const Node& n, const Types& in, size_t i, int64_t c) {
    TS_USER_CHECK(in[i].shape == std::vector<int64_t>({c}) && in[i].dtype == in[0].dtype)
        << where(n) << ": input " << i << " must have shape (" << c << ") and the data's dtype, got "
        << in[i].str();
}

Types infer_batch_norm(const Node& n, const Types& in) {
    expect_arity(n, in, 5, 5);
    expect_float(n, in, 0, -1);
    TS_USER_CHECK(in[0].shape.size() >= 2) << where(n) << ": input must have rank >= 2";
    for (size_t i = 1; i < 5; ++i) expect_channel_param(n, in, i, in[0].shape[1]);
    return {in[0]};
}

Types infer_instance_norm(const Node& n, const Types& in) {
    expect_arity(n, in, 3, 3);
    expect_float(n, in, 0, -1);
    TS_USER_CHECK(in[0].shape.size() >= 3) << where(n) << ": input must have rank >= 3";
    for (size_t i = 1; i < 3; ++i) expect_channel_param(n, in, i, in[0].shape[1]);
    return {in[0]};
}

Types infer_layer_norm(const Node& n, const Types& in) {
    expect_arity(n, in, 2, 3);
    expect_float(n, in, 0, -1);
    int64_t axis = checked_axis(n, in[0], n.attr_int("axis", 0));
    std::vector<int64_t> norm(in[0].shape.begin() + axis, in[0].shape.end());
    for (size_t i = 1; i < in.size(); ++i) {
        std::vector<int64_t> b = broadcast_shapes(n, norm, in[i].shape);
        TS_USER_CHECK(b == norm) << where(n) << ": input " << i << " " << in[i].str()
                                 << " does not broadcast to the normalized shape "
                                 << shape_str(norm);
    }
    Types out = {in[0]};
    if (n.attr_int("stats", 0) != 0) {
        std::vector<int64_t> s = in[0].shape;
        for (size_t i = size_t(axis); i < s.size(); ++i) s[i] = 1;
        out.push_back({in[0].dtype, s});
        out.push_back({in[0].dtype, s});
    }
    return out;
}

}  // namespace

void add_reduce_ops(std::vector<OpDef>& table) {
    const char* const reduces[][2] = {
        {"reduce_sum", "Sum over axes (keepdims keeps them with extent 1)"},
        {"reduce_mean", "Mean over axes"},
        {"reduce_max", "Maximum over axes"},
        {"reduce_min", "Minimum over axes"},
        {"reduce_prod", "Product over axes"},
        {"reduce_l1", "Sum of |x| over axes"},
        {"reduce_l2", "Square root of the sum of squares over axes"},
        {"reduce_sum_square", "Sum of squares over axes"},
        {"reduce_log_sum", "log of the sum over axes"},
        {"reduce_log_sum_exp", "log of the sum of e^x over axes (max-shifted)"},
    };
    for (const auto& r : reduces) table.push_back({r[0], r[1], OpPattern::CommReduce, infer_reduce});
    table.push_back({"argmax", "Index (int64) of the largest value along axis; select_last_index",
                     OpPattern::CommReduce, infer_arg});
    table.push_back({"argmin", "Index (int64) of the smallest value along axis; select_last_index",
                     OpPattern::CommReduce, infer_arg});
    table.push_back({"cumsum", "Cumulative sum along axis; exclusive, reverse",
                     OpPattern::Opaque, infer_axis_same});
    table.push_back({"cumprod", "Cumulative product along axis; exclusive, reverse",
                     OpPattern::Opaque, infer_axis_same});
    table.push_back({"topk",
                     "The k largest (largest=1) or smallest values along axis, sorted, and their "
                     "int64 indices (ties: lower index first)",
                     OpPattern::Opaque, infer_topk});
    table.push_back({"nn.log_softmax", "log(softmax(x)) along axis, computed as x - max - log(sum)",
                     OpPattern::Opaque, infer_axis_same});
    table.push_back({"nn.batch_norm",
                     "Inference batch norm: (x - mean) / sqrt(var + epsilon) * gamma + beta over "
                     "channel axis 1; inputs x, gamma, beta, mean, var",
                     OpPattern::Broadcast, infer_batch_norm});
    table.push_back({"nn.instance_norm",
                     "Normalizes each (n, c) over the spatial dims, then * gamma[c] + beta[c]",
                     OpPattern::Opaque, infer_instance_norm});
    table.push_back({"nn.layer_norm",
                     "Normalizes over dims [axis, rank), then * gamma + beta (broadcast); stats=1 "
                     "also outputs the mean and 1/stddev",
                     OpPattern::Opaque, infer_layer_norm});
}

}  // namespace tessera::graph::detail
