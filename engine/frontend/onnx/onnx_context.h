// Private to the ONNX frontend: the import state shared by the per-op-family
// converter files (onnx_conv.cpp, onnx_math.cpp, ...). Includes protobuf.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <memory>
#include <string>
#include <vector>

#include "engine/frontend/onnx/onnx_importer.h"
#include "engine/graph/graph.h"
#include "onnx/onnx_pb.h"

namespace tessera::frontend::onnx_import {

/// A decoded constant tensor (initializer, Constant node, test-data TensorProto).
struct ConstTensor {
    graph::TensorType type;
    std::shared_ptr<const graph::ConstantData> data;
};

/// The ModelProto in file `path`; UserError naming the file when it cannot
/// be read or parsed.
onnx::ModelProto read_model_proto(const std::string& path);

/// Maps an ONNX element type to ours; throws UserError naming `what` when unsupported.
graph::DType dtype_from_onnx(int elem_type, const std::string& what);
/// The ONNX element type of one of our dtypes.
int dtype_to_onnx(graph::DType t);
/// Decodes a TensorProto (raw_data or typed fields); `what` names it in errors.
/// Narrow element types are widened to the dtype we compute in (float16 and
/// bfloat16 -> float32, int16/uint16 -> int32, uint32/uint64 -> int64).
ConstTensor decode_tensor(const onnx::TensorProto& t, const std::string& what);
/// Fills `out` with the tensor's dims, type and raw little-endian data.
void encode_tensor(const graph::TensorType& type, const void* data, const std::string& name,
                   onnx::TensorProto* out);

/// A string tensor, kept beside the graph (the graph IR has no string dtype):
/// string ops run at import on constant strings (onnx_strings.cpp).
struct StringTensor {
    std::vector<int64_t> shape;
    std::vector<std::string> data;
};

/// Whole-model import state.
struct Importer {
    std::string origin;  // file path or other source name for errors
    int64_t opset = 0;   // default-domain opset (after version conversion)
    /// The opset the model declares (before a newer one was adapted to 17):
    /// what ops whose results changed without a new signature follow.
    int64_t source_opset = 0;
    ImportOptions options;
    int internal_values = 0;  // counter for generated value names
    /// Every value name the model itself uses (all graphs, subgraphs too):
    /// generated names avoid them.
    std::set<std::string> model_names;
    graph::Graph g;
    std::map<std::string, int> values;                         // ONNX name -> graph value index
    std::map<std::string, ConstTensor> constants;              // ONNX name -> constant data
    std::map<std::string, const onnx::TypeProto*> onnx_types;  // inputs, outputs, value_info
    std::map<std::string, int> initializer_elem_types;         // declared types of initializers
    // Import-time values (onnx_seq.cpp): a sequence is the list of the ONNX
    // names of its elements; an optional names its element ("" when empty).
    std::map<std::string, std::vector<std::string>> sequences;
    std::map<std::string, std::string> optionals;
    std::map<std::string, StringTensor> strings;
    int subgraphs = 0;  // counter for the name prefixes of imported subgraphs
    /// The renamings of the subgraphs being imported, outermost first: a
    /// nested graph's reference to an enclosing graph's value resolves
    /// through them when the nested graph is imported (onnx_subgraph.cpp).
    std::vector<const std::map<std::string, std::string>*> scope_renames;
    // What unrolling control flow has imported so far (bounded: onnx_subgraph.cpp).
    int64_t subgraph_nodes = 0;
    int64_t subgraph_init_bytes = 0;

    /// Graph value for an ONNX name, creating constant values on first use.
    int value(const std::string& name, const std::string& where);
    /// A new value name "<base>__<n>" that neither the model nor the import
    /// so far uses: helpers of two nodes with the same name never collide.
    std::string fresh_name(const std::string& base);
    /// Defines a helper constant under a fresh name; returns the name.
    std::string define_helper_constant(const std::string& base, ConstTensor c);
};

/// One ONNX node being converted.
class NodeCtx {
public:
    /// `graphs`: the node whose graph attributes (If branches, Loop and Scan
    /// bodies) apply, when `node` is a renamed copy made without them.
    NodeCtx(Importer& imp, const onnx::NodeProto& node, std::string name,
            const onnx::NodeProto* graphs = nullptr);

    Importer& imp;
    const onnx::NodeProto& node;
    const onnx::NodeProto& graphs;  // holds the graph attributes (often `node` itself)
    const std::string name;  // ONNX node name or "<OpType>_<index>"

