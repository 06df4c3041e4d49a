// Graph IR -> ONNX (opset 13), so that a model edited in the studio can be
// saved as .onnx: ops with a standard ONNX form are written in it; every
// other graph op (the importer's decompositions: strided_slice, take, the
// internal steps of LSTM...) is written as a node of the `ai.tessera` domain
// holding the op and its attributes as they are, which Tessera reads back
// (onnx_tessera_domain.cpp) and other ONNX tools do not.
#include <cstdio>
#include <fstream>

#include "engine/core/atomic_file.h"
#include "engine/core/error.h"
#include "engine/core/thread_guard.h"
#include "engine/frontend/onnx/onnx_context.h"
#include "engine/frontend/onnx/onnx_importer.h"
#include "onnx/checker.h"

namespace tessera::frontend {
namespace {

using graph::AttrValue;
using onnx_import::kExactSuffix;
using onnx_import::kTesseraDomain;
using graph::Graph;
using graph::Node;

constexpr int64_t kExportOpset = 13;

// The exact value of a double attribute, as the hex float text strtod reads.
std::string exact_double(double v) {
    char text[64];
    std::snprintf(text, sizeof text, "%a", v);
    return text;
}

struct Exporter {
    const Graph& g;
    onnx::GraphProto* out;
    int fresh = 0;

    std::string name_of(int v) const { return g.values.at(size_t(v)).name; }
    std::string fresh_name(const std::string& base) { return base + "__export" + std::to_string(fresh++); }

    onnx::NodeProto* node(const std::string& op_type, const std::string& name,
                          const std::vector<std::string>& inputs,
                          const std::vector<std::string>& outputs) {
        onnx::NodeProto* n = out->add_node();
        n->set_op_type(op_type);
        n->set_name(name);
        for (const std::string& i : inputs) n->add_input(i);
        for (const std::string& o : outputs) n->add_output(o);
        return n;
    }

    void int_attr(onnx::NodeProto* n, const std::string& key, int64_t v) {
        onnx::AttributeProto* a = n->add_attribute();
        a->set_name(key);
        a->set_type(onnx::AttributeProto::INT);
        a->set_i(v);
    }
    void float_attr(onnx::NodeProto* n, const std::string& key, double v) {
        onnx::AttributeProto* a = n->add_attribute();
        a->set_name(key);
        a->set_type(onnx::AttributeProto::FLOAT);
        a->set_f(float(v));
    }
    void ints_attr(onnx::NodeProto* n, const std::string& key, const std::vector<int64_t>& v) {
        onnx::AttributeProto* a = n->add_attribute();
        a->set_name(key);
        a->set_type(onnx::AttributeProto::INTS);
        for (int64_t x : v) a->add_ints(x);
    }

    // An int64 initializer holding `values` (Reshape's shape operand).
    std::string shape_constant(const std::string& base, const std::vector<int64_t>& values) {
        const std::string name = fresh_name(base + "_shape");
        graph::TensorType t{graph::DType::Int64, {int64_t(values.size())}};
        onnx_import::encode_tensor(t, values.data(), name, out->add_initializer());
        return name;
    }

    void value_info(onnx::ValueInfoProto* info, int v) {
        const graph::Value& value = g.values.at(size_t(v));
        info->set_name(value.name);
        onnx::TypeProto_Tensor* t = info->mutable_type()->mutable_tensor_type();
        t->set_elem_type(onnx_import::dtype_to_onnx(value.type.dtype));
        onnx::TensorShapeProto* shape = t->mutable_shape();
        for (int64_t d : value.type.shape) shape->add_dim()->set_dim_value(d);
    }

