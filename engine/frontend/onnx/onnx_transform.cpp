// ONNX data-movement ops: Transpose, Squeeze, Unsqueeze, Concat, Split, Slice,
// Gather, GatherElements, Expand, Tile, Pad, DepthToSpace, SpaceToDepth.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "engine/core/error.h"
#include "engine/frontend/onnx/onnx_context.h"
#include "engine/frontend/onnx/onnx_index.h"
#include "engine/frontend/onnx/onnx_resize_antialias.h"

namespace tessera::frontend::onnx_import {

int64_t normalize_axis(const NodeCtx& ctx, int64_t axis, int64_t rank) {
    TS_USER_CHECK(axis >= -rank && axis < rank)
        << ctx.where() << ": axis " << axis << " out of range for rank " << rank;
    return axis < 0 ? axis + rank : axis;
}

void reshape_output(NodeCtx& ctx, const std::vector<int64_t>& shape) {
    if (const ConstTensor* c = ctx.constant_input(0)) {
        ConstTensor r = *c;
        r.type.shape = shape;
        ctx.define_constant(std::move(r));
        return;
    }
    ctx.emit("reshape", {ctx.input(0)}, {{"newshape", shape}});
}

namespace {

std::string dims_str(const std::vector<int64_t>& s) {
    std::string out = "(";
    for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
    return out + ")";
}

// Axes from attribute `axes` (older opsets) or constant input `input` (newer).
bool axes_of(NodeCtx& ctx, int input, std::vector<int64_t>& axes) {
    if (ctx.has_attr("axes")) {
        axes = ctx.attr_ints("axes");
        return true;
    }
    if (ctx.has_input(input)) {
        axes = ctx.constant_ints(input);
        return true;
    }
    return false;
}

void convert_transpose(NodeCtx& ctx) {
    int64_t rank = int64_t(ctx.input_type(0).shape.size());
    std::vector<int64_t> perm;
    for (int64_t i = rank - 1; i >= 0; --i) perm.push_back(i);
    perm = ctx.attr_ints("perm", perm);
    ctx.emit("transpose", {ctx.input(0)}, {{"axes", perm}});
}

void convert_squeeze(NodeCtx& ctx) {
    std::vector<int64_t> s = ctx.input_type(0).shape;
    int64_t rank = int64_t(s.size());
    std::vector<int64_t> axes;
    std::vector<bool> drop(s.size(), false);
    if (axes_of(ctx, 1, axes)) {
        for (int64_t a : axes) {
            a = normalize_axis(ctx, a, rank);
            TS_USER_CHECK(s[size_t(a)] == 1)
                << ctx.where() << ": cannot squeeze axis " << a << " of extent " << s[size_t(a)];
            drop[size_t(a)] = true;
        }
    } else {
        for (size_t i = 0; i < s.size(); ++i) drop[i] = s[i] == 1;
    }
    std::vector<int64_t> out;
    for (size_t i = 0; i < s.size(); ++i)
        if (!drop[i]) out.push_back(s[i]);
    reshape_output(ctx, out);
}

void convert_unsqueeze(NodeCtx& ctx) {
    std::vector<int64_t> s = ctx.input_type(0).shape;
    std::vector<int64_t> axes;
    TS_USER_CHECK(axes_of(ctx, 1, axes)) << ctx.where() << ": missing axes";
    int64_t rank = int64_t(s.size() + axes.size());
    std::vector<bool> added(size_t(rank), false);
    for (int64_t a : axes) {
        a = normalize_axis(ctx, a, rank);
        TS_USER_CHECK(!added[size_t(a)]) << ctx.where() << ": axis " << a << " given twice";
        added[size_t(a)] = true;
    }
    std::vector<int64_t> out;
    size_t j = 0;
    for (int64_t i = 0; i < rank; ++i) out.push_back(added[size_t(i)] ? 1 : s[j++]);
    reshape_output(ctx, out);
}

void convert_concat(NodeCtx& ctx) {
    std::vector<int> inputs;
    int64_t rank = -1;
    for (int i = 0; i < ctx.node.input_size(); ++i) {
        if (!ctx.has_input(i)) continue;
        inputs.push_back(ctx.input(i));
        rank = int64_t(ctx.type_of(inputs.back()).shape.size());
    }
    TS_USER_CHECK(!inputs.empty()) << ctx.where() << ": needs at least one input";
    TS_USER_CHECK(ctx.has_attr("axis")) << ctx.where() << ": missing attribute axis";
    ctx.emit("concatenate", inputs, {{"axis", normalize_axis(ctx, ctx.attr_int("axis", 0), rank)}});
}

void convert_split(NodeCtx& ctx) {
    const std::vector<int64_t> s = ctx.input_type(0).shape;
    int64_t rank = int64_t(s.size());
    int64_t axis = normalize_axis(ctx, ctx.attr_int("axis", 0), rank);
    int64_t dim = s[size_t(axis)];
    int n = ctx.node.output_size();
    std::vector<int64_t> sizes;
    if (ctx.has_attr("split")) {
        sizes = ctx.attr_ints("split");
    } else if (ctx.has_input(1)) {
        sizes = ctx.constant_ints(1);
    } else {
        int64_t parts = ctx.attr_int("num_outputs", n);
        TS_USER_CHECK(parts == n && n > 0) << ctx.where() << ": num_outputs differs from outputs";
        int64_t chunk = (dim + n - 1) / n;
        for (int i = 0; i < n; ++i) sizes.push_back(std::min(chunk, dim - chunk * i));
    }
    TS_USER_CHECK(int(sizes.size()) == n)
        << ctx.where() << ": split has " << sizes.size() << " sizes for " << n << " outputs";
    int64_t total = 0;
    for (int64_t v : sizes) {
        TS_USER_CHECK(v >= 0) << ctx.where() << ": negative split size";
        total += v;
    }
    TS_USER_CHECK(total == dim) << ctx.where() << ": split sizes " << dims_str(sizes)
                                << " do not add up to " << dim;
    int x = ctx.input(0);
    int64_t off = 0;
    for (int i = 0; i < n; ++i) {
        std::vector<int64_t> b(size_t(rank), 0), e = s, st(size_t(rank), 1);
        b[size_t(axis)] = off;
        e[size_t(axis)] = off + sizes[size_t(i)];
        off += sizes[size_t(i)];
        if (ctx.node.output(i).empty()) continue;
        ctx.emit_outputs({i}, "strided_slice", {x}, {{"begin", b}, {"end", e}, {"strides", st}});
    }
}

void convert_slice(NodeCtx& ctx) {
    const std::vector<int64_t> s = ctx.input_type(0).shape;
    int64_t rank = int64_t(s.size());
    std::vector<int64_t> starts, ends, axes, steps;
    if (ctx.opset() < 10) {
        starts = ctx.attr_ints("starts");
        ends = ctx.attr_ints("ends");
        axes = ctx.attr_ints("axes");
    } else {
        starts = ctx.constant_ints(1);
        ends = ctx.constant_ints(2);
        if (ctx.has_input(3)) axes = ctx.constant_ints(3);
        if (ctx.has_input(4)) steps = ctx.constant_ints(4);
    }
    if (axes.empty())
        for (size_t i = 0; i < starts.size(); ++i) axes.push_back(int64_t(i));
    if (steps.empty()) steps.assign(starts.size(), 1);
    TS_USER_CHECK(ends.size() == starts.size() && axes.size() == starts.size() &&
                  steps.size() == starts.size())
        << ctx.where() << ": starts, ends, axes and steps differ in length";
    std::vector<int64_t> b(size_t(rank), 0), e = s, st(size_t(rank), 1);
    for (size_t i = 0; i < starts.size(); ++i) {
        size_t a = size_t(normalize_axis(ctx, axes[i], rank));
        int64_t dim = s[a], step = steps[i];
        TS_USER_CHECK(step != 0) << ctx.where() << ": step 0";
        int64_t lo = starts[i] < 0 ? starts[i] + dim : starts[i];
        int64_t hi = ends[i] < 0 ? ends[i] + dim : ends[i];
        if (step > 0) {
            lo = std::clamp<int64_t>(lo, 0, dim);
            hi = std::clamp<int64_t>(hi, 0, dim);
        } else {
            lo = std::clamp<int64_t>(lo, 0, dim - 1);
            hi = std::clamp<int64_t>(hi, -1, dim - 1);
        }
        b[a] = lo;
        e[a] = hi;
        st[a] = step;
    }
    ctx.emit("strided_slice", {ctx.input(0)}, {{"begin", b}, {"end", e}, {"strides", st}});
}

// Constant indices must lie in [-extent, extent) (ONNX Runtime refuses the
// others when it runs; the kernel would clamp them into range).
void check_constant_indices(NodeCtx& ctx, int i, int64_t extent) {
    const ConstTensor* c = ctx.constant_input(i);
    if (!c) return;
    for (double v : constant_values(*c))
        TS_USER_CHECK(v >= -double(extent) && v < double(extent))
            << ctx.where() << ": index " << int64_t(v) << " is out of range for an axis of "
            << extent;
}

void convert_gather(NodeCtx& ctx) {
    int64_t rank = int64_t(ctx.input_type(0).shape.size());
    int64_t axis = normalize_axis(ctx, ctx.attr_int("axis", 0), rank);
    check_constant_indices(ctx, 1, ctx.input_type(0).shape[size_t(axis)]);
    ctx.emit("take", {ctx.input(0), ctx.input(1)}, {{"axis", axis}});
}

void convert_gather_elements(NodeCtx& ctx) {
    int64_t rank = int64_t(ctx.input_type(0).shape.size());
    int64_t axis = normalize_axis(ctx, ctx.attr_int("axis", 0), rank);
    ctx.emit("gather_elements", {ctx.input(0), ctx.input(1)}, {{"axis", axis}});
}

void convert_expand(NodeCtx& ctx) {
    ctx.emit("broadcast_to", {ctx.input(0)}, {{"shape", ctx.constant_ints(1)}});
}

void convert_tile(NodeCtx& ctx) {
    ctx.emit("tile", {ctx.input(0)}, {{"reps", ctx.constant_ints(1)}});
}

void convert_pad(NodeCtx& ctx) {
    int64_t rank = int64_t(ctx.input_type(0).shape.size());
    std::vector<int64_t> pads = ctx.opset() < 11 ? ctx.attr_ints("pads") : ctx.constant_ints(1);
    double value = ctx.opset() < 11 ? ctx.attr_float("value", 0.0) : 0.0;
    if (ctx.opset() >= 11 && ctx.has_input(2)) {
        const ConstTensor* c = ctx.constant_input(2);
        TS_USER_CHECK(c && c->type.num_elements() == 1)
            << ctx.where() << ": constant_value must be a constant scalar";
        switch (c->type.dtype) {
            case graph::DType::Float32:
                value = c->data->as<float>()[0];
                break;
            case graph::DType::Float64:
                value = c->data->as<double>()[0];
                break;
            case graph::DType::Int64:
                value = double(c->data->as<int64_t>()[0]);
                break;
            case graph::DType::Int32:
                value = c->data->as<int32_t>()[0];
                break;
            default:
                TS_USER_FAIL() << ctx.where() << ": unsupported constant_value type";
        }
    }
    if (ctx.has_input(3)) {
        std::vector<int64_t> axes = ctx.constant_ints(3);
        TS_USER_CHECK(pads.size() == 2 * axes.size()) << ctx.where() << ": pads/axes mismatch";
        std::vector<int64_t> full(size_t(2 * rank), 0);
        for (size_t i = 0; i < axes.size(); ++i) {
            size_t a = size_t(normalize_axis(ctx, axes[i], rank));
            full[a] = pads[i];
            full[a + size_t(rank)] = pads[i + axes.size()];
        }
        pads = full;
    }
    TS_USER_CHECK(int64_t(pads.size()) == 2 * rank)
        << ctx.where() << ": pads needs " << 2 * rank << " values, got " << pads.size();
    std::string mode = ctx.attr_str("mode", "constant");
    int x = ctx.input(0);
    if (mode != "constant" &&
        std::any_of(pads.begin(), pads.end(), [](int64_t p) { return p < 0; })) {
        // Negative pads remove from an axis (onnx-asr's pre-emphasis shifts a
        // signal by one sample with edge pads [0, 1, 0, -1]): as ONNX Runtime
        // does, the axis is cut first, then padded by the positive pads.
        const std::vector<int64_t>& shape = ctx.input_type(0).shape;
        const size_t n = static_cast<size_t>(rank);
        std::vector<int64_t> first(n), last(n), strides(n, 1);
        for (int64_t a = 0; a < rank; ++a) {
            const size_t i = size_t(a), j = size_t(a + rank);
            first[i] = std::max<int64_t>(-pads[i], 0);
            last[i] = shape[i] - std::max<int64_t>(-pads[j], 0);
            TS_USER_CHECK(last[i] > first[i])
                << ctx.where() << ": pads remove all of axis " << a << " (" << shape[i]
                << " long); " << mode << " padding needs a value to repeat";
            pads[i] = std::max<int64_t>(pads[i], 0);
            pads[j] = std::max<int64_t>(pads[j], 0);
        }
        x = ctx.emit_internal("strided_slice", {x},
                              {{"begin", first}, {"end", last}, {"strides", strides}});
    }
    ctx.emit("nn.pad", {x}, {{"pads", pads}, {"mode", mode}, {"value", value}});
}

// reshape -> transpose -> reshape, the last step giving ONNX output 0.
void rearrange(NodeCtx& ctx, const std::vector<int64_t>& mid, const std::vector<int64_t>& perm,
               const std::vector<int64_t>& out) {
    int a = ctx.emit_internal("reshape", {ctx.input(0)}, {{"newshape", mid}});
    int b = ctx.emit_internal("transpose", {a}, {{"axes", perm}});
    ctx.emit("reshape", {b}, {{"newshape", out}});
}

void convert_depth_to_space(NodeCtx& ctx) {
    const auto s = ctx.input_type(0).shape;
    TS_USER_CHECK(s.size() == 4) << ctx.where() << ": input must be 4-D";
    int64_t b = ctx.attr_int("blocksize", 0);
    TS_USER_CHECK(b >= 1 && s[1] % (b * b) == 0)
        << ctx.where() << ": blocksize " << b << " does not divide " << s[1] << " channels";
    int64_t c = s[1] / (b * b);
    std::vector<int64_t> out = {s[0], c, s[2] * b, s[3] * b};
    if (ctx.attr_str("mode", "DCR") == "CRD")
        rearrange(ctx, {s[0], c, b, b, s[2], s[3]}, {0, 1, 4, 2, 5, 3}, out);
    else
        rearrange(ctx, {s[0], b, b, c, s[2], s[3]}, {0, 3, 4, 1, 5, 2}, out);
}

void convert_space_to_depth(NodeCtx& ctx) {
    const auto s = ctx.input_type(0).shape;
    TS_USER_CHECK(s.size() == 4) << ctx.where() << ": input must be 4-D";
    int64_t b = ctx.attr_int("blocksize", 0);
    TS_USER_CHECK(b >= 1 && s[2] % b == 0 && s[3] % b == 0)
        << ctx.where() << ": blocksize " << b << " does not divide the spatial dims";
    // DCR (the only order before opset 28): channel (by * b + bx) * C + c;
    // CRD: c * b * b + by * b + bx.
    const std::string mode = ctx.attr_str("mode", "DCR");
    TS_USER_CHECK(mode == "DCR" || mode == "CRD")
        << ctx.where() << ": mode '" << mode << "' is not DCR or CRD";
    rearrange(ctx, {s[0], s[1], s[2] / b, b, s[3] / b, b},
              mode == "DCR" ? std::vector<int64_t>{0, 3, 5, 1, 2, 4}
                            : std::vector<int64_t>{0, 1, 3, 5, 2, 4},
              {s[0], s[1] * b * b, s[2] / b, s[3] / b});
}

// Float values of constant input i (float32/float64); empty when absent or empty.
std::vector<double> constant_floats(NodeCtx& ctx, int i) {
    std::vector<double> out;
    if (!ctx.has_input(i)) return out;
    const ConstTensor* c = ctx.constant_input(i);
    TS_USER_CHECK(c) << ctx.where() << ": input " << i << " must be a constant";
    int64_t n = c->type.num_elements();
    if (c->type.dtype == graph::DType::Float32)
        out.assign(c->data->as<float>(), c->data->as<float>() + n);
    else if (c->type.dtype == graph::DType::Float64)
        out.assign(c->data->as<double>(), c->data->as<double>() + n);
    else
        TS_USER_FAIL() << ctx.where() << ": input " << i << " must be float, got " << c->type.str();
    return out;
}

void convert_resize(NodeCtx& ctx) {
    const std::vector<int64_t> s = ctx.input_type(0).shape;
    const size_t rank = s.size();
    const std::string policy = ctx.attr_str("keep_aspect_ratio_policy", "stretch");
    TS_USER_CHECK(policy == "stretch" || policy == "not_larger" || policy == "not_smaller")
        << ctx.where() << ": keep_aspect_ratio_policy '" << policy << "' is not supported";
    // Resize-18 axes: roi, scales and sizes name only these axes.
    std::vector<int64_t> axes = ctx.attr_ints("axes");
    for (int64_t& a : axes) a = normalize_axis(ctx, a, int64_t(rank));
    std::vector<double> roi, scales;
    std::vector<int64_t> sizes;
    const bool upsample = ctx.node.op_type() == "Upsample";
    if (upsample && ctx.has_attr("scales")) {
        const onnx::AttributeProto* a = nullptr;
        for (const auto& at : ctx.node.attribute())
            if (at.name() == "scales") a = &at;
        scales.assign(a->floats().begin(), a->floats().end());
    } else if (ctx.opset() < 11) {
        scales = constant_floats(ctx, 1);
    } else {
        roi = constant_floats(ctx, 1);
        scales = constant_floats(ctx, 2);
        if (ctx.has_input(3)) sizes = ctx.constant_ints(3);
    }
    if (!axes.empty()) {
        const size_t n = axes.size();
        TS_USER_CHECK((scales.empty() || scales.size() == n) &&
                      (sizes.empty() || sizes.size() == n) && (roi.empty() || roi.size() == 2 * n))
            << ctx.where() << ": roi, scales and sizes must give values for the " << n << " axes";
        std::vector<double> full_scales(rank, 1.0), full_roi(2 * rank, 0.0);
        std::vector<int64_t> full_sizes(s);
        for (size_t d = 0; d < rank; ++d) full_roi[d + rank] = 1.0;
        for (size_t k = 0; k < n; ++k) {
            const size_t a = size_t(axes[k]);
            if (!scales.empty()) full_scales[a] = scales[k];
            if (!sizes.empty()) full_sizes[a] = sizes[k];
            if (!roi.empty()) {
                full_roi[a] = roi[k];
                full_roi[a + rank] = roi[k + n];
            }
        }
        if (!scales.empty()) scales = full_scales;
        if (!sizes.empty()) sizes = full_sizes;
        if (!roi.empty()) roi = full_roi;
    } else {
        for (size_t d = 0; d < rank; ++d) axes.push_back(int64_t(d));
    }
    if (!sizes.empty() && policy != "stretch") {
        // One scale for every resized axis: the largest that fits in sizes
        // (not_larger) or the smallest that covers it (not_smaller).
        double scale = policy == "not_larger" ? HUGE_VAL : 0.0;
        for (int64_t a : axes) {
            const double r = s[size_t(a)] ? double(sizes[size_t(a)]) / double(s[size_t(a)]) : 1.0;
            scale = policy == "not_larger" ? std::min(scale, r) : std::max(scale, r);
        }
        scales.assign(rank, 1.0);
        for (int64_t a : axes) {
            scales[size_t(a)] = scale;
            sizes[size_t(a)] = int64_t(std::nearbyint(scale * double(s[size_t(a)])));
        }
    }
    if (!sizes.empty() && policy != "stretch") {
        TS_USER_CHECK(sizes.size() == rank) << ctx.where() << ": sizes needs " << rank << " values";
    } else if (!sizes.empty()) {
        TS_USER_CHECK(sizes.size() == rank) << ctx.where() << ": sizes needs " << rank << " values";
        scales.clear();
        for (size_t d = 0; d < rank; ++d)
            scales.push_back(s[d] ? double(sizes[d]) / double(s[d]) : 1.0);
    } else {
        TS_USER_CHECK(scales.size() == rank)
            << ctx.where() << ": scales needs " << rank << " values, got " << scales.size();
        for (size_t d = 0; d < rank; ++d) {
            TS_USER_CHECK(scales[d] > 0) << ctx.where() << ": scales must be positive";
            sizes.push_back(int64_t(std::floor(double(s[d]) * scales[d])));
        }
    }
    std::string ctm =
        upsample ? "asymmetric" : ctx.attr_str("coordinate_transformation_mode", "half_pixel");
    const std::string mode = ctx.attr_str("mode", "nearest");
    // Resize-18 antialias: linear and cubic filters widened when downscaling
    // (nearest ignores it, as the operator's definition says).
    if (ctx.attr_int("antialias", 0) != 0 && mode != "nearest") {
        AntialiasResize r;
        r.sizes = sizes;
        r.scales = scales;
        r.mode = mode;
        r.coordinate_transformation_mode = ctm;
        r.cubic_coeff_a = ctx.attr_float("cubic_coeff_a", -0.75);
        r.exclude_outside = ctx.attr_int("exclude_outside", 0) != 0;
        convert_resize_antialias(ctx, r);
        return;
    }
    std::map<std::string, graph::AttrValue> attrs = {
        {"sizes", sizes},
        {"scales", scales},
        {"mode", mode},
        {"coordinate_transformation_mode", ctm},
        {"nearest_mode", ctx.attr_str("nearest_mode", "round_prefer_floor")},
        {"extrapolation_value", ctx.attr_float("extrapolation_value", 0.0)},
        {"cubic_coeff_a", ctx.attr_float("cubic_coeff_a", -0.75)},
        {"exclude_outside", ctx.attr_int("exclude_outside", 0)}};
    if (ctm == "tf_crop_and_resize") attrs["roi"] = roi;
    ctx.emit("image.resize", {ctx.input(0)}, attrs);
}

// Trilu: where(mask, x, 0) with a constant (N, M) mask over the last two dims.
void convert_trilu(NodeCtx& ctx) {
    const graph::TensorType t = ctx.input_type(0);
    TS_USER_CHECK(t.shape.size() >= 2) << ctx.where() << ": input must have rank >= 2";
    int64_t k = 0;
    if (ctx.has_input(1)) {
        std::vector<int64_t> kv = ctx.constant_ints(1);
        TS_USER_CHECK(kv.size() == 1) << ctx.where() << ": k must hold one value";
        k = kv[0];
    }
    bool upper = ctx.attr_int("upper", 1) != 0;
    int64_t rows = t.shape[t.shape.size() - 2], cols = t.shape.back();
    ConstTensor mask;
    mask.type = {graph::DType::Bool, {rows, cols}};
    check_constant_size(ctx, mask.type.shape, "the mask");
    auto m = std::make_shared<graph::ConstantData>();
    m->bytes.resize(size_t(rows * cols));
    for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < cols; ++j)
            m->bytes[size_t(i * cols + j)] = upper ? (j - i >= k) : (j - i <= k);
    mask.data = m;
    ConstTensor zero;
    zero.type = {t.dtype, {}};
    auto z = std::make_shared<graph::ConstantData>();
    z->bytes.assign(size_t(graph::dtype_bytes(t.dtype)), 0);
    zero.data = z;
    const std::string mask_name = ctx.imp.define_helper_constant(ctx.name + "__mask", mask);
    const std::string zero_name = ctx.imp.define_helper_constant(ctx.name + "__zero", zero);
    ctx.emit("where", {ctx.imp.value(mask_name, ctx.where()), ctx.input(0),
                       ctx.imp.value(zero_name, ctx.where())});
}

}  // namespace

void add_transform_converters(ConverterTable& t) {
    t["Trilu"] = convert_trilu;
    t["Resize"] = convert_resize;
    t["Upsample"] = convert_resize;  // deprecated: Resize with asymmetric coordinates
    t["Transpose"] = convert_transpose;
    t["Squeeze"] = convert_squeeze;
    t["Unsqueeze"] = convert_unsqueeze;
    t["Concat"] = convert_concat;
    t["Split"] = convert_split;
    t["Slice"] = convert_slice;
    t["Gather"] = convert_gather;
    t["GatherElements"] = convert_gather_elements;
    t["Expand"] = convert_expand;
    t["Tile"] = convert_tile;
    t["Pad"] = convert_pad;
    t["DepthToSpace"] = convert_depth_to_space;
    t["SpaceToDepth"] = convert_space_to_depth;
}

}  // namespace tessera::frontend::onnx_import