    /// "PATH: node 'NAME' (op TYPE)" — the prefix of every diagnostic.
    std::string where() const;
    int64_t opset() const { return imp.opset; }

    /// True when input i exists and is not the empty (omitted optional) name.
    bool has_input(int i) const;
    /// Graph value of input i (a constant input becomes a constant value).
    int input(int i);
    /// Type of input i; does not turn a constant input into a graph value.
    const graph::TensorType& input_type(int i);
    /// Constant data of input i, or nullptr when it is not a constant.
    const ConstTensor* constant_input(int i) const;
    /// Integer values of constant input i (int64 or int32); UserError if not constant.
    std::vector<int64_t> constant_ints(int i) const;

    bool has_attr(const std::string& key) const;
    int64_t attr_int(const std::string& key, int64_t dflt) const;
    double attr_float(const std::string& key, double dflt) const;
    std::vector<int64_t> attr_ints(const std::string& key, std::vector<int64_t> dflt = {}) const;
    std::string attr_str(const std::string& key, const std::string& dflt = "") const;

    /// UserError unless only the first `n` outputs are used.
    void expect_outputs(int n) const;
    /// Emits graph node `op` whose single output is ONNX output 0. The output
    /// type comes from the op's shape rule and is checked against ONNX's
    /// inferred type when there is one. Returns the output value index.
    int emit(const std::string& op, std::vector<int> inputs,
             std::map<std::string, graph::AttrValue> attrs = {});
    /// Emits graph node `op` whose outputs are the ONNX outputs at
    /// `onnx_outputs` (an index past the node's outputs or an empty name gets
    /// a generated name). Nodes whose inputs are all constants are folded
    /// into constants when ImportOptions::fold is set. Returns value indices
    /// (or -1 for an output folded into a constant; see constant_input).
    std::vector<int> emit_outputs(const std::vector<int>& onnx_outputs, const std::string& op,
                                  std::vector<int> inputs,
                                  std::map<std::string, graph::AttrValue> attrs = {});
    /// Emits an internal node (a step of a decomposed ONNX op) with one
    /// output of a generated name; returns its value index (a constant value
    /// when folded).
    int emit_internal(const std::string& op, std::vector<int> inputs,
                      std::map<std::string, graph::AttrValue> attrs = {});
    /// Type of graph value v.
    const graph::TensorType& type_of(int v) const { return imp.g.values[size_t(v)].type; }
    /// Makes ONNX output 0 a constant instead of emitting a node.
    void define_constant(ConstTensor c);

private:
    const onnx::AttributeProto* attr(const std::string& key) const;
};

using Converter = std::function<void(NodeCtx&)>;
using ConverterTable = std::map<std::string, Converter>;

void add_conv_converters(ConverterTable& t);      // Conv
void add_math_converters(ConverterTable& t);      // Add Sub Mul Div Relu MatMul Gemm
void add_pool_converters(ConverterTable& t);      // MaxPool GlobalAveragePool
void add_tensor_converters(ConverterTable& t);    // Flatten Reshape Softmax Identity Dropout
void add_constant_converters(ConverterTable& t);  // Constant
void add_unary_converters(ConverterTable& t);     // elementwise math, activations, Cast, Where
void add_transform_converters(ConverterTable& t); // Transpose Squeeze Concat Split Slice Gather ...
void add_reduce_converters(ConverterTable& t);    // Reduce*, ArgMax, norms, LogSoftmax, TopK
void add_shape_converters(ConverterTable& t);     // Shape Size ConstantOfShape Range (constants)
void add_rnn_converters(ConverterTable& t);       // RNN GRU LSTM (unrolled; onnx_rnn.cpp)
void add_loss_converters(ConverterTable& t);  // onnx_loss.cpp: NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss, training-mode ops
void add_math_signal_converters(ConverterTable& t);  // onnx_math_signal.cpp, onnx_quantization.cpp: extra elementwise/unary/window/quantization ops
void add_index_converters(ConverterTable& t);  // onnx_index.cpp: indexing, scatter and data-dependent-shape ops
void add_dtype_converters(ConverterTable& t);  // onnx_dtype.cpp: narrow and half-precision dtypes at the graph boundary
void add_seq_converters(ConverterTable& t);  // onnx_seq.cpp: sequence, optional, string and control-flow ops
void add_control_flow_converters(ConverterTable& t);  // onnx_control_flow.cpp: If Loop Scan SequenceMap (called by add_seq_converters)
void add_string_converters(ConverterTable& t);  // onnx_strings.cpp: StringNormalizer TfIdfVectorizer (called by add_seq_converters)
void add_tessera_domain_converters(ConverterTable& t);
void add_attention_converters(ConverterTable& t);  // onnx_attention.cpp: Attention RMSNormalization RotaryEmbedding LinearAttention (opset 23+)
void add_composed_converters(ConverterTable& t);
void add_optimizer_converters(ConverterTable& t);  // onnx_optimizers.cpp: preview training Adagrad Adam Momentum  // onnx_composed_ops.cpp: LpNormalization LpPool GroupNormalization CenterCropPad AffineGrid SwiGLU  // onnx_tessera_domain.cpp: graph ops saved as they are

/// The domain of graph ops saved without a standard ONNX form (onnx_export.cpp).
inline constexpr const char* kTesseraDomain = "ai.tessera";
/// Suffix of the attribute holding a double attribute's exact value ("%a" text).
inline constexpr const char* kExactSuffix = "__exact";

/// True when `name` is defined in any import table (value, constant, sequence,
/// optional or string tensor).
bool is_defined(const Importer& imp, const std::string& name);
/// Makes ONNX name `to` denote what `from` denotes (every table); UserError
/// naming `where` when `from` is undefined or `to` already defined.
void alias_name(Importer& imp, const std::string& to, const std::string& from,
                const std::string& where);
/// Imports `body` (an If branch, a Loop/Scan/SequenceMap body) once into
/// imp's graph: its inputs are bound to the ONNX names `inputs` ("" leaves
/// one unbound), its local names get a fresh prefix (so a body can be
/// imported once per iteration) and outer names resolve as usual. Returns the
/// names its outputs have in imp's tables. (onnx_subgraph.cpp)
std::vector<std::string> import_subgraph(Importer& imp, const onnx::GraphProto& body,
                                         const std::vector<std::string>& inputs,
                                         const std::string& where);
/// Appends ONNX graph output `name` to imp.g.outputs (a sequence: one entry
/// per element) and, when `layout` is given, its OutputLayout. (onnx_values.cpp)
void add_graph_output(Importer& imp, const std::string& name, std::vector<OutputLayout>* layout);
/// import_onnx_bytes that also gives the output layout. (onnx_importer.cpp)
graph::Graph import_bytes_with_layout(const std::string& bytes, const std::string& origin,
                                      const ImportOptions& options,
                                      std::vector<OutputLayout>* layout);
/// Decodes a STRING TensorProto.
StringTensor decode_strings(const onnx::TensorProto& t);

/// An int64 constant of `shape` holding `values`.
ConstTensor make_int64_tensor(std::vector<int64_t> shape, const std::vector<int64_t>& values);
/// ONNX output 0 is input 0 viewed with `shape`: a constant stays a constant,
/// anything else becomes a "reshape" node.
void reshape_output(NodeCtx& ctx, const std::vector<int64_t>& shape);
/// The most elements a constant computed at import (ConstantOfShape, Range,
/// masks, windows, iotas...) may have.
constexpr int64_t kMaxImportConstantElements = int64_t(1) << 27;
/// Loop/Scan iterations and RNN time steps unrolled at import: beyond this a
/// model is refused (an unrolled loop this long is a mistake, and each step
/// adds nodes).
constexpr int64_t kMaxUnroll = 4096;
/// Checks, before allocating, that a constant of `shape` computed at import
/// stays within kMaxImportConstantElements (dims >= 0, no overflow); UserError
/// naming the node and `what` otherwise. Returns its element count.
int64_t check_constant_size(const NodeCtx& ctx, const std::vector<int64_t>& shape,
                            const std::string& what);
/// Normalizes an axis in [-rank, rank) to [0, rank); UserError otherwise.
int64_t normalize_axis(const NodeCtx& ctx, int64_t axis, int64_t rank);

/// All converters by ONNX op type (built once).
const ConverterTable& converters();

/// Resolves ONNX auto_pad/pads for a 2-D window into (top, left, bottom, right).
std::vector<int64_t> resolve_pads_2d(const NodeCtx& ctx, const std::vector<int64_t>& in_hw,
                                     const std::vector<int64_t>& kernel,
                                     const std::vector<int64_t>& strides,
                                     const std::vector<int64_t>& dilations);

/// Resolves ONNX auto_pad/pads for an N-D window into (begins..., ends...).
std::vector<int64_t> resolve_pads_nd(const NodeCtx& ctx, const std::vector<int64_t>& in,
                                     const std::vector<int64_t>& kernel,
                                     const std::vector<int64_t>& strides,
                                     const std::vector<int64_t>& dilations);

}  // namespace tessera::frontend::onnx_import