    void emit(const Node& n) {
        std::vector<std::string> ins, outs;
        for (int v : n.inputs) ins.push_back(name_of(v));
        for (int v : n.outputs) outs.push_back(name_of(v));
        static const std::map<std::string, std::string> kSimple = {
            {"add", "Add"},           {"subtract", "Sub"}, {"multiply", "Mul"},
            {"divide", "Div"},        {"nn.relu", "Relu"}, {"nn.matmul", "MatMul"},
            {"nn.global_avg_pool2d", "GlobalAveragePool"},
            {"negative", "Neg"},      {"abs", "Abs"},      {"sign", "Sign"},
            {"floor", "Floor"},       {"ceil", "Ceil"},    {"round", "Round"},
            {"exp", "Exp"},           {"log", "Log"},      {"sqrt", "Sqrt"},
            {"reciprocal", "Reciprocal"}, {"sin", "Sin"},  {"cos", "Cos"},
            {"tan", "Tan"},           {"asin", "Asin"},    {"acos", "Acos"},
            {"atan", "Atan"},         {"sinh", "Sinh"},    {"cosh", "Cosh"},
            {"asinh", "Asinh"},       {"acosh", "Acosh"},  {"atanh", "Atanh"},
            {"sigmoid", "Sigmoid"},   {"tanh", "Tanh"},    {"erf", "Erf"},
            {"nn.softplus", "Softplus"}, {"nn.softsign", "Softsign"},
            {"logical_not", "Not"},   {"isnan", "IsNaN"},  {"power", "Pow"},
            {"equal", "Equal"},       {"less", "Less"},    {"greater", "Greater"},
            {"less_equal", "LessOrEqual"}, {"greater_equal", "GreaterOrEqual"},
            {"logical_and", "And"}};
        if (auto it = kSimple.find(n.op); it != kSimple.end()) {
            node(it->second, n.name, ins, outs);
            return;
        }
        // A Conv of float data (8-bit data, a quantized conv's, has no Conv form).
        if (n.op == "nn.conv2d" &&
            g.values.at(size_t(n.inputs.at(0))).type.dtype == graph::DType::Float32) {
            onnx::NodeProto* p = node("Conv", n.name, ins, outs);
            const auto& w = g.values.at(size_t(n.inputs.at(1))).type.shape;
            if (w.size() == 4) ints_attr(p, "kernel_shape", {w[2], w[3]});
            ints_attr(p, "strides", n.attr_ints("strides", {1, 1}));
            ints_attr(p, "pads", n.attr_ints("padding", {0, 0, 0, 0}));
            ints_attr(p, "dilations", n.attr_ints("dilation", {1, 1}));
            int_attr(p, "group", n.attr_int("groups", 1));
            return;
        }
        if (n.op == "nn.max_pool2d") {
            onnx::NodeProto* p = node("MaxPool", n.name, ins, outs);
            ints_attr(p, "kernel_shape", n.attr_ints("kernel", {1, 1}));
            ints_attr(p, "strides", n.attr_ints("strides", {1, 1}));
            ints_attr(p, "pads", n.attr_ints("padding", {0, 0, 0, 0}));
            ints_attr(p, "dilations", n.attr_ints("dilation", {1, 1}));
            int_attr(p, "ceil_mode", n.attr_int("ceil_mode", 0));
            return;
        }
        if (n.op == "nn.gemm") {
            onnx::NodeProto* p = node("Gemm", n.name, ins, outs);
            float_attr(p, "alpha", n.attr_float("alpha", 1.0));
            float_attr(p, "beta", n.attr_float("beta", 1.0));
            int_attr(p, "transA", n.attr_int("transA", 0));
            int_attr(p, "transB", n.attr_int("transB", 0));
            return;
        }
        if (n.op == "reshape") {
            ins.push_back(shape_constant(n.name, n.attr_ints("newshape")));
            node("Reshape", n.name, ins, outs);
            return;
        }
        if (n.op == "nn.softmax") {
            const int64_t axis = n.attr_int("axis", -1);
            if (n.attr_int("coerce", 0) == 0) {
                int_attr(node("Softmax", n.name, ins, outs), "axis", axis);
                return;
            }
            // Legacy (opset < 13) semantics: softmax over the flattened trailing block.
            const std::string flat = fresh_name(n.name + "_flat");
            const std::string soft = fresh_name(n.name + "_soft");
            int_attr(node("Flatten", n.name + "_flatten", ins, {flat}), "axis", axis);
            int_attr(node("Softmax", n.name, {flat}, {soft}), "axis", 1);
            const auto& shape = g.values.at(size_t(n.outputs.at(0))).type.shape;
            node("Reshape", n.name + "_unflatten", {soft, shape_constant(n.name, shape)}, outs);
            return;
        }
        tessera_node(n, ins, outs);
    }

