// Data-movement graph ops: transpose, concatenate, strided_slice, take,
// gather_elements, broadcast_to, tile, pad.
#include <algorithm>

#include "engine/core/error.h"
#include "engine/graph/op_table.h"

namespace tessera::graph::detail {

namespace {

using Types = std::vector<TensorType>;

Types infer_transpose(const Node& n, const Types& in) {
    expect_arity(n, in, 1, 1);
    std::vector<int64_t> perm = n.attr_ints("axes");
    size_t rank = in[0].shape.size();
    TS_USER_CHECK(perm.size() == rank)
        << where(n) << ": axes " << shape_str(perm) << " is not a permutation of rank " << rank;
    std::vector<bool> seen(rank, false);
    std::vector<int64_t> out;
    for (int64_t p : perm) {
        TS_USER_CHECK(p >= 0 && p < int64_t(rank) && !seen[size_t(p)])
            << where(n) << ": axes " << shape_str(perm) << " is not a permutation";
        seen[size_t(p)] = true;
        out.push_back(in[0].shape[size_t(p)]);
    }
    return {TensorType{in[0].dtype, out}};
}

Types infer_concatenate(const Node& n, const Types& in) {
    TS_USER_CHECK(!in.empty()) << where(n) << ": needs at least one input";
    int64_t axis = n.attr_int("axis", 0);
    std::vector<int64_t> out = in[0].shape;
    TS_USER_CHECK(axis >= 0 && axis < int64_t(out.size()))
        << where(n) << ": axis " << axis << " out of range for " << in[0].str();
    for (size_t i = 1; i < in.size(); ++i) {
        const auto& s = in[i].shape;
        bool fits = s.size() == out.size() && in[i].dtype == in[0].dtype;
        for (size_t d = 0; fits && d < s.size(); ++d) fits = int64_t(d) == axis || s[d] == out[d];
        TS_USER_CHECK(fits) << where(n) << ": input " << i << " " << in[i].str()
                            << " does not fit " << in[0].str() << " along axis " << axis;
        out[size_t(axis)] += s[size_t(axis)];
    }
    return {TensorType{in[0].dtype, out}};
}

Types infer_strided_slice(const Node& n, const Types& in) {
    expect_arity(n, in, 1, 1);
    size_t rank = in[0].shape.size();
    auto b = n.attr_ints("begin"), e = n.attr_ints("end"), s = n.attr_ints("strides");
    TS_USER_CHECK(b.size() == rank && e.size() == rank && s.size() == rank)
        << where(n) << ": begin, end and strides need " << rank << " values each";
    std::vector<int64_t> out(rank);
    for (size_t d = 0; d < rank; ++d) {
        int64_t dim = in[0].shape[d];
        TS_USER_CHECK(s[d] != 0) << where(n) << ": stride 0";
        if (s[d] > 0) {
            TS_USER_CHECK(b[d] >= 0 && e[d] <= dim) << where(n) << ": slice out of bounds";
            out[d] = std::max<int64_t>(0, (e[d] - b[d] + s[d] - 1) / s[d]);
        } else {
            TS_USER_CHECK(b[d] < dim && e[d] >= -1) << where(n) << ": slice out of bounds";
            out[d] = std::max<int64_t>(0, (b[d] - e[d] - s[d] - 1) / -s[d]);
        }
    }
    return {TensorType{in[0].dtype, out}};
}

void expect_index(const Node& n, const Types& in, size_t i) {
    TS_USER_CHECK(in[i].dtype == DType::Int64 || in[i].dtype == DType::Int32)
        << where(n) << ": indices must be int64 or int32, got " << in[i].str();
}

Types infer_take(const Node& n, const Types& in) {
    expect_arity(n, in, 2, 2);
    expect_index(n, in, 1);
    int64_t axis = n.attr_int("axis", 0);
    const auto& s = in[0].shape;
    TS_USER_CHECK(axis >= 0 && axis < int64_t(s.size()))
        << where(n) << ": axis " << axis << " out of range for " << in[0].str();
    std::vector<int64_t> out(s.begin(), s.begin() + axis);
    out.insert(out.end(), in[1].shape.begin(), in[1].shape.end());
    out.insert(out.end(), s.begin() + axis + 1, s.end());
    return {TensorType{in[0].dtype, out}};
}

Types infer_gather_elements(const Node& n, const Types& in) {
    expect_arity(n, in, 2, 2);
    expect_index(n, in, 1);
    int64_t axis = n.attr_int("axis", 0);
    TS_USER_CHECK(in[0].shape.size() == in[1].shape.size() && axis >= 0 &&
                  axis < int64_t(in[0].shape.size()))
        << where(n) << ": data " << in[0].str() << " and indices " << in[1].str()
        << " need equal rank and axis " << axis << " in range";
    return {TensorType{in[0].dtype, in[1].shape}};
}

Types infer_broadcast_to(const Node& n, const Types& in) {
    expect_arity(n, in, 1, 1);
    return {TensorType{in[0].dtype, broadcast_shapes(n, in[0].shape, n.attr_ints("shape"))}};
}

Types infer_tile(const Node& n, const Types& in) {
    expect_arity(n, in, 1, 1);
    auto reps = n.attr_ints("reps");
    TS_USER_CHECK(reps.size() == in[0].shape.size())
        << where(n) << ": reps needs " << in[0].shape.size() << " values";
    std::vector<int64_t> out = in[0].shape;
    for (size_t i = 0; i < out.size(); ++i) {
        TS_USER_CHECK(reps[i] >= 0) << where(n) << ": negative repeat " << reps[i];
        out[i] *= reps[i];
    }
    return {TensorType{in[0].dtype, out}};
}

Types infer_pad(const Node& n, const Types& in) {
    expect_arity(n, in, 1, 1);
    size_t rank = in[0].shape.size();
    auto pads = n.attr_ints("pads");
    TS_USER_CHECK(pads.size() == 2 * rank) << where(n) << ": pads needs " << 2 * rank << " values";
    std::string mode = n.attr_str("mode", "constant");
    TS_USER_CHECK(mode == "constant" || mode == "reflect" || mode == "edge" || mode == "wrap")
        << where(n) << ": unknown pad mode '" << mode << "'";
    std::vector<int64_t> out = in[0].shape;
    for (size_t i = 0; i < rank; ++i) {
        out[i] += pads[i] + pads[i + rank];
        TS_USER_CHECK(out[i] >= 0) << where(n) << ": pads remove more than axis " << i << " holds";
        TS_USER_CHECK(mode == "constant" || (pads[i] >= 0 && pads[i + rank] >= 0 &&
                                             (in[0].shape[i] > 0)))
            << where(n) << ": " << mode << " padding needs non-negative pads";
    }
    return {TensorType{in[0].dtype, out}};
}

Types infer_resize(const Node& n, const Types& in) {
    expect_arity(n, in, 1, 1);
    expect_float(n, in, 0, -1);
    auto sizes = n.attr_ints("sizes");
    TS_USER_CHECK(sizes.size() == in[0].shape.size())
        << where(n) << ": sizes needs " << in[0].shape.size() << " values";
    for (int64_t s : sizes) TS_USER_CHECK(s >= 0) << where(n) << ": negative size " << s;
    return {TensorType{in[0].dtype, sizes}};
}

}  // namespace

void add_transform_ops(std::vector<OpDef>& table) {
    table.push_back({"transpose", "Permutes dims: out dim i is input dim axes[i]",
                     OpPattern::Injective, infer_transpose});
    table.push_back({"concatenate", "Joins the inputs along axis", OpPattern::Injective,
                     infer_concatenate});
    table.push_back({"strided_slice",
                     "Elements begin[d], begin[d] + strides[d], ... before end[d] on every dim "
                     "(negative strides walk backwards)",
                     OpPattern::Injective, infer_strided_slice});
    table.push_back({"take",
                     "Gathers slices of data along axis at int indices (negative counts from the "
                     "end)",
                     OpPattern::Injective, infer_take});
    table.push_back({"gather_elements",
                     "out[i] = data[i with axis replaced by indices[i]] (ONNX GatherElements)",
                     OpPattern::Injective, infer_gather_elements});
    table.push_back({"broadcast_to", "Numpy broadcast of the input with attribute shape",
                     OpPattern::Broadcast, infer_broadcast_to});
    table.push_back({"tile", "Repeats the input reps[d] times along each dim",
                     OpPattern::Injective, infer_tile});
    table.push_back({"nn.pad",
                     "Pads (begin..., end...) per dim; mode constant (value), reflect, edge or wrap; "
                     "negative pads crop",
                     OpPattern::Injective, infer_pad});
    table.push_back({"image.resize",
                     "Resizes to attribute sizes; mode nearest/linear with ONNX "
                     "coordinate_transformation_mode, nearest_mode, scales, roi",
                     OpPattern::Injective, infer_resize});
}

}  // namespace tessera::graph::detail
