// Nodes of the ai.tessera domain: graph ops that a saved model holds as they
// are (onnx_export.cpp writes every op without a standard ONNX form so). The
// op must be registered; its attributes become graph attributes (a double's
// exact value from its "__exact" twin) and its shape rule checks the inputs,
// as for any node the importer emits.
#include <cstdlib>

#include "engine/core/error.h"
#include "engine/frontend/onnx/onnx_context.h"
#include "engine/graph/op_registry.h"

namespace tessera::frontend::onnx_import {
namespace {

// A double from its "%a" text; UserError naming the node when it is not one.
double exact_double(const NodeCtx& ctx, const std::string& key, const std::string& text) {
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    TS_USER_CHECK(!text.empty() && end && *end == '\0')
        << ctx.where() << ": attribute " << key << kExactSuffix << " '" << text
        << "' is not a number";
    return v;
}

std::map<std::string, graph::AttrValue> graph_attrs(const NodeCtx& ctx) {
    const std::string suffix = kExactSuffix;
    auto is_twin = [&](const std::string& key) {
        return key.size() > suffix.size() && key.ends_with(suffix);
    };
    std::map<std::string, const onnx::AttributeProto*> exact;  // base name -> its twin
    for (const onnx::AttributeProto& a : ctx.node.attribute())
        if (is_twin(a.name())) exact[a.name().substr(0, a.name().size() - suffix.size())] = &a;
    std::map<std::string, graph::AttrValue> attrs;
    for (const onnx::AttributeProto& a : ctx.node.attribute()) {
        const std::string& key = a.name();
        if (is_twin(key)) continue;  // read with its attribute
        auto twin = exact.find(key);
        switch (a.type()) {
            case onnx::AttributeProto::INT:
                attrs[key] = int64_t(a.i());
                break;
            case onnx::AttributeProto::FLOAT:
                attrs[key] = twin != exact.end() && twin->second->type() == onnx::AttributeProto::STRING
                                 ? exact_double(ctx, key, twin->second->s())
                                 : double(a.f());
                break;
            case onnx::AttributeProto::STRING:
                attrs[key] = a.s();
                break;
            case onnx::AttributeProto::INTS:
                attrs[key] = std::vector<int64_t>(a.ints().begin(), a.ints().end());
                break;
            case onnx::AttributeProto::FLOATS: {
                std::vector<double> values(a.floats().begin(), a.floats().end());
                if (twin != exact.end() && twin->second->type() == onnx::AttributeProto::STRINGS) {
                    TS_USER_CHECK(twin->second->strings_size() == a.floats_size())
                        << ctx.where() << ": attribute " << key << kExactSuffix << " has "
                        << twin->second->strings_size() << " values, " << key << " has "
                        << a.floats_size();
                    for (int i = 0; i < a.floats_size(); ++i)
                        values[size_t(i)] = exact_double(ctx, key, twin->second->strings(i));
                }
                attrs[key] = values;
                break;
            }
            default:
                TS_USER_FAIL() << ctx.where() << ": attribute " << key
                               << " has a type graph ops do not take";
        }
    }
    return attrs;
}

void convert(NodeCtx& ctx) {
    const std::string& op = ctx.node.op_type();
    TS_USER_CHECK(graph::find_op(op) != nullptr)
        << ctx.where() << ": '" << op << "' is not a graph op of this Tessera (domain "
        << kTesseraDomain << ")";
    std::vector<int> inputs;
    for (int i = 0; i < ctx.node.input_size(); ++i) {
        TS_USER_CHECK(ctx.has_input(i)) << ctx.where() << ": input " << i << " is empty";
        inputs.push_back(ctx.input(i));
    }
    std::map<std::string, graph::AttrValue> attrs = graph_attrs(ctx);
    // The file says how many outputs the node has; the op's rule decides
    // (a strided_slice node with two outputs let an InternalError escape,
    // found by fuzz_import_fold).
    graph::Node probe;
    probe.op = op;
    probe.name = ctx.name;
    probe.inputs = inputs;
    probe.attrs = attrs;
    size_t produced = 0;
    try {
        produced = graph::infer_types(ctx.imp.g, probe).size();
    } catch (const UserError& e) {
        throw UserError(ctx.imp.origin + ": " + e.what());
    }
    TS_USER_CHECK(produced == size_t(ctx.node.output_size()))
        << ctx.where() << ": op " << op << " gives " << produced << " output(s), the node names "
        << ctx.node.output_size();
    std::vector<int> outputs;
    for (int i = 0; i < ctx.node.output_size(); ++i) outputs.push_back(i);
    ctx.emit_outputs(outputs, op, inputs, std::move(attrs));
}

}  // namespace

void add_tessera_domain_converters(ConverterTable& t) {
    for (const graph::OpDef* op : graph::all_ops())
        t[std::string(kTesseraDomain) + "." + op->name] = convert;
}

}  // namespace tessera::frontend::onnx_import
