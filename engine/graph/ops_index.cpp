// Graph ops for indexing, scatter and data-dependent-shape ops: gather_nd,
// scatter_elements, scatter_nd, reverse_sequence, nn.max_unpool,
// image.grid_sample, vision.roi_align.
#include "engine/core/error.h"
#include "engine/graph/op_table.h"

namespace tessera::graph::detail {

namespace {

using Types = std::vector<TensorType>;

void expect_int(const Node& n, const Types& in, size_t i, const char* what) {
    TS_USER_CHECK(in[i].dtype == DType::Int64 || in[i].dtype == DType::Int32)
        << where(n) << ": " << what << " must be int64 or int32, got " << in[i].str();
}

void expect_reduction(const Node& n) {
    std::string r = n.attr_str("reduction", "none");
    TS_USER_CHECK(r == "none" || r == "add" || r == "mul" || r == "min" || r == "max")
        << where(n) << ": reduction '" << r << "' is not none, add, mul, min or max";
}

Types infer_gather_nd(const Node& n, const Types& in) {
    expect_arity(n, in, 2, 2);
    expect_int(n, in, 1, "indices");
    const auto& ds = in[0].shape;
    const auto& is = in[1].shape;
    int64_t b = n.attr_int("batch_dims", 0);
    TS_USER_CHECK(!is.empty()) << where(n) << ": indices must have rank >= 1";
    TS_USER_CHECK(b >= 0 && b < int64_t(is.size()) && b < int64_t(ds.size()))
        << where(n) << ": batch_dims " << b << " must be below the ranks of data " << in[0].str()
        << " and indices " << in[1].str();
    for (int64_t d = 0; d < b; ++d)
        TS_USER_CHECK(ds[size_t(d)] == is[size_t(d)])
            << where(n) << ": batch dim " << d << " differs between data " << in[0].str()
            << " and indices " << in[1].str();
    int64_t k = is.back();
    TS_USER_CHECK(k >= 1 && b + k <= int64_t(ds.size()))
        << where(n) << ": indices' last dim " << k << " must be in [1, " << ds.size() - size_t(b)
        << "] for data " << in[0].str();
    std::vector<int64_t> out(is.begin(), is.end() - 1);
    out.insert(out.end(), ds.begin() + b + k, ds.end());
    TensorType t{in[0].dtype, out};
    for (int64_t d = b; d < b + k; ++d)
        TS_USER_CHECK(ds[size_t(d)] >= 1 || t.num_elements() == 0)
            << where(n) << ": indices address dim " << d << " of data " << in[0].str()
            << ", which is empty";
    return {t};
}

Types infer_scatter_elements(const Node& n, const Types& in) {
    expect_arity(n, in, 3, 3);
    expect_int(n, in, 1, "indices");
    expect_reduction(n);
    const auto& ds = in[0].shape;
    int64_t axis = n.attr_int("axis", 0);
    TS_USER_CHECK(axis >= 0 && axis < int64_t(ds.size()))
        << where(n) << ": axis " << axis << " out of range for data " << in[0].str();
    TS_USER_CHECK(in[1].shape == in[2].shape && in[1].shape.size() == ds.size())
        << where(n) << ": indices " << in[1].str() << " and updates " << in[2].str()
        << " need one shape of data's rank " << ds.size();
    TS_USER_CHECK(in[2].dtype == in[0].dtype)
        << where(n) << ": updates " << in[2].str() << " must have data's dtype " << in[0].str();
    for (size_t d = 0; d < ds.size(); ++d)
        TS_USER_CHECK(int64_t(d) == axis || in[1].shape[d] <= ds[d])
            << where(n) << ": indices " << in[1].str() << " exceed data " << in[0].str()
            << " on dim " << d;
    return {in[0]};
}

Types infer_scatter_nd(const Node& n, const Types& in) {
    expect_arity(n, in, 3, 3);
    expect_int(n, in, 1, "indices");
    expect_reduction(n);
    const auto& ds = in[0].shape;
    const auto& is = in[1].shape;
    TS_USER_CHECK(!is.empty() && is.back() >= 1 && is.back() <= int64_t(ds.size()))
        << where(n) << ": indices " << in[1].str() << " need a last dim in [1, " << ds.size()
        << "]";
    std::vector<int64_t> us(is.begin(), is.end() - 1);
    us.insert(us.end(), ds.begin() + is.back(), ds.end());
    TS_USER_CHECK(in[2].shape == us && in[2].dtype == in[0].dtype)
        << where(n) << ": updates " << in[2].str() << " must be "
        << TensorType{in[0].dtype, us}.str();
    return {in[0]};
}

Types infer_reverse_sequence(const Node& n, const Types& in) {
    expect_arity(n, in, 2, 2);
    expect_int(n, in, 1, "sequence_lens");
    const auto& s = in[0].shape;
    int64_t b = n.attr_int("batch_axis", 1), t = n.attr_int("time_axis", 0);
    TS_USER_CHECK(s.size() >= 2 && b >= 0 && t >= 0 && b < int64_t(s.size()) &&
                  t < int64_t(s.size()) && b != t)
        << where(n) << ": batch_axis " << b << " and time_axis " << t
        << " must be two different axes of " << in[0].str();
    TS_USER_CHECK(in[1].shape == std::vector<int64_t>{s[size_t(b)]})
        << where(n) << ": sequence_lens " << in[1].str() << " must have shape (" << s[size_t(b)]
        << ")";
    return {in[0]};
}

Types infer_max_unpool(const Node& n, const Types& in) {
    expect_arity(n, in, 2, 2);
    expect_int(n, in, 1, "indices");
    TS_USER_CHECK(in[0].shape.size() >= 3 && in[1].shape == in[0].shape)
        << where(n) << ": X " << in[0].str() << " and indices " << in[1].str()
        << " need one shape of rank >= 3";
    std::vector<int64_t> out = n.attr_ints("output_shape");
    TS_USER_CHECK(out.size() == in[0].shape.size() && out[0] == in[0].shape[0] &&
                  out[1] == in[0].shape[1])
        << where(n) << ": output_shape " << shape_str(out) << " does not fit X " << in[0].str();
    for (int64_t d : out) TS_USER_CHECK(d >= 0) << where(n) << ": negative output dim";
    std::vector<int64_t> unpooled = n.attr_ints("unpooled_shape", out);
    TS_USER_CHECK(unpooled.size() == out.size())
        << where(n) << ": unpooled_shape " << shape_str(unpooled) << " needs " << out.size()
        << " dims";
    for (size_t d = 0; d < out.size(); ++d)
        TS_USER_CHECK(unpooled[d] >= 1 && unpooled[d] <= out[d])
            << where(n) << ": unpooled_shape " << shape_str(unpooled)
            << " does not fit in output_shape " << shape_str(out);
    return {TensorType{in[0].dtype, out}};
}

Types infer_grid_sample(const Node& n, const Types& in) {
    expect_arity(n, in, 2, 2);
    expect_float(n, in, 0, -1);
    expect_float(n, in, 1, -1);
    const auto& xs = in[0].shape;
    const auto& gs = in[1].shape;
    TS_USER_CHECK(xs.size() == 4 || xs.size() == 5)
        << where(n) << ": X " << in[0].str() << " must be (N, C, H, W) or (N, C, D, H, W)";
    const size_t dims = xs.size() - 2;
    for (size_t d = 2; d < xs.size(); ++d)
        TS_USER_CHECK(xs[d] >= 1) << where(n) << ": X " << in[0].str()
                                  << " needs a non-empty image";
    TS_USER_CHECK(gs.size() == xs.size() && gs[0] == xs[0] && gs.back() == int64_t(dims))
        << where(n) << ": grid " << in[1].str() << " must be (" << xs[0] << ", spatial out..., "
        << dims << ")";
    std::string mode = n.attr_str("mode", "bilinear");
    std::string pad = n.attr_str("padding_mode", "zeros");
    TS_USER_CHECK(mode == "bilinear" || mode == "nearest" || mode == "bicubic")
        << where(n) << ": mode '" << mode << "' is not bilinear, nearest or bicubic";
    TS_USER_CHECK(pad == "zeros" || pad == "border" || pad == "reflection")
        << where(n) << ": padding_mode '" << pad << "' is not zeros, border or reflection";
    std::vector<int64_t> out = {xs[0], xs[1]};
    out.insert(out.end(), gs.begin() + 1, gs.end() - 1);
    return {TensorType{in[0].dtype, out}};
}

Types infer_roi_align(const Node& n, const Types& in) {
    expect_arity(n, in, 3, 4);
    expect_float(n, in, 0, 4);
    expect_float(n, in, 1, 2);
    expect_int(n, in, 2, "batch_indices");
    int64_t r = in[1].shape[0];
    for (int64_t d : in[0].shape)
        TS_USER_CHECK(d >= 1) << where(n) << ": X " << in[0].str() << " must not be empty";
    TS_USER_CHECK(in[1].shape[1] == 4 && in[2].shape == std::vector<int64_t>{r})
        << where(n) << ": rois " << in[1].str() << " must be (R, 4) and batch_indices "
        << in[2].str() << " (R)";
    std::string mode = n.attr_str("mode", "avg");
    TS_USER_CHECK(mode == "avg" || mode == "max")
        << where(n) << ": mode '" << mode << "' is not avg or max";
    int64_t oh = n.attr_int("output_height", 1), ow = n.attr_int("output_width", 1);
    TS_USER_CHECK(oh >= 1 && ow >= 1) << where(n) << ": needs output_height, output_width >= 1";
    if (in.size() == 4) {
        // Adaptive sampling: per-roi sample counts (R, 2) and their maxima.
        expect_int(n, in, 3, "sample counts");
        TS_USER_CHECK(in[3].shape == (std::vector<int64_t>{r, 2}) &&
                      n.attr_ints("max_grid").size() == 2)
            << where(n) << ": adaptive sampling needs (R, 2) sample counts and max_grid";
    } else {
        TS_USER_CHECK(n.attr_int("sampling_ratio", 0) >= 1)
            << where(n) << ": sampling_ratio must be >= 1 without per-roi sample counts";
    }
    return {TensorType{in[0].dtype, {r, in[0].shape[1], oh, ow}}};
}

}  // namespace

void add_index_ops(std::vector<OpDef>& table) {
    table.push_back({"gather_nd",
                     "Gathers slices of data at the index tuples in the last dim of indices, "
                     "after batch_dims shared leading dims (ONNX GatherND)",
                     OpPattern::Injective, infer_gather_nd});
    table.push_back({"scatter_elements",
                     "data with updates written at indices along axis; reduction none (last "
                     "wins), add, mul, min or max (ONNX ScatterElements)",
                     OpPattern::Opaque, infer_scatter_elements});
    table.push_back({"scatter_nd",
                     "data with update slices written at the index tuples of indices; reduction "
                     "none, add, mul, min or max (ONNX ScatterND)",
                     OpPattern::Opaque, infer_scatter_nd});
    table.push_back({"reverse_sequence",
                     "Reverses the first sequence_lens[b] elements along time_axis of each batch "
                     "entry b",
                     OpPattern::Injective, infer_reverse_sequence});
    table.push_back(
        {"nn.max_unpool",
         "Zeros of output_shape with X written at the flat indices (into unpooled_shape, "
         "placed at the start; each within its (n, c) plane) of MaxPool",
         OpPattern::Opaque, infer_max_unpool});
    table.push_back({"image.grid_sample",
                     "Samples X at the normalized grid positions; bilinear, nearest or bicubic "
                     "with zeros, border or reflection padding",
                     OpPattern::Injective, infer_grid_sample});
    table.push_back({"vision.roi_align",
                     "Average or max of bilinear samples over output_height x output_width bins of "
                     "each region of interest (input 3: per-roi sample counts when adaptive)",
                     OpPattern::Opaque, infer_roi_align});
}

}  // namespace tessera::graph::detail
