// Freezing graph inputs to constants from ONNX test-data TensorProtos, so test
// cases that feed shapes through graph inputs import with static shapes.
// (Written by helper "driver"; the importer itself is untouched.)
#include <fstream>
#include <set>
#include <sstream>

#include "engine/core/error.h"
#include "engine/frontend/onnx/onnx_importer.h"
#include "onnx/onnx_pb.h"

namespace tessera::frontend {

namespace {

std::string read_file(const std::string& path, const char* what) {
    std::ifstream in(path, std::ios::binary);
    TS_USER_CHECK(in.good()) << "cannot open " << what << " '" << path << "'";
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

}  // namespace

graph::Graph import_onnx_file_frozen(const std::string& path,
                                     const std::vector<std::string>& tensor_files,
                                     const std::vector<int>& positions,
                                     const ImportOptions& options) {
    TS_CHECK(tensor_files.size() == positions.size()) << "one position per tensor file";
    onnx::ModelProto model;
    TS_USER_CHECK(model.ParseFromString(read_file(path, "model")))
        << "cannot parse model '" << path << "': not an ONNX ModelProto";
    onnx::GraphProto* gp = model.mutable_graph();
    std::set<std::string> initialized;
    for (const auto& init : gp->initializer()) initialized.insert(init.name());
    std::vector<std::string> runtime_inputs;  // graph inputs that are not initializers
    std::set<std::string> input_names;
    for (const auto& vi : gp->input()) {
        input_names.insert(vi.name());
        if (!initialized.count(vi.name())) runtime_inputs.push_back(vi.name());
    }
    for (size_t i = 0; i < tensor_files.size(); ++i) {
        onnx::TensorProto t;
        TS_USER_CHECK(t.ParseFromString(read_file(tensor_files[i], "tensor file")))
            << "cannot parse tensor file '" << tensor_files[i] << "': not an ONNX TensorProto";
        if (!input_names.count(t.name())) {
            TS_USER_CHECK(positions[i] >= 0 && size_t(positions[i]) < runtime_inputs.size())
                << "tensor file '" << tensor_files[i] << "' matches no graph input of '" << path
                << "'";
            t.set_name(runtime_inputs[size_t(positions[i])]);
        }
        if (initialized.count(t.name())) continue;
        initialized.insert(t.name());
        *gp->add_initializer() = t;
    }
    std::string bytes;
    TS_CHECK(model.SerializeToString(&bytes)) << "cannot serialize the frozen model";
    return import_onnx_bytes(bytes, path, options);
}

}  // namespace tessera::frontend