    // The graph op as it is, in the ai.tessera domain.
    void tessera_node(const Node& n, const std::vector<std::string>& ins,
                      const std::vector<std::string>& outs) {
        onnx::NodeProto* p = node(n.op, n.name, ins, outs);
        p->set_domain(kTesseraDomain);
        uses_tessera_domain = true;
        for (const auto& [key, value] : n.attrs) {
            onnx::AttributeProto* a = p->add_attribute();
            a->set_name(key);
            if (const auto* i = std::get_if<int64_t>(&value)) {
                a->set_type(onnx::AttributeProto::INT);
                a->set_i(*i);
            } else if (const auto* f = std::get_if<double>(&value)) {
                a->set_type(onnx::AttributeProto::FLOAT);
                a->set_f(float(*f));
                // A double does not survive float: keep its exact bits too.
                onnx::AttributeProto* exact = p->add_attribute();
                exact->set_name(key + kExactSuffix);
                exact->set_type(onnx::AttributeProto::STRING);
                exact->set_s(exact_double(*f));
            } else if (const auto* str = std::get_if<std::string>(&value)) {
                a->set_type(onnx::AttributeProto::STRING);
                a->set_s(*str);
            } else if (const auto* ints = std::get_if<std::vector<int64_t>>(&value)) {
                a->set_type(onnx::AttributeProto::INTS);
                for (int64_t x : *ints) a->add_ints(x);
            } else if (const auto* floats = std::get_if<std::vector<double>>(&value)) {
                a->set_type(onnx::AttributeProto::FLOATS);
                for (double x : *floats) a->add_floats(float(x));
                onnx::AttributeProto* exact = p->add_attribute();
                exact->set_name(key + kExactSuffix);
                exact->set_type(onnx::AttributeProto::STRINGS);
                for (double x : *floats) exact->add_strings(exact_double(x));
            }
        }
    }
    bool uses_tessera_domain = false;
};

}  // namespace

std::string export_onnx_bytes(const graph::Graph& g) {
    graph::verify(g);
    onnx::ModelProto model;
    model.set_ir_version(7);  // ONNX 1.8+, enough for opset 13
    model.set_producer_name("tessera");
    model.set_producer_version("0.1.0");
    onnx::OperatorSetIdProto* opset = model.add_opset_import();
    opset->set_domain("");
    opset->set_version(kExportOpset);
    onnx::GraphProto* gp = model.mutable_graph();
    gp->set_name(g.name.empty() ? "tessera" : g.name);

    Exporter ex{g, gp};
    for (int v : g.inputs) ex.value_info(gp->add_input(), v);
    for (const graph::Value& v : g.values)
        if (v.is_constant())
            onnx_import::encode_tensor(v.type, v.constant->bytes.data(), v.name,
                                       gp->add_initializer());
    for (const Node& n : g.nodes) ex.emit(n);
    for (int v : g.outputs) ex.value_info(gp->add_output(), v);
    if (ex.uses_tessera_domain) {
        onnx::OperatorSetIdProto* tessera = model.add_opset_import();
        tessera->set_domain(kTesseraDomain);
        tessera->set_version(1);
    }

    try {
        onnx::checker::check_model(model);
    } catch (const std::exception& e) {
        TS_FAIL() << "exported model fails the ONNX checker: " << e.what();
    }
    std::string bytes;
    TS_CHECK(model.SerializeToString(&bytes)) << "cannot serialize the exported model";
    return bytes;
}

void export_onnx_file(const graph::Graph& g, const std::string& path) {
    assert_engine_work_allowed("frontend::export_onnx_file");
    const std::string bytes = export_onnx_bytes(g);
    write_file_atomically(path, bytes);  // the old model stays if this fails
}

}  // namespace tessera::frontend
