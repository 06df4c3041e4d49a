// ONNX ops that compute shapes, folded to constants at import: Shape, Size,
// ConstantOfShape, Range.
#include <cmath>
#include <cstring>

#include "engine/core/error.h"
#include "engine/frontend/onnx/onnx_context.h"

namespace tessera::frontend::onnx_import {

namespace {

ConstTensor int64_tensor(std::vector<int64_t> shape, const std::vector<int64_t>& values) {
    ConstTensor c;
    c.type = {graph::DType::Int64, std::move(shape)};
    auto data = std::make_shared<graph::ConstantData>();
    data->bytes.resize(values.size() * sizeof(int64_t));
    if (!values.empty()) std::memcpy(data->bytes.data(), values.data(), data->bytes.size());
    c.data = data;
    return c;
}

void convert_shape(NodeCtx& ctx) {
    std::vector<int64_t> s = ctx.input_type(0).shape;
    int64_t rank = int64_t(s.size());
    int64_t start = ctx.attr_int("start", 0), end = ctx.attr_int("end", rank);
    if (start < 0) start += rank;
    if (end < 0) end += rank;
    start = std::clamp<int64_t>(start, 0, rank);
    end = std::clamp<int64_t>(end, start, rank);
    std::vector<int64_t> v(s.begin() + start, s.begin() + end);
    ctx.define_constant(int64_tensor({int64_t(v.size())}, v));
}

void convert_size(NodeCtx& ctx) {
    ctx.define_constant(int64_tensor({}, {ctx.input_type(0).num_elements()}));
}

void convert_constant_of_shape(NodeCtx& ctx) {
    std::vector<int64_t> shape = ctx.constant_ints(0);
    for (int64_t d : shape) TS_USER_CHECK(d >= 0) << ctx.where() << ": invalid dimension " << d;
    const int64_t count = check_constant_size(ctx, shape, "the output");
    ConstTensor value;
    value.type = {graph::DType::Float32, {1}};
    auto zero = std::make_shared<graph::ConstantData>();
    zero->bytes.assign(4, 0);
    value.data = zero;
    for (const auto& a : ctx.node.attribute())
        if (a.name() == "value") value = decode_tensor(a.t(), ctx.where() + ": value");
    TS_USER_CHECK(value.type.num_elements() == 1)
        << ctx.where() << ": value must hold one element, got " << value.type.str();
    ConstTensor c;
    c.type = {value.type.dtype, shape};
    auto data = std::make_shared<graph::ConstantData>();
    size_t elem = size_t(graph::dtype_bytes(value.type.dtype));
    data->bytes.resize(size_t(count) * elem);
    for (int64_t i = 0; i < count; ++i)
        std::memcpy(data->bytes.data() + size_t(i) * elem, value.data->bytes.data(), elem);
    c.data = data;
    ctx.define_constant(std::move(c));
}

double scalar_of(NodeCtx& ctx, int i, graph::DType& dtype) {
    const ConstTensor* c = ctx.constant_input(i);
    TS_USER_CHECK(c && c->type.num_elements() == 1)
        << ctx.where() << ": input " << i << " must be a constant scalar";
    dtype = c->type.dtype;
    switch (dtype) {
        case graph::DType::Float32: return c->data->as<float>()[0];
        case graph::DType::Float64: return c->data->as<double>()[0];
        case graph::DType::Int64: return double(c->data->as<int64_t>()[0]);
        case graph::DType::Int32: return c->data->as<int32_t>()[0];
        default: TS_USER_FAIL() << ctx.where() << ": unsupported type " << c->type.str();
    }
}

// Range over int32/int64 in exact integer arithmetic: through double, values
// above 2^53 would round (a range of large ids would be off by a few).
void convert_int_range(NodeCtx& ctx, graph::DType t) {
    auto value = [&](int i) -> int64_t {
        const ConstTensor* c = ctx.constant_input(i);
        TS_USER_CHECK(c && c->type.num_elements() == 1 && c->type.dtype == t)
            << ctx.where() << ": input " << i << " must be a constant scalar of the type of input 0";
        return t == graph::DType::Int64 ? c->data->as<int64_t>()[0] : c->data->as<int32_t>()[0];
    };
    const int64_t start = value(0), limit = value(1), delta = value(2);
    TS_USER_CHECK(delta != 0) << ctx.where() << ": delta is 0";
    const __int128 span = __int128(limit) - start;
    __int128 n = span / delta;  // ceil(span / delta), then at least 0
    if (span % delta != 0 && ((span < 0) == (delta < 0))) n += 1;
    if (n < 0) n = 0;
    TS_USER_CHECK(n <= kMaxImportConstantElements)
        << ctx.where() << ": range too long (the limit is " << kMaxImportConstantElements
        << " elements)";
    const int64_t count = int64_t(n);
    ConstTensor c;
    c.type = {t, {count}};
    auto data = std::make_shared<graph::ConstantData>();
    data->bytes.resize(size_t(count) * size_t(graph::dtype_bytes(t)));
    for (int64_t i = 0; i < count; ++i) {
        const int64_t v = int64_t(__int128(start) + __int128(i) * delta);  // within [start, limit)
        if (t == graph::DType::Int64)
            reinterpret_cast<int64_t*>(data->bytes.data())[i] = v;
        else
            reinterpret_cast<int32_t*>(data->bytes.data())[i] = int32_t(v);
    }
    c.data = data;
    ctx.define_constant(std::move(c));
}

void convert_range(NodeCtx& ctx) {
    graph::DType t;
    double start = scalar_of(ctx, 0, t), limit = scalar_of(ctx, 1, t), delta = scalar_of(ctx, 2, t);
    if (t == graph::DType::Int64 || t == graph::DType::Int32) return convert_int_range(ctx, t);
    TS_USER_CHECK(delta != 0) << ctx.where() << ": delta is 0";
    double n = std::ceil((limit - start) / delta);
    TS_USER_CHECK(!std::isnan(n) && n <= double(kMaxImportConstantElements))
        << ctx.where() << ": range too long (" << n << " elements; the limit is "
        << kMaxImportConstantElements << ")";
    int64_t count = n > 0 ? int64_t(n) : 0;
    ConstTensor c;
    c.type = {t, {count}};
    auto data = std::make_shared<graph::ConstantData>();
    data->bytes.resize(size_t(count) * size_t(graph::dtype_bytes(t)));
    for (int64_t i = 0; i < count; ++i) {
        double v = start + double(i) * delta;
        switch (t) {
            case graph::DType::Float32:
                // ONNX computes start + i * delta in the input type.
                reinterpret_cast<float*>(data->bytes.data())[i] =
                    float(start) + float(i) * float(delta);
                break;
            default: reinterpret_cast<double*>(data->bytes.data())[i] = v; break;  // Float64
        }
    }
    c.data = data;
    ctx.define_constant(std::move(c));
}

}  // namespace

ConstTensor make_int64_tensor(std::vector<int64_t> shape, const std::vector<int64_t>& values) {
    return int64_tensor(std::move(shape), values);
}

void add_shape_converters(ConverterTable& t) {
    t["Shape"] = convert_shape;
    t["Size"] = convert_size;
    t["ConstantOfShape"] = convert_constant_of_shape;
    t["Range"] = convert_range;
}

}  // namespace tessera::frontend::onnx_import
