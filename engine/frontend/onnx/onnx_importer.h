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
    /// A quantized (QDQ) model's float reading: activation QuantizeLinear ->
    /// DequantizeLinear pairs read as the identity (onnx_qdq_fold.h), the
    /// reference of the per-layer quantization error.
    bool activations_in_float = false;
};

/// Parses "NAME:1x3x224x224[,NAME2:...]" (a --input-shape value) into `out`;
/// UserError on a malformed spec.
void parse_input_shape(const std::string& spec,
                       std::map<std::string, std::vector<int64_t>>& out);

/// Reads and imports an .onnx file. Throws UserError naming the file (and the
/// node and op type) for a missing, unreadable, malformed or unsupported model.
graph::Graph import_onnx_file(const std::string& path, const ImportOptions& options = {});

/// Checks that every tensor `path` keeps in an external file can be read
/// from the model's folder (without reading it); UserError naming the
/// tensor and file otherwise. The studio asks for input shapes only when
/// this passes.
void check_external_data(const std::string& path);

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
/// The same from the file's bytes; `what` names it in errors.
runtime::NDArray read_tensor_pb_bytes(const std::string& bytes, const std::string& what);

/// Writes a serialized TensorProto.
void write_tensor_pb(const runtime::NDArray& a, const std::string& name, const std::string& path);

/// Serializes `g` as an ONNX model (opset 13) that passes ONNX's checker and
/// imports back to the same graph. Throws UserError naming the first node whose
/// op has no ONNX mapping yet. (Added by helper "studio": saving edited models.)
std::string export_onnx_bytes(const graph::Graph& g);

/// Writes export_onnx_bytes(g) to `path` (UserError if it cannot be written).
void export_onnx_file(const graph::Graph& g, const std::string& path);

/// What an ONNX graph input, output or test-data file holds.
enum class ValueKind { Tensor, Strings, Sequence, Optional };

/// An ONNX value beyond a plain tensor (test data for sequences, optionals
/// and string tensors). (Added by helper "seq".)
struct OnnxValue {
    ValueKind kind = ValueKind::Tensor;
    /// Optional: what it holds (Tensor, Strings or Sequence); `present` says whether it does.
    ValueKind element = ValueKind::Tensor;
    bool present = true;
    std::vector<runtime::NDArray> tensors;  // Tensor: one; Sequence (or optional one): elements
    std::vector<int64_t> string_shape;      // Strings
    std::vector<std::string> strings;
};

/// How one ONNX graph output maps onto the imported graph: tensors are
/// Graph::outputs entries (`outputs` holds their positions, one per sequence
/// element); strings and optional presence are known at import.
struct OutputLayout {
    std::string name;
    ValueKind kind = ValueKind::Tensor;
    ValueKind element = ValueKind::Tensor;  // Optional: what it holds
    bool present = true;
    std::vector<int> outputs;
    std::vector<int64_t> string_shape;
    std::vector<std::string> strings;
};

/// A graph plus the layout of the model's ONNX outputs.
struct ImportedModel {
    graph::Graph graph;
    std::vector<OutputLayout> outputs;
};

/// Declared kinds of a model's runtime graph inputs (not initializers) and outputs.
struct IoKinds {
    std::vector<ValueKind> inputs, outputs;
    /// The runtime inputs' names, and whether each has a fully fixed shape
    /// (no symbolic or unknown dimension).
    std::vector<std::string> input_names;
    std::vector<bool> input_fixed;
    /// Each runtime input's dims as the model declares them: a number, the
    /// dim_param's name (`batch`), or "?" for an unknown dim; empty when the
    /// model declares no shape.
    std::vector<std::vector<std::string>> input_dims;
    /// True when any input or output is not a plain numeric tensor.
    bool any_values() const;
};
IoKinds onnx_io_kinds(const std::string& path);

/// Reads a test-data file holding a TensorProto (kind Tensor or Strings),
/// SequenceProto or OptionalProto.
OnnxValue read_value_pb(const std::string& path, ValueKind kind);

/// Imports `path` with the runtime inputs whose `freeze` flag is set replaced
/// by the values in `input_files` (any kind: a sequence becomes constants
/// joined by SequenceConstruct, an optional an Optional node), giving the
/// layout of every ONNX output. Inputs not frozen stay graph inputs.
ImportedModel import_onnx_file_values(const std::string& path,
                                      const std::vector<std::string>& input_files,
                                      const std::vector<bool>& freeze,
                                      const ImportOptions& options = {});

/// Imports a model written in ONNX's textual syntax (onnx/defs/parser.h:
/// `<ir_version: 8, opset_import: ["" : 16]> g (float[2] x) => (float[2] y) { y = Relu(x) }`),
/// giving the output layout too. UserError naming `origin` on a syntax error.
ImportedModel import_onnx_text(const std::string& text, const std::string& origin,
                               const ImportOptions& options = {});

/// ONNX op types the importer supports.
std::vector<std::string> supported_onnx_ops();

}  // namespace tessera::frontend
