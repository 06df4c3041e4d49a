// Sequences, optionals and string tensors at the model boundary: graph output
// layouts, reading SequenceProto/OptionalProto test data, and freezing such
// inputs into the model (as constants joined by SequenceConstruct/Optional).
#include <fstream>
#include <set>
#include <sstream>

#include "engine/core/error.h"
#include "engine/frontend/onnx/onnx_context.h"
#include "onnx/defs/parser.h"
#include "onnx/onnx-data.pb.h"

namespace tessera::frontend {

using namespace onnx_import;

namespace {

std::string read_bytes(const std::string& path, const char* what) {
    std::ifstream in(path, std::ios::binary);
    TS_USER_CHECK(in.good()) << "cannot open " << what << " '" << path << "'";
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

ValueKind kind_of(const onnx::TypeProto& t) {
    if (t.has_sequence_type()) return ValueKind::Sequence;
    if (t.has_optional_type()) return ValueKind::Optional;
    if (t.has_tensor_type() && t.tensor_type().elem_type() == onnx::TensorProto_DataType_STRING)
        return ValueKind::Strings;
    return ValueKind::Tensor;
}

runtime::NDArray to_ndarray(const onnx::TensorProto& t, const std::string& what) {
    ConstTensor c = decode_tensor(t, what);
    return runtime::NDArray::from_bytes(c.type, c.data->bytes.data(), c.data->bytes.size());
}

// Fills v's tensors (or strings) from a TensorProto.
void read_tensor_into(const onnx::TensorProto& t, const std::string& what, OnnxValue& v) {
    if (t.data_type() == onnx::TensorProto_DataType_STRING) {
        StringTensor s = decode_strings(t);
        v.string_shape = s.shape;
        v.strings = s.data;
        return;
    }
    v.tensors.push_back(to_ndarray(t, what));
}

}  // namespace

bool IoKinds::any_values() const {
    for (ValueKind k : inputs)
        if (k != ValueKind::Tensor) return true;
    for (ValueKind k : outputs)
        if (k != ValueKind::Tensor) return true;
    return false;
}

IoKinds onnx_io_kinds(const std::string& path) {
    onnx::ModelProto model;
    TS_USER_CHECK(model.ParseFromString(read_bytes(path, "model")))
        << "'" << path << "' is not a valid ONNX model (protobuf parse failed)";
    std::set<std::string> inits;
    for (const auto& i : model.graph().initializer()) inits.insert(i.name());
    IoKinds k;
    for (const auto& vi : model.graph().input()) {
        if (inits.count(vi.name())) continue;
        k.inputs.push_back(kind_of(vi.type()));
        k.input_names.push_back(vi.name());
        bool fixed = vi.type().has_tensor_type() && vi.type().tensor_type().has_shape();
        std::vector<std::string> dims;
        if (fixed) {
            for (const auto& d : vi.type().tensor_type().shape().dim()) {
                fixed = fixed && d.has_dim_value() && d.dim_value() >= 0;
                dims.push_back(d.has_dim_value() && d.dim_value() >= 0 ? std::to_string(d.dim_value())
                               : d.has_dim_param() ? d.dim_param()
                                                   : std::string("?"));
            }
        }
        k.input_fixed.push_back(fixed);
        k.input_dims.push_back(std::move(dims));
    }
    for (const auto& vi : model.graph().output()) k.outputs.push_back(kind_of(vi.type()));
    return k;
}

OnnxValue read_value_pb(const std::string& path, ValueKind kind) {
    const std::string bytes = read_bytes(path, "test-data file");
    const std::string what = "'" + path + "'";
    OnnxValue v;
    v.kind = kind;
    if (kind == ValueKind::Tensor || kind == ValueKind::Strings) {
        onnx::TensorProto t;
        TS_USER_CHECK(t.ParseFromString(bytes)) << what << " is not a valid ONNX TensorProto";
        read_tensor_into(t, what, v);
        v.kind = t.data_type() == onnx::TensorProto_DataType_STRING ? ValueKind::Strings
                                                                    : ValueKind::Tensor;
        return v;
    }
    if (kind == ValueKind::Sequence) {
        onnx::SequenceProto s;
        TS_USER_CHECK(s.ParseFromString(bytes)) << what << " is not a valid ONNX SequenceProto";
        TS_USER_CHECK(s.elem_type() == onnx::SequenceProto_DataType_TENSOR ||
                      s.tensor_values_size() > 0 || s.sequence_values_size() == 0)
            << what << ": only sequences of tensors are supported";
        for (const auto& t : s.tensor_values()) v.tensors.push_back(to_ndarray(t, what));
        return v;
    }
    onnx::OptionalProto o;
    TS_USER_CHECK(o.ParseFromString(bytes)) << what << " is not a valid ONNX OptionalProto";
    v.present = o.has_tensor_value() || o.has_sequence_value();
    if (o.has_sequence_value() || o.elem_type() == onnx::OptionalProto_DataType_SEQUENCE) {
        v.element = ValueKind::Sequence;
        for (const auto& t : o.sequence_value().tensor_values()) v.tensors.push_back(to_ndarray(t, what));
    } else if (o.has_tensor_value()) {
        read_tensor_into(o.tensor_value(), what, v);
        v.element = o.tensor_value().data_type() == onnx::TensorProto_DataType_STRING
                        ? ValueKind::Strings
                        : ValueKind::Tensor;
    }
    return v;
}

namespace onnx_import {

void add_graph_output(Importer& imp, const std::string& name, std::vector<OutputLayout>* layout) {
    const std::string where = imp.origin + ": graph output '" + name + "'";
    OutputLayout l;
    l.name = name;
    auto push_tensor = [&](const std::string& nm) {
        imp.g.outputs.push_back(imp.value(nm, where));
        l.outputs.push_back(int(imp.g.outputs.size()) - 1);
    };
    auto push_strings = [&](const std::string& nm) {
        TS_USER_CHECK(layout != nullptr)
            << where << " is a string tensor; string outputs are only available to the "
                        "conformance runner (the compiled graph has no string dtype)";
        l.string_shape = imp.strings[nm].shape;
        l.strings = imp.strings[nm].data;
    };
    if (auto s = imp.sequences.find(name); s != imp.sequences.end()) {
        l.kind = ValueKind::Sequence;
        for (const auto& e : s->second) push_tensor(e);
    } else if (auto o = imp.optionals.find(name); o != imp.optionals.end()) {
        l.kind = ValueKind::Optional;
        const std::string elem = o->second;
        l.present = !elem.empty();
        auto t = imp.onnx_types.find(name);
        if (t != imp.onnx_types.end() && t->second->has_optional_type() &&
            t->second->optional_type().elem_type().has_sequence_type())
            l.element = ValueKind::Sequence;
        if (imp.sequences.count(elem)) {
            l.element = ValueKind::Sequence;
            for (const auto& e : imp.sequences[elem]) push_tensor(e);
        } else if (imp.strings.count(elem)) {
            l.element = ValueKind::Strings;
            push_strings(elem);
        } else if (!elem.empty()) {
            push_tensor(elem);
        }
    } else if (imp.strings.count(name)) {
        l.kind = ValueKind::Strings;
        push_strings(name);
    } else {
        push_tensor(name);
    }
    if (layout) layout->push_back(std::move(l));
}

}  // namespace onnx_import

ImportedModel import_onnx_file_values(const std::string& path,
                                      const std::vector<std::string>& input_files,
                                      const std::vector<bool>& freeze,
                                      const ImportOptions& options) {
    TS_CHECK(input_files.size() == freeze.size()) << "one freeze flag per input file";
    onnx::ModelProto model;
    TS_USER_CHECK(model.ParseFromString(read_bytes(path, "model")))
        << "'" << path << "' is not a valid ONNX model (protobuf parse failed)";
    onnx::GraphProto* gp = model.mutable_graph();
    std::set<std::string> inits;
    for (const auto& i : gp->initializer()) inits.insert(i.name());
    std::vector<int> runtime_inputs;  // indices into gp->input()
    for (int i = 0; i < gp->input_size(); ++i)
        if (!inits.count(gp->input(i).name())) runtime_inputs.push_back(i);
    TS_USER_CHECK(input_files.size() <= runtime_inputs.size())
        << "'" << path << "' has " << runtime_inputs.size() << " inputs, " << input_files.size()
        << " input files were given";

    std::vector<onnx::NodeProto> front;  // nodes defining frozen sequences and optionals
    std::set<std::string> removed;       // frozen non-tensor inputs
    auto add_init = [&](onnx::TensorProto t, const std::string& nm) {
        t.set_name(nm);
        *gp->add_initializer() = std::move(t);
    };
    // SequenceConstruct (or SequenceEmpty) of a SequenceProto's tensors as `nm`.
    auto add_sequence = [&](const onnx::SequenceProto& s, const std::string& nm,
                            const onnx::TypeProto& declared) {
        onnx::NodeProto n;
        n.add_output(nm);
        if (s.tensor_values_size() == 0) {
            n.set_op_type("SequenceEmpty");
            int dtype = onnx::TensorProto_DataType_FLOAT;
            if (declared.has_sequence_type() &&
                declared.sequence_type().elem_type().has_tensor_type() &&
                declared.sequence_type().elem_type().tensor_type().elem_type() != 0)
                dtype = declared.sequence_type().elem_type().tensor_type().elem_type();
            auto* a = n.add_attribute();
            a->set_name("dtype");
            a->set_type(onnx::AttributeProto_AttributeType_INT);
            a->set_i(dtype);
        } else {
            n.set_op_type("SequenceConstruct");
            for (int k = 0; k < s.tensor_values_size(); ++k) {
                std::string e = nm + "__" + std::to_string(k);
                add_init(s.tensor_values(k), e);
                n.add_input(e);
            }
        }
        front.push_back(std::move(n));
    };
    for (size_t i = 0; i < input_files.size(); ++i) {
        if (!freeze[i]) continue;
        const onnx::ValueInfoProto& vi = gp->input(runtime_inputs[i]);
        const std::string nm = vi.name();
        const std::string bytes = read_bytes(input_files[i], "test-data file");
        const std::string what = "'" + input_files[i] + "'";
        ValueKind kind = kind_of(vi.type());
        if (kind == ValueKind::Tensor || kind == ValueKind::Strings) {
            onnx::TensorProto t;
            TS_USER_CHECK(t.ParseFromString(bytes)) << what << " is not a valid ONNX TensorProto";
            add_init(t, nm);
            continue;
        }
        removed.insert(nm);
        if (kind == ValueKind::Sequence) {
            onnx::SequenceProto s;
            TS_USER_CHECK(s.ParseFromString(bytes)) << what << " is not a valid ONNX SequenceProto";
            add_sequence(s, nm, vi.type());
            continue;
        }
        onnx::OptionalProto o;
        TS_USER_CHECK(o.ParseFromString(bytes)) << what << " is not a valid ONNX OptionalProto";
        std::string elem;
        if (o.has_tensor_value()) {
            elem = nm + "__value";
            add_init(o.tensor_value(), elem);
        } else if (o.has_sequence_value()) {
            elem = nm + "__value";
            add_sequence(o.sequence_value(), elem, vi.type().optional_type().elem_type());
        }
        onnx::NodeProto n;
        n.set_op_type("Optional");
        n.add_output(nm);
        if (!elem.empty()) {
            n.add_input(elem);
        } else {
            auto* a = n.add_attribute();
            a->set_name("type");
            a->set_type(onnx::AttributeProto_AttributeType_TYPE_PROTO);
            *a->mutable_tp() = vi.type().optional_type().elem_type();
        }
        front.push_back(std::move(n));
    }
    if (!removed.empty()) {
        google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> kept;
        for (const auto& vi : gp->input())
            if (!removed.count(vi.name())) *kept.Add() = vi;
        gp->mutable_input()->Swap(&kept);
    }
    if (!front.empty()) {
        google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
        for (auto& n : front) *nodes.Add() = std::move(n);
        for (const auto& n : gp->node()) *nodes.Add() = n;
        gp->mutable_node()->Swap(&nodes);
    }
    std::string bytes;
    TS_CHECK(model.SerializeToString(&bytes)) << "cannot serialize the frozen model";
    ImportedModel r;
    r.graph = import_bytes_with_layout(bytes, path, options, &r.outputs);
    return r;
}

ImportedModel import_onnx_text(const std::string& text, const std::string& origin,
                               const ImportOptions& options) {
    onnx::ModelProto model;
    onnx::Common::Status st = onnx::OnnxParser::Parse(model, text.c_str());
    TS_USER_CHECK(st.IsOK()) << origin << ": not a valid ONNX text model: " << st.ErrorMessage();
    std::string bytes;
    TS_CHECK(model.SerializeToString(&bytes)) << "cannot serialize the parsed model";
    ImportedModel r;
    r.graph = import_bytes_with_layout(bytes, origin, options, &r.outputs);
    return r;
}

}  // namespace tessera::frontend
