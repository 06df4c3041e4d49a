// ONNX converters for sequence and optional ops. A sequence of static length
// is an import-time list of element names (Importer::sequences); an optional
// names its element (Importer::optionals). Only the tensors reach the graph.
#include <algorithm>

#include "engine/core/error.h"
#include "engine/frontend/onnx/onnx_context.h"

namespace tessera::frontend::onnx_import {

namespace {

const std::vector<std::string>& seq_input(NodeCtx& ctx, int i) {
    TS_USER_CHECK(ctx.has_input(i)) << ctx.where() << ": missing input " << i;
    auto it = ctx.imp.sequences.find(ctx.node.input(i));
    TS_USER_CHECK(it != ctx.imp.sequences.end())
        << ctx.where() << ": input " << i << " ('" << ctx.node.input(i)
        << "') is not a sequence of static length";
    return it->second;
}

void define_sequence(NodeCtx& ctx, int out, std::vector<std::string> elems) {
    TS_USER_CHECK(out < ctx.node.output_size() && !ctx.node.output(out).empty())
        << ctx.where() << ": missing output " << out;
    const std::string& name = ctx.node.output(out);
    TS_USER_CHECK(!is_defined(ctx.imp, name))
        << ctx.where() << ": output '" << name << "' is defined twice";
    ctx.imp.sequences[name] = std::move(elems);
}

// The tensor element named by ONNX input i (checked to exist).
std::string tensor_input_name(NodeCtx& ctx, int i) {
    TS_USER_CHECK(ctx.has_input(i)) << ctx.where() << ": missing input " << i;
    const std::string& nm = ctx.node.input(i);
    TS_USER_CHECK(ctx.imp.values.count(nm) || ctx.imp.constants.count(nm))
        << ctx.where() << ": input " << i << " ('" << nm << "') is not a tensor";
    return nm;
}

// Constant scalar position of input i in [-n, n + extra), made non-negative.
int64_t position(NodeCtx& ctx, int i, int64_t n, int64_t extra) {
    std::vector<int64_t> p = ctx.constant_ints(i);
    TS_USER_CHECK(p.size() == 1) << ctx.where() << ": position must be a scalar";
    int64_t pos = p[0];
    TS_USER_CHECK(pos >= -n && pos < n + extra)
        << ctx.where() << ": position " << pos << " is out of range for a sequence of length "
        << n;
    return pos < 0 ? pos + n : pos;
}

ConstTensor scalar_int64(int64_t v) { return make_int64_tensor({}, {v}); }

ConstTensor scalar_bool(bool b) {
    auto data = std::make_shared<graph::ConstantData>();
    data->bytes = {uint8_t(b ? 1 : 0)};
    return {graph::TensorType{graph::DType::Bool, {}}, data};
}

// The name of graph value v (registered in imp.values or imp.constants).
std::string name_of(NodeCtx& ctx, int v) { return ctx.imp.g.values[size_t(v)].name; }

void convert_sequence_empty(NodeCtx& ctx) { define_sequence(ctx, 0, {}); }

void convert_sequence_construct(NodeCtx& ctx) {
    std::vector<std::string> elems;
    for (int i = 0; i < ctx.node.input_size(); ++i) elems.push_back(tensor_input_name(ctx, i));
    define_sequence(ctx, 0, std::move(elems));
}

void convert_sequence_insert(NodeCtx& ctx) {
    std::vector<std::string> s = seq_input(ctx, 0);
    std::string t = tensor_input_name(ctx, 1);
    int64_t n = int64_t(s.size());
    int64_t pos = ctx.has_input(2) ? position(ctx, 2, n, 1) : n;
    s.insert(s.begin() + pos, t);
    define_sequence(ctx, 0, std::move(s));
}

void convert_sequence_erase(NodeCtx& ctx) {
    std::vector<std::string> s = seq_input(ctx, 0);
    int64_t n = int64_t(s.size());
    TS_USER_CHECK(n > 0) << ctx.where() << ": cannot erase from an empty sequence";
    int64_t pos = ctx.has_input(1) ? position(ctx, 1, n, 0) : n - 1;
    s.erase(s.begin() + pos);
    define_sequence(ctx, 0, std::move(s));
}

void convert_sequence_at(NodeCtx& ctx) {
    const std::vector<std::string>& s = seq_input(ctx, 0);
    int64_t pos = position(ctx, 1, int64_t(s.size()), 0);
    alias_name(ctx.imp, ctx.node.output(0), s[size_t(pos)], ctx.where());
}

void convert_sequence_length(NodeCtx& ctx) {
    ctx.define_constant(scalar_int64(int64_t(seq_input(ctx, 0).size())));
}

// The most elements SplitToSequence may make (each is a node of the graph).
constexpr int64_t kMaxSequenceLength = int64_t(1) << 14;

void convert_split_to_sequence(NodeCtx& ctx) {
    const std::vector<int64_t> shape = ctx.input_type(0).shape;
    const int64_t rank = int64_t(shape.size());
    const int64_t axis = normalize_axis(ctx, ctx.attr_int("axis", 0), rank);
    const int64_t dim = shape[size_t(axis)];
    std::vector<int64_t> sizes;
    bool keepdims = true;
    auto check_length = [&](int64_t n) {
        TS_USER_CHECK(n <= kMaxSequenceLength)
            << ctx.where() << ": the sequence would have " << n << " elements, above the limit of "
            << kMaxSequenceLength;
    };
    if (!ctx.has_input(1)) {
        check_length(dim);
        sizes.assign(size_t(dim), 1);
        keepdims = ctx.attr_int("keepdims", 1) != 0;
    } else {
        const ConstTensor* c = ctx.constant_input(1);
        std::vector<int64_t> split = ctx.constant_ints(1);
        if (c->type.shape.empty()) {
            TS_USER_CHECK(split[0] > 0) << ctx.where() << ": split must be positive";
            check_length(dim / split[0]);
            for (int64_t off = 0; off < dim; off += split[0]) sizes.push_back(std::min(split[0], dim - off));
        } else {
            sizes = split;
            check_length(int64_t(sizes.size()));
            int64_t total = 0;
            for (int64_t v : sizes) {
                TS_USER_CHECK(v >= 0 && v <= dim) << ctx.where() << ": invalid split size " << v;
                total += v;
            }
            TS_USER_CHECK(total == dim) << ctx.where() << ": split sizes add up to " << total
                                        << ", not to dimension " << dim;
        }
    }
    int x = ctx.input(0);
    std::vector<std::string> elems;
    int64_t off = 0;
    for (int64_t sz : sizes) {
        std::vector<int64_t> b(size_t(rank), 0), e = shape, st(size_t(rank), 1);
        b[size_t(axis)] = off;
        e[size_t(axis)] = off + sz;
        off += sz;
        int v = ctx.emit_internal("strided_slice", {x}, {{"begin", b}, {"end", e}, {"strides", st}});
        if (!keepdims) {
            std::vector<int64_t> squeezed = shape;
            squeezed.erase(squeezed.begin() + axis);
            v = ctx.emit_internal("reshape", {v}, {{"newshape", squeezed}});
        }
        elems.push_back(name_of(ctx, v));
    }
    define_sequence(ctx, 0, std::move(elems));
}

void convert_concat_from_sequence(NodeCtx& ctx) {
    const std::vector<std::string>& s = seq_input(ctx, 0);
    TS_USER_CHECK(!s.empty()) << ctx.where() << ": cannot concatenate an empty sequence";
    TS_USER_CHECK(ctx.has_attr("axis")) << ctx.where() << ": missing attribute axis";
    const bool new_axis = ctx.attr_int("new_axis", 0) != 0;
    std::vector<int> inputs;
    for (const auto& e : s) inputs.push_back(ctx.imp.value(e, ctx.where()));
    const std::vector<int64_t> shape = ctx.type_of(inputs[0]).shape;
    const int64_t rank = int64_t(shape.size()) + (new_axis ? 1 : 0);
    const int64_t axis = normalize_axis(ctx, ctx.attr_int("axis", 0), rank);
    if (new_axis) {
        for (int& v : inputs) {
            std::vector<int64_t> sh = ctx.type_of(v).shape;
            sh.insert(sh.begin() + axis, 1);
            v = ctx.emit_internal("reshape", {v}, {{"newshape", sh}});
        }
    }
    ctx.emit("concatenate", inputs, {{"axis", axis}});
}

void convert_optional(NodeCtx& ctx) {
    ctx.expect_outputs(1);
    const std::string& out = ctx.node.output(0);
    TS_USER_CHECK(!is_defined(ctx.imp, out))
        << ctx.where() << ": output '" << out << "' is defined twice";
    std::string elem;
    if (ctx.has_input(0)) {
        elem = ctx.node.input(0);
        TS_USER_CHECK(is_defined(ctx.imp, elem))
            << ctx.where() << ": input '" << elem << "' is not defined";
    }
    ctx.imp.optionals[out] = elem;
}

// The element an optional (or plain value) input holds, "" when empty.
std::string optional_element(NodeCtx& ctx) {
    if (!ctx.has_input(0)) return "";
    const std::string& in = ctx.node.input(0);
    if (auto it = ctx.imp.optionals.find(in); it != ctx.imp.optionals.end()) return it->second;
    TS_USER_CHECK(is_defined(ctx.imp, in))
        << ctx.where() << ": input '" << in << "' is not defined";
    return in;
}

void convert_optional_has_element(NodeCtx& ctx) {
    ctx.define_constant(scalar_bool(!optional_element(ctx).empty()));
}

void convert_optional_get_element(NodeCtx& ctx) {
    std::string elem = optional_element(ctx);
    TS_USER_CHECK(!elem.empty()) << ctx.where() << ": the optional input is empty";
    alias_name(ctx.imp, ctx.node.output(0), elem, ctx.where());
}

}  // namespace

void add_seq_converters(ConverterTable& t) {
    t["SequenceEmpty"] = convert_sequence_empty;
    t["SequenceConstruct"] = convert_sequence_construct;
    t["SequenceInsert"] = convert_sequence_insert;
    t["SequenceErase"] = convert_sequence_erase;
    t["SequenceAt"] = convert_sequence_at;
    t["SequenceLength"] = convert_sequence_length;
    t["SplitToSequence"] = convert_split_to_sequence;
    t["ConcatFromSequence"] = convert_concat_from_sequence;
    t["Optional"] = convert_optional;
    t["OptionalHasElement"] = convert_optional_has_element;
    t["OptionalGetElement"] = convert_optional_get_element;
    // Identity of a sequence, an optional or a string tensor is an alias; of
    // a tensor, the tensor converter's.
    Converter tensor_identity = t.count("Identity") ? t["Identity"] : Converter();
    t["Identity"] = [tensor_identity](NodeCtx& ctx) {
        const std::string in = ctx.has_input(0) ? ctx.node.input(0) : "";
        const Importer& imp = ctx.imp;
        if (imp.sequences.count(in) || imp.optionals.count(in) || imp.strings.count(in) ||
            !tensor_identity) {
            ctx.expect_outputs(1);
            alias_name(ctx.imp, ctx.node.output(0), in, ctx.where());
            return;
        }
        tensor_identity(ctx);
    };
    // A Constant holding strings goes to the string table.
    Converter tensor_constant = t.count("Constant") ? t["Constant"] : Converter();
    t["Constant"] = [tensor_constant](NodeCtx& ctx) {
        for (const auto& a : ctx.node.attribute()) {
            if (a.name() != "value" || !a.has_t() ||
                a.t().data_type() != onnx::TensorProto_DataType_STRING)
                continue;
            ctx.expect_outputs(1);
            TS_USER_CHECK(!is_defined(ctx.imp, ctx.node.output(0)))
                << ctx.where() << ": output '" << ctx.node.output(0) << "' is defined twice";
            ctx.imp.strings[ctx.node.output(0)] = decode_strings(a.t());
            return;
        }
        TS_USER_CHECK(bool(tensor_constant)) << ctx.where() << ": unsupported op Constant";
        tensor_constant(ctx);
    };
    add_control_flow_converters(t);
    add_string_converters(t);
}

}  // namespace tessera::frontend::onnx_import
