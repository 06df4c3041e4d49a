// ONNX ops whose output shape depends on input values: NonZero, Unique and
// NonMaxSuppression. Tessera compiles static shapes, so these are evaluated
// at import when their inputs are constants (constant folding) and give a
// UserError naming the op and input otherwise.
#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "engine/core/error.h"
#include "engine/frontend/onnx/onnx_index.h"

namespace tessera::frontend::onnx_import {

namespace {

void convert_nonzero(NodeCtx& ctx) {
    const ConstTensor& x = value_dependent_input(ctx, 0, "input 0");
    std::vector<double> v = constant_values(x);
    const std::vector<int64_t>& shape = x.type.shape;
    std::vector<std::vector<int64_t>> coords(shape.size());
    for (size_t i = 0; i < v.size(); ++i) {
        if (v[i] == 0.0) continue;
        int64_t rest = int64_t(i);
        for (size_t d = shape.size(); d-- > 0;) {
            coords[d].push_back(rest % shape[d]);
            rest /= shape[d];
        }
    }
    int64_t nnz = shape.empty() ? 0 : int64_t(coords[0].size());
    std::vector<int64_t> out;
    for (const auto& c : coords) out.insert(out.end(), c.begin(), c.end());
    ctx.define_constant(make_int64_tensor({int64_t(shape.size()), nnz}, out));
}

// Unique slices along an axis (or unique elements of the flattened input).
void convert_unique(NodeCtx& ctx) {
    const ConstTensor& x = value_dependent_input(ctx, 0, "input 0");
    std::vector<double> v = constant_values(x);
    std::vector<int64_t> shape = x.type.shape;
    bool has_axis = ctx.has_attr("axis");
    int64_t axis = 0;
    if (!has_axis) {
        shape = {int64_t(v.size())};
    } else {
        axis = normalize_axis(ctx, ctx.attr_int("axis", 0), int64_t(shape.size()));
    }
    bool sorted = ctx.attr_int("sorted", 1) != 0;
    // An empty tensor has only empty slices: the products of the other dims
    // are never formed (they may be huge beside a zero; a fuzzed 31-D input
    // looped 6 billion times).
    const bool empty = v.empty();
    int64_t outer = 1, inner = 1, len = shape[size_t(axis)];
    // inverse_indices has an entry per slice, also for an empty tensor with a
    // huge axis (a 281-byte fuzzed model asked for 268 million).
    check_constant_size(ctx, {len}, "inverse_indices");
    if (!empty) {
        for (int64_t d = 0; d < axis; ++d) outer *= shape[size_t(d)];
        for (size_t d = size_t(axis) + 1; d < shape.size(); ++d) inner *= shape[d];
    }
    auto slice = [&](int64_t i) {
        std::vector<double> s;
        if (empty) return s;
        for (int64_t o = 0; o < outer; ++o)
            for (int64_t k = 0; k < inner; ++k) s.push_back(v[size_t((o * len + i) * inner + k)]);
        return s;
    };
    std::map<std::vector<double>, int64_t> first;  // slice -> first position
    std::vector<int64_t> order;                    // first positions in order of appearance
    for (int64_t i = 0; i < len; ++i)
        if (first.emplace(slice(i), i).second) order.push_back(i);
    if (sorted) {
        order.clear();
        for (const auto& [s, i] : first) order.push_back(i);  // std::map: lexicographic order
    }
    const int64_t u = int64_t(order.size());
    std::map<int64_t, int64_t> rank_of_first;
    for (int64_t r = 0; r < u; ++r) rank_of_first[order[size_t(r)]] = r;
    std::vector<int64_t> inverse, counts(size_t(u), 0);
    for (int64_t i = 0; i < len; ++i) {
        int64_t r = rank_of_first[first[slice(i)]];
        inverse.push_back(r);
        ++counts[size_t(r)];
    }
    std::vector<int64_t> yshape = shape;
    yshape[size_t(axis)] = u;
    std::vector<double> y(empty ? 0 : size_t(outer * u * inner));
    for (int64_t o = 0; o < (empty ? 0 : outer); ++o)
        for (int64_t r = 0; r < u; ++r)
            for (int64_t k = 0; k < inner; ++k)
                y[size_t((o * u + r) * inner + k)] = v[size_t((o * len + order[size_t(r)]) * inner + k)];
    define_output(ctx, 0, make_tensor({x.type.dtype, yshape}, y));
    define_output(ctx, 1, make_int64_tensor({u}, order));
    define_output(ctx, 2, make_int64_tensor({len}, inverse));
    define_output(ctx, 3, make_int64_tensor({u}, counts));
}

struct Box {
    double y0, x0, y1, x1;  // min corner, max corner
    double area() const { return (y1 - y0) * (x1 - x0); }
};

Box box_at(const std::vector<double>& b, size_t at, bool center) {
    double a = b[at], c = b[at + 1], d = b[at + 2], e = b[at + 3];
    if (center)  // x_center, y_center, width, height
        return {c - e / 2, a - d / 2, c + e / 2, a + d / 2};
    return {std::min(a, d), std::min(c, e), std::max(a, d), std::max(c, e)};
}

// ONNX Runtime's test: IoU strictly above the threshold suppresses.
bool suppresses(const Box& p, const Box& q, double iou_threshold) {
    double iy0 = std::max(p.y0, q.y0), ix0 = std::max(p.x0, q.x0);
    double iy1 = std::min(p.y1, q.y1), ix1 = std::min(p.x1, q.x1);
    if (ix1 <= ix0 || iy1 <= iy0) return false;
    double inter = (ix1 - ix0) * (iy1 - iy0);
    double uni = p.area() + q.area() - inter;
    if (p.area() <= 0 || q.area() <= 0 || uni <= 0) return false;
    return inter / uni > iou_threshold;
}

double scalar_input(NodeCtx& ctx, int i, const std::string& what, double dflt) {
    if (!ctx.has_input(i)) return dflt;
    std::vector<double> v = constant_values(value_dependent_input(ctx, i, what));
    TS_USER_CHECK(v.size() == 1) << ctx.where() << ": " << what << " must hold one value";
    return v[0];
}

void convert_nms(NodeCtx& ctx) {
    const ConstTensor& boxes_t = value_dependent_input(ctx, 0, "boxes");
    const ConstTensor& scores_t = value_dependent_input(ctx, 1, "scores");
    const auto& bs = boxes_t.type.shape;
    const auto& ss = scores_t.type.shape;
    TS_USER_CHECK(bs.size() == 3 && bs[2] == 4 && ss.size() == 3 && ss[0] == bs[0] && ss[2] == bs[1])
        << ctx.where() << ": boxes " << boxes_t.type.str() << " must be (B, N, 4) and scores "
        << scores_t.type.str() << " (B, C, N)";
    double max_out = scalar_input(ctx, 2, "max_output_boxes_per_class", 0);
    double iou = scalar_input(ctx, 3, "iou_threshold", 0);
    bool has_score = ctx.has_input(4);
    double score_min = scalar_input(ctx, 4, "score_threshold", 0);
    TS_USER_CHECK(iou >= 0 && iou <= 1)
        << ctx.where() << ": iou_threshold " << iou << " must be in [0, 1]";
    bool center = ctx.attr_int("center_point_box", 0) != 0;
    std::vector<double> boxes = constant_values(boxes_t), scores = constant_values(scores_t);
    const int64_t nb = bs[0], nc = ss[1], n = bs[1];
    std::vector<int64_t> out;
    for (int64_t b = 0; b < nb; ++b) {
        for (int64_t c = 0; c < nc; ++c) {
            const double* sc = scores.data() + (b * nc + c) * n;
            std::vector<int64_t> cand;
            for (int64_t i = 0; i < n; ++i)
                if (!has_score || sc[i] > score_min) cand.push_back(i);
            // Highest score first; equal scores keep the lower box index first.
            std::stable_sort(cand.begin(), cand.end(),
                             [&](int64_t p, int64_t q) { return sc[p] > sc[q]; });
            std::vector<Box> kept;
            for (int64_t i : cand) {
                if (double(kept.size()) >= max_out) break;
                Box bx = box_at(boxes, size_t((b * n + i) * 4), center);
                bool drop = false;
                for (const Box& k : kept) drop = drop || suppresses(k, bx, iou);
                if (drop) continue;
                kept.push_back(bx);
                out.insert(out.end(), {b, c, i});
            }
        }
    }
    ctx.define_constant(make_int64_tensor({int64_t(out.size() / 3), 3}, out));
}

}  // namespace

void add_dynamic_shape_converters(ConverterTable& t) {
    t["NonZero"] = convert_nonzero;
    t["Unique"] = convert_unique;
    t["NonMaxSuppression"] = convert_nms;
}

}  // namespace tessera::frontend::onnx_import
