// The graph IR: a typed dataflow graph of operator nodes over tensor values.
// Printed Relay-style:
//   %3 = nn.conv2d(%x, %w, strides=[1, 1]) /* ty=Tensor[(1, 64, 56, 56), float32] */
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

namespace tessera::graph {

enum class DType : uint8_t { Float32, Float64, Int64, Int32, Int8, UInt8, Bool };
const char* dtype_name(DType t);
int dtype_bytes(DType t);

struct TensorType {
    DType dtype = DType::Float32;
    std::vector<int64_t> shape;
    int64_t num_elements() const;
    int64_t num_bytes() const;
    /// "Tensor[(1, 3, 224, 224), float32]".
    std::string str() const;
    bool operator==(const TensorType& o) const { return dtype == o.dtype && shape == o.shape; }
};

/// Raw little-endian bytes of a constant tensor (laid out row-major).
struct ConstantData {
    std::vector<uint8_t> bytes;
    template <typename T>
    const T* as() const { return reinterpret_cast<const T*>(bytes.data()); }
};

/// A tensor flowing along graph edges: a graph input, a constant (weight) or
/// the output of a node.
struct Value {
    std::string name;
    TensorType type;
    std::shared_ptr<const ConstantData> constant;  // set for weights/initializers
    int producer = -1;                             // node index, -1 for inputs/constants
    /// A graph input's symbolic dims as the model names them ("batch"; "?"
    /// for an unnamed one), one entry per dim ("" for a static dim); empty
    /// when every dim is static. The type holds the sizes the user gave.
    std::vector<std::string> dim_names;
    /// How a quantized tensor maps to real values, when a QuantizeLinear or
    /// DequantizeLinear with constant parameters made or read it ("uint8,
    /// scale 0.0157, zero point 128"); empty otherwise. For display.
    std::string quantization;
    bool is_constant() const { return constant != nullptr; }
    /// type.str() with each named dim as name=size: "Tensor[(batch=5, 3), float32]".
    std::string type_str() const;
};

using AttrValue = std::variant<int64_t, double, std::string, std::vector<int64_t>, std::vector<double>>;

/// One operator application. `op` is a registered graph op name (op_registry.h).
struct Node {
    std::string op;
    std::string name;  // the ONNX node name, or a generated one
    std::map<std::string, AttrValue> attrs;
    std::vector<int> inputs;   // value indices
    std::vector<int> outputs;  // value indices

    int64_t attr_int(const std::string& key, int64_t dflt) const;
    double attr_float(const std::string& key, double dflt) const;
    std::vector<int64_t> attr_ints(const std::string& key, std::vector<int64_t> dflt = {}) const;
    std::string attr_str(const std::string& key, const std::string& dflt = "") const;
};

/// Nodes are kept in a topological order (every input is produced earlier).
struct Graph {
    std::string name;
    std::vector<Value> values;
    std::vector<Node> nodes;
    std::vector<int> inputs;   // value indices of the graph inputs (not constants)
    std::vector<int> outputs;  // value indices of the graph outputs

    int add_value(Value v);
    /// Appends a node, sets its outputs' producer. Returns its index.
    int add_node(Node n);
    /// Index of the node with this name, or -1. An ONNX node the importer
    /// writes out as several nodes gives them all its name (magika's Conv2D:
    /// reshape, transpose, conv, reshape); the name then means the one that
    /// computes most (node_flops; the first of equals), so `--op NAME` finds the conv.
    int find_node(const std::string& name) const;
    /// Index of the value with this name, or -1.
    int find_value(const std::string& name) const;
};

/// Relay-like text of the whole graph.
std::string print(const Graph& g);

/// Checks structure (indices in range, topological order, each value produced
/// once, op registered, types agree with the op's shape rule). Throws
/// UserError naming the node on the first problem.
void verify(const Graph& g);

/// Floating-point operations of one node (multiply-add counts 2), for GFLOP/s:
/// the op's definition on its logical shapes (a blocked layout's padded
/// channels and a Winograd kernel's transforms are not counted; a Winograd
/// conv counts as the direct conv it computes, "effective" FLOPs).
double node_flops(const Graph& g, const Node& n);
/// nn.matmul_u8i8 / nn.matmul_i8u8: 8-bit products whose operations count
/// against the integer (dot-product) peak, not the float one.
bool is_integer_gemm(const std::string& op);
/// Whether any of `nodes` (indices into g.nodes; others are skipped) is an
/// integer GEMM: a kernel covering them is rated in G operations/s.
bool any_integer_gemm(const Graph& g, const std::vector<int>& nodes);

/// The floating-point operations the node's kernel executes, for the
/// roofline: node_flops except where the kernel computes the op another way
/// (Winograd: the transforms and the product over padded channels).
double node_work_flops(const Graph& g, const Node& n);

}  // namespace tessera::graph
