// ONNX converters for narrow and half-precision dtypes at the graph boundary.
// Policy (issue 5): float16/bfloat16 compute as float32, int16/uint16 as
// int32, uint32/uint64 as int64. Tensors are widened on import; a Cast to a
// narrow type and ops that can leave an integer type's range get a
// narrow_cast node; uint64 values feeding ops where signedness matters are
// refused unless they are constants below 2^63.
#include "engine/frontend/onnx/onnx_dtype.h"

#include <cstring>
#include <fstream>
#include <limits>
#include <optional>
#include <set>
#include <sstream>

#include "engine/core/error.h"
#include "engine/core/small_types.h"
#include "engine/frontend/onnx/boundary_types.h"
#include "engine/runtime/half_float.h"

namespace tessera::frontend {

namespace onnx_import {

using graph::DType;

namespace {

// The 8-, 4- and 2-bit types (core/small_types.h) by ONNX element type.
std::optional<SmallType> small_of(int elem_type) {
    switch (elem_type) {
        case kFloat8E4M3FN:
            return SmallType::Float8E4M3FN;
        case kFloat8E4M3FNUZ:
            return SmallType::Float8E4M3FNUZ;
        case kFloat8E5M2:
            return SmallType::Float8E5M2;
        case kFloat8E5M2FNUZ:
            return SmallType::Float8E5M2FNUZ;
        case kUInt4:
            return SmallType::UInt4;
        case kInt4:
            return SmallType::Int4;
        case kFloat4E2M1:
            return SmallType::Float4E2M1;
        case kFloat8E8M0:
            return SmallType::Float8E8M0;
        case kUInt2:
            return SmallType::UInt2;
        case kInt2:
            return SmallType::Int2;
        default:
            return std::nullopt;
    }
}

constexpr int kWideTypes[] = {
    onnx::TensorProto_DataType_FLOAT16, onnx::TensorProto_DataType_BFLOAT16,
    onnx::TensorProto_DataType_INT16,   onnx::TensorProto_DataType_UINT16,
    onnx::TensorProto_DataType_UINT32,  onnx::TensorProto_DataType_UINT64};

}  // namespace

bool is_boundary_elem_type(int elem_type) {
    for (int t : kWideTypes)
        if (t == elem_type) return true;
    return small_of(elem_type).has_value();
}

bool is_small_float_elem_type(int elem_type) {
    auto s = small_of(elem_type);
    return s && small_type_is_float(*s);
}

graph::DType boundary_compute_dtype(int elem_type) {
    if (auto s = small_of(elem_type))
        return small_type_is_float(*s) ? DType::Float32 : DType::Int32;
    switch (elem_type) {
        case onnx::TensorProto_DataType_FLOAT16:
        case onnx::TensorProto_DataType_BFLOAT16:
            return DType::Float32;
        case onnx::TensorProto_DataType_INT16:
        case onnx::TensorProto_DataType_UINT16:
            return DType::Int32;
        default:
            return DType::Int64;
    }
}

std::string boundary_type_name(int elem_type) {
    if (auto s = small_of(elem_type)) return small_type_name(*s);
    switch (elem_type) {
        case onnx::TensorProto_DataType_FLOAT16:
            return "float16";
        case onnx::TensorProto_DataType_BFLOAT16:
            return "bfloat16";
        case onnx::TensorProto_DataType_INT16:
            return "int16";
        case onnx::TensorProto_DataType_UINT16:
            return "uint16";
        case onnx::TensorProto_DataType_UINT32:
            return "uint32";
        case onnx::TensorProto_DataType_UINT64:
            return "uint64";
        default:
            return "";
    }
}

int boundary_elem_type(const std::string& name) {
    for (int t : kWideTypes)
        if (boundary_type_name(t) == name) return t;
    for (int t = kFloat8E4M3FN; t <= kInt2; ++t)
        if (boundary_type_name(t) == name) return t;
    return 0;
}

namespace {

// Bits of one element as ONNX stores it (8-, 4- and 2-bit types are packed
// into bytes, the first element in the low bits).
int stored_bits(int elem_type) {
    if (auto s = small_of(elem_type)) return small_type_bits(*s);
    switch (elem_type) {
        case onnx::TensorProto_DataType_UINT32:
            return 32;
        case onnx::TensorProto_DataType_UINT64:
            return 64;
        default:
            return 16;
    }
}

// Bytes that hold `count` elements of `bits` bits.
int64_t stored_size(int64_t count, int bits) { return (count * bits + 7) / 8; }

// One stored element (its bits) widened into `out` (float32 / int32 / int64 slot `i`).
void widen(int elem_type, uint64_t bits, uint8_t* out, int64_t i) {
    if (auto s = small_of(elem_type)) {
        const double v = small_bits_to_value(*s, uint32_t(bits));
        if (small_type_is_float(*s))
            reinterpret_cast<float*>(out)[i] = float(v);
        else
            reinterpret_cast<int32_t*>(out)[i] = int32_t(v);
        return;
    }
    switch (elem_type) {
        case onnx::TensorProto_DataType_FLOAT16:
            reinterpret_cast<float*>(out)[i] = runtime::half_bits_to_float(uint16_t(bits));
            break;
        case onnx::TensorProto_DataType_BFLOAT16:
            reinterpret_cast<float*>(out)[i] = runtime::bfloat16_bits_to_float(uint16_t(bits));
            break;
        case onnx::TensorProto_DataType_INT16:
            reinterpret_cast<int32_t*>(out)[i] = int16_t(uint16_t(bits));
            break;
        case onnx::TensorProto_DataType_UINT16:
            reinterpret_cast<int32_t*>(out)[i] = uint16_t(bits);
            break;
        case onnx::TensorProto_DataType_UINT32:
            reinterpret_cast<int64_t*>(out)[i] = int64_t(uint32_t(bits));
            break;
        default:  // UINT64: the same bits as int64
            reinterpret_cast<int64_t*>(out)[i] = int64_t(bits);
            break;
    }
}

// The stored bits of element `i` of compute-dtype data, narrowed to
// `elem_type` (float8/float4 out of range: saturated unless `saturate` is false).
uint64_t narrow(int elem_type, const uint8_t* data, int64_t i, bool saturate = true) {
    if (auto s = small_of(elem_type)) {
        const double v = small_type_is_float(*s)
                             ? double(reinterpret_cast<const float*>(data)[i])
                             : double(reinterpret_cast<const int32_t*>(data)[i]);
        return value_to_small_bits(*s, v, saturate);
    }
    switch (elem_type) {
        case onnx::TensorProto_DataType_FLOAT16:
            return runtime::float_to_half_bits(reinterpret_cast<const float*>(data)[i]);
        case onnx::TensorProto_DataType_BFLOAT16:
            return runtime::float_to_bfloat16_bits(reinterpret_cast<const float*>(data)[i]);
        case onnx::TensorProto_DataType_INT16:
        case onnx::TensorProto_DataType_UINT16:
            return uint16_t(reinterpret_cast<const int32_t*>(data)[i]);
        case onnx::TensorProto_DataType_UINT32:
            return uint32_t(reinterpret_cast<const int64_t*>(data)[i]);
        default:
            return uint64_t(reinterpret_cast<const int64_t*>(data)[i]);
    }
}

}  // namespace

ConstTensor decode_boundary_tensor(const onnx::TensorProto& t, const std::string& what) {
    const int et = t.data_type();
    ConstTensor c;
    c.type.dtype = boundary_compute_dtype(et);
    int64_t count = 1;
    for (int64_t d : t.dims()) {
        TS_USER_CHECK(d >= 0) << what << ": negative dimension " << d;
        TS_USER_CHECK(d == 0 || count <= (int64_t(1) << 34) / d)
            << what << ": a " << boundary_type_name(et) << " tensor of this shape is too large";
        c.type.shape.push_back(d);
        count *= d;
    }
    const int bits = stored_bits(et);
    // Sub-byte types keep one packed byte per int32_data entry; 8- and
    // 16-bit types one element; uint32/uint64 live in uint64_data.
    const bool in_int32 = bits <= 16;
    const int64_t units = bits < 8 ? stored_size(count, bits) : count;
    // The stored data must match the shape before anything of that size is allocated.
    if (t.has_raw_data()) {
        TS_USER_CHECK(int64_t(t.raw_data().size()) == stored_size(count, bits))
            << what << ": raw_data holds " << t.raw_data().size() << " bytes, shape "
            << c.type.str() << " of " << boundary_type_name(et) << " needs "
            << stored_size(count, bits);
    } else {
        const int64_t stored = in_int32 ? t.int32_data_size() : t.uint64_data_size();
        TS_USER_CHECK(stored == units) << what << ": holds " << stored << " values, shape "
                                       << c.type.str() << " needs " << units;
    }
    auto data = std::make_shared<graph::ConstantData>();
    data->bytes.resize(size_t(c.type.num_bytes()));
    uint8_t* out = data->bytes.data();
    auto stored_byte = [&](int64_t b) -> uint64_t {
        return t.has_raw_data() ? uint8_t(t.raw_data()[size_t(b)]) : uint8_t(t.int32_data(int(b)));
    };
    for (int64_t i = 0; i < count; ++i) {
        uint64_t v = 0;
        if (bits < 8) {
            v = (stored_byte(i * bits / 8) >> ((i * bits) % 8)) & ((1u << bits) - 1);
        } else if (t.has_raw_data()) {
            std::memcpy(&v, t.raw_data().data() + size_t(i) * size_t(bits / 8), size_t(bits / 8));
        } else {
            v = in_int32 ? uint64_t(uint32_t(t.int32_data(int(i)))) : t.uint64_data(int(i));
        }
        widen(et, v, out, i);
    }
    c.data = std::move(data);
    return c;
}

void encode_boundary_tensor(const graph::TensorType& type, const void* data, int elem_type,
                            const std::string& name, onnx::TensorProto* out) {
    TS_USER_CHECK(type.dtype == boundary_compute_dtype(elem_type))
        << "tensor '" << name << "': " << type.str() << " cannot be written as "
        << boundary_type_name(elem_type);
    out->Clear();
    out->set_name(name);
    out->set_data_type(elem_type);
    for (int64_t d : type.shape) out->add_dims(d);
    const int bits = stored_bits(elem_type);
    const int64_t count = type.num_elements();
    std::string raw(size_t(stored_size(count, bits)), '\0');
    for (int64_t i = 0; i < count; ++i) {
        uint64_t v = narrow(elem_type, static_cast<const uint8_t*>(data), i);
        if (bits < 8)
            raw[size_t(i * bits / 8)] =
                char(uint8_t(raw[size_t(i * bits / 8)]) | (v << ((i * bits) % 8)));
        else
            std::memcpy(raw.data() + size_t(i) * size_t(bits / 8), &v, size_t(bits / 8));
    }
    out->set_raw_data(std::move(raw));
}

namespace {

// Ops whose integer results can leave an int16/uint16/uint32 output's range
// (computed in int32/int64) and so need a wrap.
const std::set<std::string>& may_leave_range() {
    static const std::set<std::string> ops = {
        "Add",    "Sub",           "Mul",       "Neg",        "Abs",
        "Sum",    "Pow",           "BitShift",  "Cast",       "CastLike",
        "CumSum", "CumProd",       "ReduceSum", "ReduceProd", "ReduceSumSquare",
        "MatMul", "MatMulInteger", "Gemm",      "Einsum",     "Div",
        "Mean",   "Det",           "BitwiseNot", "BitCast"};
    return ops;
}

// Ops whose result depends on the sign of an int64 operand: a uint64 value of
// 2^63 or more would be wrong there.
const std::set<std::string>& sign_sensitive() {
    static const std::set<std::string> ops = {
        "Less",      "Greater", "LessOrEqual", "GreaterOrEqual", "Max",  "Min",
        "Div",       "Mod",     "ArgMax",      "ArgMin",         "TopK", "ReduceMax",
        "ReduceMin", "Clip",    "Relu",        "Sign",           "Abs",  "Sort",
        "Unique",    "Cast",    "CastLike",    "BitShift"};
    return ops;
}

}  // namespace

int declared_elem_type(const Importer& imp, const std::string& name) {
    if (auto i = imp.initializer_elem_types.find(name); i != imp.initializer_elem_types.end())
        return i->second;
    auto it = imp.onnx_types.find(name);
    if (it == imp.onnx_types.end() || !it->second || !it->second->has_tensor_type()) return 0;
    return it->second->tensor_type().elem_type();
}

namespace {

// Ops that only compare their operands (or pick one): on uint64 values they
// run exactly on int64 after adding 2^63 (mod 2^64) to every operand, which
// maps unsigned order onto signed order (Max/Min take the bias off again).
const std::set<std::string>& order_only() {
    static const std::set<std::string> ops = {"Less",           "Greater", "LessOrEqual",
                                              "GreaterOrEqual", "Max",     "Min"};
    return ops;
}

// The graph value of ONNX value `name` plus 2^63 (wrapping); returns the new value's name.
std::string biased(NodeCtx& ctx, const std::string& name) {
    Importer& imp = ctx.imp;
    const std::string cname = imp.define_helper_constant(
        ctx.name + "__u64bias", make_int64_tensor({}, {std::numeric_limits<int64_t>::min()}));
    int v = ctx.emit_internal("add", {imp.value(name, ctx.where()), imp.value(cname, ctx.where())});
    return imp.g.values[size_t(v)].name;
}

// True when the node has a uint64 input that is not a constant below 2^63.
bool has_unsigned_input(NodeCtx& ctx) {
    for (int i = 0; i < ctx.node.input_size(); ++i) {
        if (!ctx.has_input(i) ||
            declared_elem_type(ctx.imp, ctx.node.input(i)) != onnx::TensorProto_DataType_UINT64)
            continue;
        if (const ConstTensor* c = ctx.constant_input(i)) {
            const int64_t* v = c->data->as<int64_t>();
            bool exact = true;
            for (int64_t k = 0; k < c->type.num_elements(); ++k) exact = exact && v[k] >= 0;
            if (exact) continue;
        }
        return true;
    }
    return false;
}

// Converts an order-only op on uint64 operands through the 2^63 bias.
void convert_biased(NodeCtx& ctx, const Converter& inner) {
    onnx::NodeProto node = ctx.node;
    for (int i = 0; i < node.input_size(); ++i)
        if (!node.input(i).empty()) node.set_input(i, biased(ctx, node.input(i)));
    NodeCtx biased_ctx(ctx.imp, node, ctx.name);
    inner(biased_ctx);
    if (ctx.node.op_type() != "Max" && ctx.node.op_type() != "Min") return;
    // The result is a biased operand: remove the bias under the ONNX name.
    Importer& imp = ctx.imp;
    const std::string& out = ctx.node.output(0);
    auto v = imp.values.find(out);
    if (auto c = imp.constants.find(out); c != imp.constants.end()) {  // folded
        auto data = std::make_shared<graph::ConstantData>(*c->second.data);
        int64_t* x = reinterpret_cast<int64_t*>(data->bytes.data());
        for (int64_t k = 0; k < c->second.type.num_elements(); ++k)
            x[k] = int64_t(uint64_t(x[k]) + (uint64_t(1) << 63));
        c->second.data = data;
        if (v != imp.values.end()) imp.g.values[size_t(v->second)].constant = data;
        return;
    }
    if (v == imp.values.end()) return;
    const int old = v->second;
    const std::string unbiased = biased(ctx, out);
    const int w = imp.values.at(unbiased);
    std::swap(imp.g.values[size_t(old)].name, imp.g.values[size_t(w)].name);
    imp.values[imp.g.values[size_t(old)].name] = old;
    imp.values[out] = w;
}

// UserError for a uint64 input of a sign-sensitive op, unless it is a constant
// whose values are all below 2^63 (then int64 is exact).
void check_uint64_inputs(NodeCtx& ctx) {
    const std::string& op = ctx.node.op_type();
    if (!sign_sensitive().count(op)) return;
    if (op == "BitShift" && ctx.attr_str("direction", "") == "LEFT") return;  // wraps exactly
    if (op == "Cast" || op == "CastLike") {
        int to = op == "Cast"
                     ? int(ctx.attr_int("to", 0))
                     : (ctx.has_input(1) ? declared_elem_type(ctx.imp, ctx.node.input(1)) : 0);
        if (to == onnx::TensorProto_DataType_INT64 || to == onnx::TensorProto_DataType_UINT64)
            return;  // the same bits
    }
    for (int i = 0; i < ctx.node.input_size(); ++i) {
        if (!ctx.has_input(i) ||
            declared_elem_type(ctx.imp, ctx.node.input(i)) != onnx::TensorProto_DataType_UINT64)
            continue;
        if (const ConstTensor* c = ctx.constant_input(i)) {
            const int64_t* v = c->data->as<int64_t>();
            bool exact = true;
            for (int64_t k = 0; k < c->type.num_elements(); ++k) exact = exact && v[k] >= 0;
            if (exact) continue;
        }
        TS_USER_FAIL() << ctx.where() << ": element type UINT64 is not supported by " << op
                       << " (input '" << ctx.node.input(i)
                       << "'): Tessera computes uint64 as int64, and values of 2^63 or more "
                          "would compare or divide as negative";
    }
}

// How a Cast rounds into a narrow type.
struct Rounding {
    bool truncate = false;  // bfloat16 toward zero (ONNX's reference before opset 19)
    bool saturate = true;   // float8: out of range gives the largest value, not inf/NaN
};

// A constant's data narrowed to the value set of `elem_type`.
std::shared_ptr<graph::ConstantData> narrowed_data(const ConstTensor& c, int elem_type,
                                                   Rounding rounding) {
    const bool truncate = rounding.truncate;
    auto data = std::make_shared<graph::ConstantData>(*c.data);
    const int64_t count = c.type.num_elements();
    for (int64_t i = 0; i < count; ++i) {
        uint64_t bits = narrow(elem_type, c.data->bytes.data(), i, rounding.saturate);
        if (truncate) {
            float f = c.data->as<float>()[i];
            uint32_t u;
            std::memcpy(&u, &f, sizeof u);
            bits = f != f ? runtime::float_to_bfloat16_bits(f) : (u >> 16);
        }
        widen(elem_type, bits, data->bytes.data(), i);
    }
    return data;
}

// Makes ONNX value `name` (output of the node just converted) hold values of
// its declared narrow type: a constant is narrowed now, anything else gets a
// narrow_cast node that takes over the ONNX name.
void narrow_value(NodeCtx& ctx, const std::string& name, int elem_type, Rounding rounding) {
    Importer& imp = ctx.imp;
    const DType want = boundary_compute_dtype(elem_type);
    if (auto c = imp.constants.find(name); c != imp.constants.end()) {
        if (c->second.type.dtype != want) return;
        c->second.data = narrowed_data(c->second, elem_type, rounding);
        if (auto v = imp.values.find(name); v != imp.values.end())
            imp.g.values[size_t(v->second)].constant = c->second.data;
        return;
    }
    auto v = imp.values.find(name);
    if (v == imp.values.end()) return;
    const int old = v->second;
    if (imp.g.values[size_t(old)].type.dtype != want) return;
    std::map<std::string, graph::AttrValue> attrs = {{"dtype", boundary_type_name(elem_type)}};
    if (rounding.truncate) attrs["rounding"] = std::string("toward_zero");
    if (!rounding.saturate) attrs["saturate"] = int64_t(0);
    const int w = ctx.emit_internal("narrow_cast", {old}, std::move(attrs));
    std::swap(imp.g.values[size_t(old)].name, imp.g.values[size_t(w)].name);
    imp.values[imp.g.values[size_t(old)].name] = old;
    imp.values[name] = w;
}

// The narrow types a node's outputs must be brought into after conversion.
void narrow_outputs(NodeCtx& ctx) {
    const std::string& op = ctx.node.op_type();
    for (int i = 0; i < ctx.node.output_size(); ++i) {
        const std::string& name = ctx.node.output(i);
        if (name.empty()) continue;
        int et = declared_elem_type(ctx.imp, name);
        if (op == "Cast" && i == 0) et = int(ctx.attr_int("to", et));
        if (op == "CastLike" && i == 0 && ctx.has_input(1)) {
            int like = declared_elem_type(ctx.imp, ctx.node.input(1));
            if (like) et = like;
        }
        bool is_float = et == onnx::TensorProto_DataType_FLOAT16 ||
                        et == onnx::TensorProto_DataType_BFLOAT16 || is_small_float_elem_type(et);
        bool is_int =
            et == onnx::TensorProto_DataType_INT16 || et == onnx::TensorProto_DataType_UINT16 ||
            et == onnx::TensorProto_DataType_UINT32 ||
            (is_boundary_elem_type(et) && !is_float && boundary_compute_dtype(et) == DType::Int32);
        // float16 intermediates compute in float32 (the policy); only an
        // explicit conversion rounds, so Cast(FLOAT -> FLOAT16) is exact.
        // ONNX's reference Cast kept the high half of float32 for bfloat16
        // until opset 19 (its test data expects that); later opsets round.
        Rounding rounding;
        rounding.truncate = et == onnx::TensorProto_DataType_BFLOAT16 && ctx.imp.source_opset < 19;
        if (op == "Cast" || op == "CastLike") {
            rounding.saturate = ctx.attr_int("saturate", 1) != 0;
            const std::string mode = ctx.attr_str("round_mode", "up");
            TS_USER_CHECK(mode == "up" || et != kFloat8E8M0)
                << ctx.where() << ": round_mode '" << mode
                << "' to float8e8m0 is not supported (up is)";
        }
        if (op == "QuantizeLinear") rounding.saturate = ctx.attr_int("saturate", 1) != 0;
        if ((is_float && (op == "Cast" || op == "CastLike" || op == "QuantizeLinear")) ||
            (is_int && may_leave_range().count(op)))
            narrow_value(ctx, name, et, rounding);
    }
}

}  // namespace

void add_dtype_converters(ConverterTable& t) {
    // Every converter registered so far gets the boundary-type checks.
    for (auto& [op, convert] : t) {
        Converter inner = convert;
        convert = [inner](NodeCtx& ctx) {
            if (order_only().count(ctx.node.op_type()) && has_unsigned_input(ctx)) {
                convert_biased(ctx, inner);
                return;
            }
            check_uint64_inputs(ctx);
            inner(ctx);
            narrow_outputs(ctx);
        };
    }
}

}  // namespace onnx_import

BoundaryTypes read_boundary_types(const std::string& model_path) {
    const onnx::ModelProto model = onnx_import::read_model_proto(model_path);
    BoundaryTypes b;
    const onnx::GraphProto& gp = model.graph();
    std::set<std::string> initializers;
    for (const auto& init : gp.initializer()) initializers.insert(init.name());
    auto declared = [](const onnx::ValueInfoProto& vi) {
        if (!vi.type().has_tensor_type()) return std::string();
        return onnx_import::boundary_type_name(vi.type().tensor_type().elem_type());
    };
    for (const auto& vi : gp.input()) {
        if (initializers.count(vi.name())) continue;
        std::string d = declared(vi);
        b.input_types.push_back(d);
        if (!d.empty()) b.inputs[vi.name()] = d;
    }
    for (const auto& vi : gp.output()) {
        std::string d = declared(vi);
        b.output_types.push_back(d);
        if (!d.empty()) b.outputs[vi.name()] = d;
    }
    return b;
}

void write_tensor_pb_as(const runtime::NDArray& a, const std::string& declared,
                        const std::string& name, const std::string& path) {
    if (declared.empty()) return write_tensor_pb(a, name, path);
    const int et = onnx_import::boundary_elem_type(declared);
    TS_USER_CHECK(et != 0) << "write '" << path << "': unknown element type '" << declared << "'";
    TS_USER_CHECK(a.defined()) << "write_tensor_pb('" << path << "'): the array is empty";
    onnx::TensorProto t;
    onnx_import::encode_boundary_tensor(a.type(), a.raw(), et, name, &t);
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    TS_USER_CHECK(out.good()) << "cannot write tensor file '" << path << "'";
    TS_USER_CHECK(t.SerializeToOstream(&out)) << "failed writing tensor file '" << path << "'";
    out.close();
    TS_USER_CHECK(!out.fail()) << "failed writing tensor file '" << path << "'";
}

}  // namespace tessera::frontend
