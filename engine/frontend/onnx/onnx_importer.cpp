// ONNX model -> graph IR: parse, check with ONNX's checker, run ONNX shape
// inference, then map inputs, initializers and nodes (via the converter table).
#include "engine/frontend/onnx/onnx_importer.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "engine/core/error.h"
#include "engine/frontend/onnx/onnx_context.h"
#include "onnx/checker.h"
#include "onnx/shape_inference/implementation.h"

namespace tessera::frontend {

using namespace onnx_import;

namespace {

// Static type of a graph input; UserError naming the input and the dimension otherwise.
graph::TensorType input_type(const Importer& imp, const onnx::ValueInfoProto& vi) {
    const std::string what = imp.origin + ": input '" + vi.name() + "'";
    TS_USER_CHECK(vi.has_type() && vi.type().has_tensor_type()) << what << " is not a tensor";
    const auto& tt = vi.type().tensor_type();
    graph::TensorType t;
    t.dtype = dtype_from_onnx(tt.elem_type(), what);
    TS_USER_CHECK(tt.has_shape()) << what << " has no shape; Tessera needs static input shapes";
    for (int i = 0; i < tt.shape().dim_size(); ++i) {
        const auto& d = tt.shape().dim(i);
        if (d.has_dim_value() && d.dim_value() >= 0) {
            t.shape.push_back(d.dim_value());
            continue;
        }
        if (d.has_dim_param()) {
            TS_USER_FAIL() << what << " dimension " << i << " is symbolic ('" << d.dim_param()
                           << "'); Tessera needs static input shapes";
        }
        TS_USER_FAIL() << what << " dimension " << i
                       << " is unknown; Tessera needs static input shapes";
    }
    return t;
}

int64_t default_opset(const onnx::ModelProto& m) {
    for (const auto& op : m.opset_import())
        if (op.domain().empty() || op.domain() == "ai.onnx") return op.version();
    return 0;
}

graph::Graph build_graph(const onnx::ModelProto& model, const std::string& origin) {
    Importer imp;
    imp.origin = origin;
    imp.opset = default_opset(model);
    const onnx::GraphProto& gp = model.graph();
    imp.g.name = gp.name().empty() ? "main" : gp.name();

    for (const auto& vi : gp.input()) imp.onnx_types[vi.name()] = &vi.type();
    for (const auto& vi : gp.value_info()) imp.onnx_types[vi.name()] = &vi.type();
    for (const auto& vi : gp.output()) imp.onnx_types[vi.name()] = &vi.type();

    for (const auto& init : gp.initializer())
        imp.constants[init.name()] =
            decode_tensor(init, origin + ": initializer '" + init.name() + "'");
    for (const auto& sp : gp.sparse_initializer()) {
        (void)sp;
        TS_USER_FAIL() << origin << ": sparse initializers are not supported";
    }

    for (const auto& vi : gp.input()) {
        if (imp.constants.count(vi.name())) continue;  // IR < 4 lists initializers as inputs too
        graph::Value v;
        v.name = vi.name();
        v.type = input_type(imp, vi);
        int idx = imp.g.add_value(std::move(v));
        imp.values[vi.name()] = idx;
        imp.g.inputs.push_back(idx);
    }

    const ConverterTable& table = converters();
    for (int i = 0; i < gp.node_size(); ++i) {
        const onnx::NodeProto& node = gp.node(i);
        std::string name =
            node.name().empty() ? node.op_type() + "_" + std::to_string(i) : node.name();
        NodeCtx ctx(imp, node, name);
        bool default_domain = node.domain().empty() || node.domain() == "ai.onnx";
        auto it = default_domain ? table.find(node.op_type()) : table.end();
        if (it == table.end()) {
            std::string op = default_domain ? node.op_type() : node.domain() + "." + node.op_type();
            TS_USER_FAIL() << ctx.where() << ": unsupported op " << op;
        }
        it->second(ctx);
    }

    for (const auto& vi : gp.output())
        imp.g.outputs.push_back(imp.value(vi.name(), origin + ": graph output"));

    try {
        graph::verify(imp.g);
    } catch (const UserError& e) {
        throw UserError(origin + ": " + e.what());
    }
    return std::move(imp.g);
}

}  // namespace

graph::Graph import_onnx_bytes(const std::string& bytes, const std::string& origin) {
    onnx::ModelProto model;
    TS_USER_CHECK(model.ParseFromString(bytes))
        << "'" << origin << "' is not a valid ONNX model (protobuf parse failed)";
    // Arbitrary bytes sometimes parse as a message of unknown fields.
    TS_USER_CHECK(model.has_graph() && model.ir_version() > 0)
        << "'" << origin
        << "' is not a valid ONNX model (protobuf parse failed: no graph or ir_version)";
    // Exporters now write IR versions newer than ONNX 1.12 knows (8); the IR
    // features Tessera reads are unchanged, so check such models as IR 8.
    if (model.ir_version() > onnx::Version::IR_VERSION)
        model.set_ir_version(onnx::Version::IR_VERSION);
    try {
        onnx::checker::check_model(model);
    } catch (const std::exception& e) {
        TS_USER_FAIL() << origin << ": the ONNX checker rejected the model: " << e.what();
    }
    try {
        onnx::shape_inference::InferShapes(model);
    } catch (const std::exception& e) {
        TS_USER_FAIL() << origin << ": ONNX shape inference failed: " << e.what();
    }
    return build_graph(model, origin);
}

graph::Graph import_onnx_file(const std::string& path) {
    std::error_code ec;
    TS_USER_CHECK(!std::filesystem::is_directory(path, ec))
        << "cannot open model '" << path << "': is a directory";
    std::ifstream in(path, std::ios::binary);
    TS_USER_CHECK(in.good()) << "cannot open model '" << path << "': " << std::strerror(errno);
    std::ostringstream ss;
    ss << in.rdbuf();
    TS_USER_CHECK(!in.bad()) << "cannot read model '" << path << "': " << std::strerror(errno);
    return import_onnx_bytes(ss.str(), path);
}

std::vector<std::string> supported_onnx_ops() {
    std::vector<std::string> ops;
    for (const auto& [op, conv] : converters()) ops.push_back(op);
    return ops;
}

}  // namespace tessera::frontend
