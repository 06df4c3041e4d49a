// ONNX → graph IR. Uses ONNX's own protobuf classes, checker and shape
// inference (libonnx-dev); one file per op family maps nodes onto graph ops.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "engine/graph/graph.h"
#include "engine/runtime/ndarray.h"

namespace tessera::frontend {

/// Evaluates one graph node whose inputs are all constants (`inputs` hold
/// their data), giving the data of each output type. Supplied by the driver
/// (which can compile), so the importer can fold shape computations.
using NodeFolder = std::function<std::vector<std::shared_ptr<const graph::ConstantData>>(
    const graph::Node& node, const std::vector<graph::Value>& inputs,
    const std::vector<graph::TensorType>& output_types)>;

struct ImportOptions {
    /// Static shapes for graph inputs by name (fixes symbolic dims, like tvmc --input-shapes).
    std::map<std::string, std::vector<int64_t>> input_shapes;
    /// Folds nodes with constant inputs at import (Shape -> Gather -> Concat -> Reshape).
    NodeFolder fold;
};

/// Parses "NAME:1x3x224x224[,NAME2:...]" (a --input-shape value) into `out`;
/// UserError on a malformed spec.
void parse_input_shape(const std::string& spec,
                       std::map<std::string, std::vector<int64_t>>& out);

/// Reads and imports an .onnx file. Throws UserError naming the file (and the
/// node and op type) for a missing, unreadable, malformed or unsupported model.
graph::Graph import_onnx_file(const std::string& path, const ImportOptions& options = {});

/// Imports from serialized ModelProto bytes; `origin` names the source in errors.
graph::Graph import_onnx_bytes(const std::string& bytes, const std::string& origin,
                               const ImportOptions& options = {});

/// Imports `path` with some graph inputs frozen to constants (like TVM's
/// freeze_params), for ONNX test cases whose shape operands are graph inputs
/// (Reshape's `shape`). Each serialized TensorProto file becomes the
/// initializer of the graph input its tensor names, or, when the name matches
/// none, of the positions[i]-th graph input that is not an initializer.
/// (Added by helper "driver" for conformance runs.)
graph::Graph import_onnx_file_frozen(const std::string& path, const std::vector<std::string>& tensor_files,
                                     const std::vector<int>& positions,
                                     const ImportOptions& options = {});

/// Reads a serialized TensorProto (ONNX test data `input_0.pb`).
runtime::NDArray read_tensor_pb(const std::string& path);

/// Writes a serialized TensorProto.
void write_tensor_pb(const runtime::NDArray& a, const std::string& name, const std::string& path);

/// Serializes `g` as an ONNX model (opset 13) that passes ONNX's checker and
/// imports back to the same graph. Throws UserError naming the first node whose
/// op has no ONNX mapping yet. (Added by helper "studio": saving edited models.)
std::string export_onnx_bytes(const graph::Graph& g);

/// Writes export_onnx_bytes(g) to `path` (UserError if it cannot be written).
void export_onnx_file(const graph::Graph& g, const std::string& path);

/// ONNX op types the importer supports.
std::vector<std::string> supported_onnx_ops();

}  // namespace tessera::frontend
