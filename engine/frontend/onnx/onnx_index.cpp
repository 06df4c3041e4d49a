// ONNX converters for indexing and scatter ops: GatherND, ScatterElements,
// Scatter, ScatterND, ReverseSequence, MaxUnpool, GridSample, RoiAlign, and
// Compress (a gather at the positions of a constant condition). The ops whose
// output shape depends on input values are in onnx_index_dynamic.cpp.
#include "engine/frontend/onnx/onnx_index.h"

#include <algorithm>
#include <cmath>

#include "engine/core/error.h"

namespace tessera::frontend::onnx_import {

std::vector<double> constant_values(const ConstTensor& c) {
    const int64_t n = c.type.num_elements();
    std::vector<double> out(size_t(n > 0 ? n : 0));
    const graph::ConstantData& d = *c.data;
    for (int64_t i = 0; i < n; ++i) {
        switch (c.type.dtype) {
            case graph::DType::Float32:
                out[size_t(i)] = d.as<float>()[i];
                break;
            case graph::DType::Float64:
                out[size_t(i)] = d.as<double>()[i];
                break;
            case graph::DType::Int64:
                out[size_t(i)] = double(d.as<int64_t>()[i]);
                break;
            case graph::DType::Int32:
                out[size_t(i)] = d.as<int32_t>()[i];
                break;
            case graph::DType::Int8:
                out[size_t(i)] = d.as<int8_t>()[i];
                break;
            case graph::DType::UInt8:
                out[size_t(i)] = d.as<uint8_t>()[i];
                break;
            case graph::DType::Bool:
                out[size_t(i)] = d.as<uint8_t>()[i] ? 1.0 : 0.0;
                break;
        }
    }
    return out;
}

ConstTensor make_tensor(graph::TensorType type, const std::vector<double>& values) {
    auto d = std::make_shared<graph::ConstantData>();
    d->bytes.resize(size_t(type.num_bytes()));
    for (size_t i = 0; i < values.size(); ++i) {
        double v = values[i];
        switch (type.dtype) {
            case graph::DType::Float32:
                reinterpret_cast<float*>(d->bytes.data())[i] = float(v);
                break;
            case graph::DType::Float64:
                reinterpret_cast<double*>(d->bytes.data())[i] = v;
                break;
            case graph::DType::Int64:
                reinterpret_cast<int64_t*>(d->bytes.data())[i] = int64_t(v);
                break;
            case graph::DType::Int32:
                reinterpret_cast<int32_t*>(d->bytes.data())[i] = int32_t(v);
                break;
            case graph::DType::Int8:
                reinterpret_cast<int8_t*>(d->bytes.data())[i] = int8_t(v);
                break;
            case graph::DType::UInt8:
                d->bytes[i] = uint8_t(v);
                break;
            case graph::DType::Bool:
                d->bytes[i] = v != 0.0;
                break;
        }
    }
    return {std::move(type), std::move(d)};
}

void define_output(NodeCtx& ctx, int k, ConstTensor c) {
    if (k >= ctx.node.output_size() || ctx.node.output(k).empty()) return;
    const std::string& name = ctx.node.output(k);
    TS_USER_CHECK(!ctx.imp.values.count(name) && !ctx.imp.constants.count(name))
        << ctx.where() << ": output '" << name << "' is defined twice";
    ctx.imp.constants[name] = std::move(c);
}

const ConstTensor& value_dependent_input(const NodeCtx& ctx, int i, const std::string& what) {
    const ConstTensor* c = ctx.constant_input(i);
    TS_USER_CHECK(c != nullptr)
        << ctx.where() << ": output shape of " << ctx.node.op_type()
        << " depends on input values, and " << what << " ('"
        << (ctx.has_input(i) ? ctx.node.input(i) : "") << "') is not a constant; Tessera compiles "
        << "static shapes, so make it an initializer or a Constant (tessera run --inputs and "
           "tessera conformance freeze test inputs into constants)";
    return *c;
}

namespace {

// With constant indices, every value must lie in [-extent, extent).
void check_indices(const NodeCtx& ctx, int input, const std::vector<int64_t>& extents,
                   const std::string& what) {
    const ConstTensor* c = ctx.constant_input(input);
    if (!c) return;
    std::vector<int64_t> v = ctx.constant_ints(input);
    for (size_t i = 0; i < v.size(); ++i) {
        int64_t e = extents[i % extents.size()];
        TS_USER_CHECK(v[i] >= -e && v[i] < e)
            << ctx.where() << ": " << what << " " << v[i] << " at position " << i
            << " is out of range [" << -e << ", " << e << ")";
    }
}

std::string reduction(const NodeCtx& ctx) {
    std::string r = ctx.attr_str("reduction", "none");
    TS_USER_CHECK(r == "none" || r == "add" || r == "mul" || r == "min" || r == "max")
        << ctx.where() << ": reduction '" << r << "' is not none, add, mul, min or max";
    return r;
}

void convert_gather_nd(NodeCtx& ctx) {
    const graph::TensorType data = ctx.input_type(0);
    const graph::TensorType ind = ctx.input_type(1);
    int64_t b = ctx.attr_int("batch_dims", 0);
    TS_USER_CHECK(!ind.shape.empty() && b >= 0 && b < int64_t(ind.shape.size()))
        << ctx.where() << ": batch_dims " << b << " must be below the rank of indices "
        << ind.str();
    int64_t k = ind.shape.back();
    TS_USER_CHECK(k >= 1 && b + k <= int64_t(data.shape.size()))
        << ctx.where() << ": indices " << ind.str() << " address more dims than data "
        << data.str();
    check_indices(ctx, 1, std::vector<int64_t>(data.shape.begin() + b, data.shape.begin() + b + k),
                  "index");
    ctx.emit("gather_nd", {ctx.input(0), ctx.input(1)}, {{"batch_dims", b}});
}

void convert_scatter_elements(NodeCtx& ctx) {
    const graph::TensorType data = ctx.input_type(0);
    const graph::TensorType ind = ctx.input_type(1);
    int64_t axis = normalize_axis(ctx, ctx.attr_int("axis", 0), int64_t(data.shape.size()));
    std::string red = reduction(ctx);
    if (ctx.constant_input(1)) {
        std::vector<int64_t> v = ctx.constant_ints(1);
        int64_t e = data.shape[size_t(axis)];
        for (size_t i = 0; i < v.size(); ++i)
            TS_USER_CHECK(v[i] >= -e && v[i] < e)
                << ctx.where() << ": index " << v[i] << " at position " << i << " is out of range ["
                << -e << ", " << e << ") for axis " << axis << " of data " << data.str();
    }
    (void)ind;
    ctx.emit("scatter_elements", {ctx.input(0), ctx.input(1), ctx.input(2)},
             {{"axis", axis}, {"reduction", red}});
}

void convert_scatter_nd(NodeCtx& ctx) {
    const graph::TensorType data = ctx.input_type(0);
    const graph::TensorType ind = ctx.input_type(1);
    TS_USER_CHECK(!ind.shape.empty() && ind.shape.back() >= 1 &&
                  ind.shape.back() <= int64_t(data.shape.size()))
        << ctx.where() << ": indices " << ind.str() << " do not fit data " << data.str();
    check_indices(ctx, 1,
                  std::vector<int64_t>(data.shape.begin(), data.shape.begin() + ind.shape.back()),
                  "index");
    ctx.emit("scatter_nd", {ctx.input(0), ctx.input(1), ctx.input(2)},
             {{"reduction", reduction(ctx)}});
}

void convert_reverse_sequence(NodeCtx& ctx) {
    const graph::TensorType x = ctx.input_type(0);
    int64_t rank = int64_t(x.shape.size());
    int64_t b = normalize_axis(ctx, ctx.attr_int("batch_axis", 1), rank);
    int64_t t = normalize_axis(ctx, ctx.attr_int("time_axis", 0), rank);
    if (ctx.constant_input(1)) {
        for (int64_t len : ctx.constant_ints(1))
            TS_USER_CHECK(len >= 0 && len <= x.shape[size_t(t)])
                << ctx.where() << ": sequence length " << len << " is out of range [0, "
                << x.shape[size_t(t)] << "]";
    }
    ctx.emit("reverse_sequence", {ctx.input(0), ctx.input(1)},
             {{"batch_axis", b}, {"time_axis", t}});
}

void convert_max_unpool(NodeCtx& ctx) {
    const graph::TensorType x = ctx.input_type(0);
    size_t rank = x.shape.size();
    TS_USER_CHECK(rank >= 3) << ctx.where() << ": X " << x.str() << " needs rank >= 3";
    size_t sp = rank - 2;
    std::vector<int64_t> kernel = ctx.attr_ints("kernel_shape");
    std::vector<int64_t> strides = ctx.attr_ints("strides", std::vector<int64_t>(sp, 1));
    std::vector<int64_t> pads = ctx.attr_ints("pads", std::vector<int64_t>(2 * sp, 0));
    TS_USER_CHECK(kernel.size() == sp && strides.size() == sp && pads.size() == 2 * sp)
        << ctx.where() << ": kernel_shape, strides and pads must have " << sp << ", " << sp
        << " and " << 2 * sp << " values";
    std::vector<int64_t> out = {x.shape[0], x.shape[1]};
    for (size_t d = 0; d < sp; ++d)
        out.push_back((x.shape[d + 2] - 1) * strides[d] + kernel[d] - pads[d] - pads[d + sp]);
    // Indices are flat positions in the unpooled shape; a larger output_shape
    // pads it at the end of each dim (ONNX's reference).
    const std::vector<int64_t> unpooled = out;
    if (ctx.has_input(2)) {
        std::vector<int64_t> given = ctx.constant_ints(2);
        TS_USER_CHECK(given.size() == rank)
            << ctx.where() << ": output_shape needs " << rank << " values, got " << given.size();
        for (size_t d = 0; d < rank; ++d)
            TS_USER_CHECK(given[d] >= unpooled[d])
                << ctx.where() << ": output_shape dim " << d << " is " << given[d]
                << ", smaller than the unpooled size " << unpooled[d];
        out = given;
    }
    for (size_t d = 2; d < rank; ++d)
        TS_USER_CHECK(unpooled[d] >= 1)
            << ctx.where() << ": kernel_shape, strides and pads give an empty output dim " << d;
    if (ctx.constant_input(1)) {
        // MaxPool indices are flat over the whole tensor; each stays in its (n, c) plane.
        int64_t plane_in = 1, plane_out = 1;
        for (size_t d = 2; d < rank; ++d) plane_in *= x.shape[d], plane_out *= unpooled[d];
        std::vector<int64_t> v = ctx.constant_ints(1);
        for (size_t i = 0; i < v.size(); ++i) {
            int64_t plane = int64_t(i) / std::max<int64_t>(plane_in, 1);
            TS_USER_CHECK(v[i] >= plane * plane_out && v[i] < (plane + 1) * plane_out)
                << ctx.where() << ": index " << v[i] << " at position " << i
                << " is outside its (n, c) plane [" << plane * plane_out << ", "
                << (plane + 1) * plane_out << ") of the output";
        }
    }
    ctx.emit("nn.max_unpool", {ctx.input(0), ctx.input(1)},
             {{"output_shape", out}, {"unpooled_shape", unpooled}});
}

void convert_grid_sample(NodeCtx& ctx) {
    std::string mode = ctx.attr_str("mode", "bilinear");
    if (mode == "linear") mode = "bilinear";  // opset 20 spelling
    if (mode == "cubic") mode = "bicubic";
    const size_t rank = ctx.input_type(0).shape.size();
    TS_USER_CHECK(rank == 4 || rank == 5)
        << ctx.where() << ": only 4-D (N, C, H, W) and 5-D (N, C, D, H, W) input is supported, got "
        << ctx.input_type(0).str();
    ctx.emit("image.grid_sample", {ctx.input(0), ctx.input(1)},
             {{"mode", mode},
              {"padding_mode", ctx.attr_str("padding_mode", "zeros")},
              {"align_corners", ctx.attr_int("align_corners", 0)}});
}

// Adaptive sampling (sampling_ratio 0): ONNX Runtime's per-roi sample counts
// ceil(roi_size / output_size), computed in float32 like its kernel.
std::vector<int64_t> adaptive_grid(NodeCtx& ctx, bool half_pixel, int64_t oh, int64_t ow) {
    const ConstTensor* rois = ctx.constant_input(1);
    TS_USER_CHECK(rois != nullptr)
        << ctx.where() << ": sampling_ratio 0 (adaptive) needs constant rois, since the sample "
        << "count depends on their values; set sampling_ratio >= 1 or make rois an initializer";
    std::vector<double> v = constant_values(*rois);
    const float scale = float(ctx.attr_float("spatial_scale", 1.0)), off = half_pixel ? 0.5f : 0.f;
    std::vector<int64_t> grid;
    for (size_t r = 0; r + 3 < v.size(); r += 4) {
        float rw = (float(v[r + 2]) * scale - off) - (float(v[r]) * scale - off);
        float rh = (float(v[r + 3]) * scale - off) - (float(v[r + 1]) * scale - off);
        if (!half_pixel) rw = std::max(rw, 1.f), rh = std::max(rh, 1.f);
        grid.push_back(std::max<int64_t>(0, int64_t(std::ceil(rh / float(oh)))));
        grid.push_back(std::max<int64_t>(0, int64_t(std::ceil(rw / float(ow)))));
    }
    return grid;
}

void convert_roi_align(NodeCtx& ctx) {
    const graph::TensorType x = ctx.input_type(0);
    int64_t ratio = ctx.attr_int("sampling_ratio", 0);
    TS_USER_CHECK(ratio >= 0) << ctx.where() << ": sampling_ratio " << ratio << " is negative";
    std::string ctm = ctx.attr_str("coordinate_transformation_mode",
                                   ctx.opset() >= 16 ? "half_pixel" : "output_half_pixel");
    TS_USER_CHECK(ctm == "half_pixel" || ctm == "output_half_pixel")
        << ctx.where() << ": coordinate_transformation_mode '" << ctm
        << "' is not half_pixel or output_half_pixel";
    if (ctx.constant_input(2) && !x.shape.empty()) {
        for (int64_t b : ctx.constant_ints(2))
            TS_USER_CHECK(b >= 0 && b < x.shape[0]) << ctx.where() << ": batch index " << b
                                                    << " is out of range [0, " << x.shape[0] << ")";
    }
    int64_t oh = ctx.attr_int("output_height", 1), ow = ctx.attr_int("output_width", 1);
    std::map<std::string, graph::AttrValue> attrs = {
        {"mode", ctx.attr_str("mode", "avg")},
        {"output_height", oh},
        {"output_width", ow},
        {"sampling_ratio", ratio},
        {"spatial_scale", ctx.attr_float("spatial_scale", 1.0)},
        {"coordinate_transformation_mode", ctm}};
    std::vector<int> inputs = {ctx.input(0), ctx.input(1), ctx.input(2)};
    if (ratio == 0) {
        std::vector<int64_t> grid = adaptive_grid(ctx, ctm == "half_pixel", oh, ow);
        int64_t gh = 1, gw = 1;
        for (size_t i = 0; i < grid.size(); i += 2)
            gh = std::max(gh, grid[i]), gw = std::max(gw, grid[i + 1]);
        const std::string name =
            ctx.imp.define_helper_constant(ctx.name + "__roi_sample_counts",
                                           make_int64_tensor({int64_t(grid.size() / 2), 2}, grid));
        inputs.push_back(ctx.imp.value(name, ctx.where()));
        attrs["max_grid"] = std::vector<int64_t>{gh, gw};
    }
    ctx.emit("vision.roi_align", inputs, attrs);
}

// Compress with a constant condition: a take at the selected positions.
void convert_compress(NodeCtx& ctx) {
    const graph::TensorType x = ctx.input_type(0);
    const ConstTensor& cond = value_dependent_input(ctx, 1, "condition");
    std::vector<double> c = constant_values(cond);
    bool flat = !ctx.has_attr("axis");
    int64_t axis = flat ? 0 : normalize_axis(ctx, ctx.attr_int("axis", 0), int64_t(x.shape.size()));
    int64_t extent = flat ? x.num_elements() : x.shape[size_t(axis)];
    std::vector<int64_t> picked;
    for (size_t i = 0; i < c.size(); ++i) {
        if (c[i] == 0.0) continue;
        TS_USER_CHECK(int64_t(i) < extent)
            << ctx.where() << ": condition is true at position " << i << ", past the " << extent
            << " elements it selects from";
        picked.push_back(int64_t(i));
    }
    int data = ctx.input(0);
    if (flat)
        data = ctx.emit_internal("reshape", {data}, {{"newshape", std::vector<int64_t>{extent}}});
    const std::string idx_name = ctx.imp.define_helper_constant(
        ctx.name + "__compress_indices", make_int64_tensor({int64_t(picked.size())}, picked));
    ctx.emit("take", {data, ctx.imp.value(idx_name, ctx.where())}, {{"axis", axis}});
}

}  // namespace

void add_index_converters(ConverterTable& t) {
    t["GatherND"] = convert_gather_nd;
    t["ScatterElements"] = convert_scatter_elements;
    t["Scatter"] = convert_scatter_elements;  // opset 9/10 name of ScatterElements
    t["ScatterND"] = convert_scatter_nd;
    t["ReverseSequence"] = convert_reverse_sequence;
    t["MaxUnpool"] = convert_max_unpool;
    t["GridSample"] = convert_grid_sample;
    t["RoiAlign"] = convert_roi_align;
    t["Compress"] = convert_compress;
    add_dynamic_shape_converters(t);
}

}  // namespace tessera::frontend::onnx_import
