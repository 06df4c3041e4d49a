// ONNX → graph IR. Uses ONNX's own protobuf classes, checker and shape
// inference (libonnx-dev); one file per op family maps nodes onto graph ops.
#pragma once

#include <string>

#include "engine/graph/graph.h"
#include "engine/runtime/ndarray.h"

namespace tessera::frontend {

/// Reads and imports an .onnx file. Throws UserError naming the file (and the
/// node and op type) for a missing, unreadable, malformed or unsupported model.
graph::Graph import_onnx_file(const std::string& path);

/// Imports from serialized ModelProto bytes; `origin` names the source in errors.
graph::Graph import_onnx_bytes(const std::string& bytes, const std::string& origin);

/// Imports `path` with some graph inputs frozen to constants (like TVM's
/// freeze_params), for ONNX test cases whose shape operands are graph inputs
/// (Reshape's `shape`). Each serialized TensorProto file becomes the
/// initializer of the graph input its tensor names, or, when the name matches
/// none, of the positions[i]-th graph input that is not an initializer.
/// (Added by helper "driver" for conformance runs.)
graph::Graph import_onnx_file_frozen(const std::string& path, const std::vector<std::string>& tensor_files,
                                     const std::vector<int>& positions);

/// Reads a serialized TensorProto (ONNX test data `input_0.pb`).
runtime::NDArray read_tensor_pb(const std::string& path);

/// Writes a serialized TensorProto.
void write_tensor_pb(const runtime::NDArray& a, const std::string& name, const std::string& path);

/// ONNX op types the importer supports.
std::vector<std::string> supported_onnx_ops();

}  // namespace tessera::frontend
