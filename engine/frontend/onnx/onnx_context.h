// Private to the ONNX frontend: the import state shared by the per-op-family
// converter files (onnx_conv.cpp, onnx_math.cpp, ...). Includes protobuf.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/graph/graph.h"
#include "onnx/onnx_pb.h"

namespace tessera::frontend::onnx_import {

/// A decoded constant tensor (initializer, Constant node, test-data TensorProto).
struct ConstTensor {
    graph::TensorType type;
    std::shared_ptr<const graph::ConstantData> data;
};

/// Maps an ONNX element type to ours; throws UserError naming `what` when unsupported.
graph::DType dtype_from_onnx(int elem_type, const std::string& what);
/// The ONNX element type of one of our dtypes.
int dtype_to_onnx(graph::DType t);
/// Decodes a TensorProto (raw_data or typed fields); `what` names it in errors.
ConstTensor decode_tensor(const onnx::TensorProto& t, const std::string& what);
/// Fills `out` with the tensor's dims, type and raw little-endian data.
void encode_tensor(const graph::TensorType& type, const void* data, const std::string& name,
                   onnx::TensorProto* out);

/// Whole-model import state.
struct Importer {
    std::string origin;  // file path or other source name for errors
    int64_t opset = 0;   // default-domain opset
    graph::Graph g;
    std::map<std::string, int> values;                         // ONNX name -> graph value index
    std::map<std::string, ConstTensor> constants;              // ONNX name -> constant data
    std::map<std::string, const onnx::TypeProto*> onnx_types;  // inputs, outputs, value_info

    /// Graph value for an ONNX name, creating constant values on first use.
    int value(const std::string& name, const std::string& where);
};

/// One ONNX node being converted.
class NodeCtx {
public:
    NodeCtx(Importer& imp, const onnx::NodeProto& node, std::string name);

    Importer& imp;
    const onnx::NodeProto& node;
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

/// All converters by ONNX op type (built once).
const ConverterTable& converters();

/// Resolves ONNX auto_pad/pads for a 2-D window into (top, left, bottom, right).
std::vector<int64_t> resolve_pads_2d(const NodeCtx& ctx, const std::vector<int64_t>& in_hw,
                                     const std::vector<int64_t>& kernel,
                                     const std::vector<int64_t>& strides,
                                     const std::vector<int64_t>& dilations);

}  // namespace tessera::frontend::onnx_import
