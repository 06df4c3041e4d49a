// ONNX model -> graph IR: parse, check with ONNX's checker, run ONNX shape
// inference, then map inputs, initializers and nodes (via the converter table).
#include "engine/frontend/onnx/onnx_importer.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "engine/core/checked_math.h"
#include "engine/core/error.h"
#include "engine/frontend/onnx/onnx_context.h"
#include "engine/frontend/onnx/onnx_contrib_ops.h"
#include "engine/frontend/onnx/onnx_external_data.h"
#include "engine/frontend/onnx/onnx_ml_trees.h"
#include "engine/frontend/onnx/onnx_opset_adapter.h"
#include "engine/frontend/onnx/onnx_qdq_fold.h"
#include "onnx/checker.h"
#include "onnx/defs/schema.h"
#include "onnx/shape_inference/implementation.h"
#include "onnx/version_converter/convert.h"

namespace tessera::frontend {

using namespace onnx_import;

namespace {

// Names of symbolic dims beyond the inputs: ONNX's shape inference ran on the
// model with its inputs still symbolic, so a value whose dim follows a named
// input dim carries that name in its inferred type ("batch"); the graph value
// of that name, where its rank and static dims agree with the inferred type,
// shows it (batch=4). Dims ONNX could not name ("unk__3") stay unnamed.
void name_symbolic_dims(Importer& imp, const onnx::ValueInfoProto& vi) {
    auto it = imp.values.find(vi.name());
    if (it == imp.values.end() || !vi.type().has_tensor_type() ||
        !vi.type().tensor_type().has_shape())
        return;
    graph::Value& v = imp.g.values[size_t(it->second)];
    const auto& dims = vi.type().tensor_type().shape().dim();
    if (!v.dim_names.empty() || dims.size() != int(v.type.shape.size())) return;
    std::vector<std::string> names(v.type.shape.size());
    bool any = false;
    for (int i = 0; i < dims.size(); ++i) {
        const auto& d = dims[i];
        if (d.has_dim_value() && d.dim_value() != v.type.shape[size_t(i)]) return;  // another value
        if (d.has_dim_param() && !d.dim_param().empty() && d.dim_param().rfind("unk__", 0) != 0) {
            names[size_t(i)] = d.dim_param();
            any = true;
        }
    }
    if (any) v.dim_names = std::move(names);
}

// Static type of a graph input; UserError naming the input and the dimension otherwise.
// The model's names of the symbolic dims of input `vi` ("?" for an unnamed
// or negative one, "" for a static one); empty when every dim is static.
std::vector<std::string> symbolic_dim_names(const onnx::ValueInfoProto& vi) {
    std::vector<std::string> names;
    if (!vi.type().has_tensor_type() || !vi.type().tensor_type().has_shape()) return names;
    bool any = false;
    for (const auto& d : vi.type().tensor_type().shape().dim()) {
        const bool fixed = d.has_dim_value() && d.dim_value() >= 0;
        names.push_back(fixed ? "" : d.has_dim_param() && !d.dim_param().empty() ? d.dim_param() : "?");
        any = any || !fixed;
    }
    if (!any) names.clear();
    return names;
}

graph::TensorType input_type(const Importer& imp, const onnx::ValueInfoProto& vi) {
    const std::string what = imp.origin + ": input '" + vi.name() + "'";
    TS_USER_CHECK(vi.has_type() && vi.type().has_tensor_type()) << what << " is not a tensor";
    const auto& tt = vi.type().tensor_type();
    graph::TensorType t;
    t.dtype = dtype_from_onnx(tt.elem_type(), what);
    auto fixed = imp.options.input_shapes.find(vi.name());
    if (fixed != imp.options.input_shapes.end()) {
        if (tt.has_shape()) {
            TS_USER_CHECK(int(fixed->second.size()) == tt.shape().dim_size())
                << what << " has rank " << tt.shape().dim_size() << " but --input-shape gives "
                << fixed->second.size() << " dims";
            for (int i = 0; i < tt.shape().dim_size(); ++i) {
                const auto& d = tt.shape().dim(i);
                TS_USER_CHECK(!d.has_dim_value() || d.dim_value() == fixed->second[size_t(i)])
                    << what << " dimension " << i << " is " << d.dim_value()
                    << " but --input-shape gives " << fixed->second[size_t(i)];
            }
        }
        t.shape = fixed->second;
        return t;
    }
    const std::string hint = "; give it with --input-shape " + vi.name() + ":DIMS (e.g. " +
                             vi.name() + ":1x3x224x224)";
    TS_USER_CHECK(tt.has_shape()) << what << " has no shape" << hint;
    for (int i = 0; i < tt.shape().dim_size(); ++i) {
        const auto& d = tt.shape().dim(i);
        if (d.has_dim_value() && d.dim_value() >= 0) {
            t.shape.push_back(d.dim_value());
            continue;
        }
        if (d.has_dim_param()) {
            TS_USER_FAIL() << what << " dimension " << i << " is symbolic ('" << d.dim_param()
                           << "'); Tessera needs static input shapes" << hint;
        }
        TS_USER_FAIL() << what << " dimension " << i << " is "
                       << (d.has_dim_value() ? "negative (" + std::to_string(d.dim_value()) + ")"
                                             : std::string("unknown"))
                       << "; Tessera needs static input shapes" << hint;
    }
    return t;
}

// Models below this opset are converted to it with ONNX's version converter.
constexpr int64_t kCanonicalOpset = 13;

std::string first_line(const std::string& s) {
    std::string r = s.substr(0, s.find('\n'));
    return r.size() > 400 ? r.substr(0, 400) + "..." : r;
}

// The ranks of a node's outputs where they follow from its inputs' ranks
// (ops that keep their input's rank, broadcasting ops, Constant), so that
// the checks below see through them: a ConvInteger of a DynamicQuantizeLinear
// output with a weight of another rank crashed ONNX 1.12's conv inference.
// `lengths`: the element counts of the 1-D constants (Reshape's shapes).
void propagate_ranks(const onnx::NodeProto& n, std::map<std::string, int>& ranks,
                     std::map<std::string, int64_t>& lengths) {
    static const std::set<std::string> kKeepRank = {"Relu",
                                                    "Sigmoid",
                                                    "Tanh",
                                                    "LeakyRelu",
                                                    "Elu",
                                                    "Selu",
                                                    "HardSigmoid",
                                                    "HardSwish",
                                                    "Softplus",
                                                    "Softsign",
                                                    "Clip",
                                                    "Cast",
                                                    "CastLike",
                                                    "Identity",
                                                    "Abs",
                                                    "Neg",
                                                    "Exp",
                                                    "Log",
                                                    "Sqrt",
                                                    "Reciprocal",
                                                    "Floor",
                                                    "Ceil",
                                                    "Round",
                                                    "Sign",
                                                    "Erf",
                                                    "Not",
                                                    "IsNaN",
                                                    "IsInf",
                                                    "Sin",
                                                    "Cos",
                                                    "Softmax",
                                                    "LogSoftmax",
                                                    "QuantizeLinear",
                                                    "DequantizeLinear",
                                                    "Dropout",
                                                    "BatchNormalization",
                                                    "InstanceNormalization",
                                                    "LayerNormalization",
                                                    "LRN",
                                                    "Conv",
                                                    "ConvInteger",
                                                    "QLinearConv",
                                                    "ConvTranspose",
                                                    "MaxPool",
                                                    "AveragePool",
                                                    "LpPool",
                                                    "GlobalAveragePool",
                                                    "GlobalMaxPool",
                                                    "DynamicQuantizeLinear"};
    static const std::set<std::string> kBroadcast = {
        "Add",   "Sub", "Mul", "Div", "Pow",   "Max",  "Min",     "Sum",         "Mean",
        "Where", "And", "Or",  "Xor", "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual",
        "PRelu", "Mod"};
    const bool standard = n.domain().empty() || n.domain() == "ai.onnx";
    if (!standard || n.output_size() < 1) return;
    if (n.op_type() == "Constant") {
        for (const auto& a : n.attribute()) {
            if (a.name() != "value" || !a.has_t()) continue;
            ranks[n.output(0)] = a.t().dims_size();
            if (a.t().dims_size() == 1) lengths[n.output(0)] = a.t().dims(0);
        }
        return;
    }
    auto rank_of = [&](const std::string& v) {
        auto r = ranks.find(v);
        return r == ranks.end() ? -1 : r->second;
    };
    if (n.op_type() == "Reshape" && n.input_size() >= 2) {
        auto l = lengths.find(n.input(1));
        if (l != lengths.end() && l->second >= 0 && l->second <= 64)
            ranks[n.output(0)] = int(l->second);
        return;
    }
    if (n.op_type() == "Transpose" && n.input_size() >= 1) {
        if (const int r = rank_of(n.input(0)); r >= 0) ranks[n.output(0)] = r;
        return;
    }
    if (kKeepRank.count(n.op_type()) && n.input_size() >= 1) {
        const int r = rank_of(n.input(0));
        if (r >= 0) ranks[n.output(0)] = r;
        if (n.op_type() == "DynamicQuantizeLinear")  // the scale and zero point
            for (int i = 1; i < n.output_size(); ++i) ranks[n.output(i)] = 0;
        return;
    }
    if (kBroadcast.count(n.op_type())) {
        int r = 0;
        for (const std::string& in : n.input()) {
            const int ri = rank_of(in);
            if (ri < 0) return;
            r = std::max(r, ri);
        }
        ranks[n.output(0)] = r;
    }
}

// ONNX 1.12's shape inference indexes dims without checking ranks or
// attribute values (found by fuzz_onnx_import): check what it relies on for
// the ranks we know, in `gp` and (recursively) its subgraphs. `ranks` holds
// the ranks of the enclosing graphs' values.
void check_inference_inputs(const onnx::GraphProto& gp, std::map<std::string, int> ranks,
                            const std::string& origin);

// check_inference_inputs for node i of a graph, `ranks` those known before it.
void check_inference_node(const onnx::NodeProto& n, int i, const std::map<std::string, int>& ranks,
                          const std::string& origin) {
    std::string name = n.name().empty() ? n.op_type() + "_" + std::to_string(i) : n.name();
    const std::string where = origin + ": node '" + name + "' (op " + n.op_type() + ")";
    for (const auto& a : n.attribute()) {
        if (a.type() == onnx::AttributeProto_AttributeType_GRAPH)
            check_inference_inputs(a.g(), ranks, origin);
        for (const auto& sub : a.graphs()) check_inference_inputs(sub, ranks, origin);
    }
    if (n.op_type() == "DepthToSpace" || n.op_type() == "SpaceToDepth") {
        // Its inference multiplies blocksize by itself (and divides by it).
        for (const auto& a : n.attribute()) {
            if (a.name() == "blocksize") {
                TS_USER_CHECK(a.i() >= 1 && a.i() <= (int64_t(1) << 20))
                    << where << ": blocksize must be in 1..2^20, got " << a.i();
            }
        }
    }
    if (n.op_type() == "Gemm") {
        for (int k = 0; k < std::min(n.input_size(), 2); ++k) {
            auto r = ranks.find(n.input(k));
            TS_USER_CHECK(r == ranks.end() || r->second == 2)
                << where << ": input " << k << " ('" << n.input(k)
                << "') must have rank 2, got rank " << r->second;
        }
    }
    // Conv/pool inference indexes input dims by the weight's rank and the
    // attribute lengths, and divides by strides and group.
    // Op -> index of its weight input (MaxUnpool: its indices; -1: none).
    static const std::map<std::string, int> kWindowOps = {
        {"Conv", 1},     {"ConvTranspose", 1}, {"ConvInteger", 1}, {"QLinearConv", 3},
        {"MaxPool", -1}, {"AveragePool", -1},  {"LpPool", -1},     {"MaxUnpool", 1}};
    auto op = kWindowOps.find(n.op_type());
    if (op == kWindowOps.end() || n.input_size() < 1) return;
    for (const auto& a : n.attribute()) {
        if (a.name() == "strides" || a.name() == "dilations") {
            for (int64_t v : a.ints()) {
                TS_USER_CHECK(v >= 1)
                    << where << ": attribute '" << a.name() << "' must be positive, got " << v;
            }
        }
        if (a.name() == "group" && a.type() == onnx::AttributeProto_AttributeType_INT) {
            TS_USER_CHECK(a.i() >= 1) << where << ": group must be positive, got " << a.i();
        }
    }
    auto x = ranks.find(n.input(0));
    if (x == ranks.end()) return;
    TS_USER_CHECK(x->second >= 3) << where
                                  << ": input 0 must have rank >= 3 (N, C, spatial...), got rank "
                                  << x->second;
    const int spatial = x->second - 2;
    if (op->second > 0 && n.input_size() > op->second) {
        auto w = ranks.find(n.input(op->second));
        TS_USER_CHECK(w == ranks.end() || w->second == x->second)
            << where << ": " << (n.op_type() == "MaxUnpool" ? "indices" : "weight") << " rank "
            << w->second << " differs from input rank " << x->second;
    }
    for (const auto& a : n.attribute()) {
        int expect = a.name() == "pads" ? 2 * spatial : spatial;
        if (a.name() != "pads" && a.name() != "kernel_shape" && a.name() != "strides" &&
            a.name() != "dilations" && a.name() != "output_padding")
            continue;
        if (a.type() != onnx::AttributeProto_AttributeType_INTS) continue;  // the checker's case
        TS_USER_CHECK(a.ints_size() == expect)
            << where << ": attribute '" << a.name() << "' needs " << expect << " values for "
            << spatial << " spatial dims, got " << a.ints_size();
    }
}

void check_inference_inputs(const onnx::GraphProto& gp, std::map<std::string, int> ranks,
                            const std::string& origin) {
    for (const auto& vi : gp.input())
        if (vi.type().has_tensor_type() && vi.type().tensor_type().has_shape())
            ranks[vi.name()] = vi.type().tensor_type().shape().dim_size();
    std::map<std::string, int64_t> lengths;
    for (const auto& init : gp.initializer()) {
        ranks[init.name()] = init.dims_size();
        if (init.dims_size() == 1) lengths[init.name()] = init.dims(0);
    }
    for (int i = 0; i < gp.node_size(); ++i) {
        check_inference_node(gp.node(i), i, ranks, origin);
        propagate_ranks(gp.node(i), ranks, lengths);
    }
}

// Exporters (Paddle2ONNX) write -1 for a dynamic input dim; ONNX Runtime reads
// it as unknown, and so does Tessera (then given by --input-shape or the input
// files). Other negative dims stay invalid (check_structure).
void read_minus_one_dims_as_unknown(onnx::GraphProto& g) {
    for (auto& vi : *g.mutable_input()) {
        if (!vi.type().has_tensor_type() || !vi.type().tensor_type().has_shape()) continue;
        for (auto& d : *vi.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim())
            if (d.has_dim_value() && d.dim_value() == -1) d.clear_dim_value();
    }
}

// Bytes per element of a tensor's raw_data (0: sub-byte, 2 per byte; -1:
// not a fixed-size type, e.g. strings).
int raw_element_bytes(int32_t type) {
    using T = onnx::TensorProto;
    switch (type) {
        case T::FLOAT: case T::INT32: case T::UINT32: return 4;
        case T::DOUBLE: case T::INT64: case T::UINT64: case T::COMPLEX64: return 8;
        case T::COMPLEX128: return 16;
        case T::INT16: case T::UINT16: case T::FLOAT16: case T::BFLOAT16: return 2;
        case T::INT8: case T::UINT8: case T::BOOL: return 1;
        case 17: case 18: case 19: case 20: return 1;  // float8 types
        case 21: case 22: case 23: return 0;           // uint4, int4, float4e2m1
        default: return -1;
    }
}

// Every tensor of a graph (initializers, Constant values, subgraphs) whose
// raw_data length is not what its dims and type take: ONNX 1.12's
// ParseData copies the whole raw_data into a vector sized by whole
// elements, so 15 bytes for int64 dims [3] overflowed its heap buffer
// during shape inference (found by fuzz_onnx_import).
void check_raw_data(const onnx::GraphProto& g, const std::string& origin) {
    auto check = [&](const onnx::TensorProto& t, const std::string& what) {
        if (!t.has_raw_data() || t.data_location() == onnx::TensorProto_DataLocation_EXTERNAL)
            return;
        const int bytes = raw_element_bytes(t.data_type());
        if (bytes < 0) return;
        const int64_t n = checked_elements({t.dims().begin(), t.dims().end()});
        TS_USER_CHECK(n >= 0) << origin << ": " << what << " has more than 2^40 elements";
        const uint64_t want = bytes == 0 ? uint64_t(n + 1) / 2 : uint64_t(n) * uint64_t(bytes);
        TS_USER_CHECK(t.raw_data().size() == want)
            << origin << ": " << what << " holds " << t.raw_data().size()
            << " bytes of data but its type and dims take " << want;
    };
    for (const auto& init : g.initializer()) check(init, "initializer '" + init.name() + "'");
    for (const auto& n : g.node()) {
        const std::string where = "node '" + n.name() + "' (op " + n.op_type() + ")";
        for (const auto& a : n.attribute()) {
            if (a.has_t()) check(a.t(), where + " attribute '" + a.name() + "'");
            for (const auto& t : a.tensors()) check(t, where + " attribute '" + a.name() + "'");
            if (a.has_g()) check_raw_data(a.g(), origin);
            for (const auto& sub : a.graphs()) check_raw_data(sub, origin);
        }
    }
}

// Reads -1 input dims as unknown, then checks what the checker does not make
// (it may crash or accept): a node cycle or an input no one defines, giving a
// diagnostic that names the node.
// Names a node's subgraphs read (their nodes' inputs), at any depth.
void subgraph_reads(const onnx::NodeProto& n, std::set<std::string>& out) {
    for (const auto& a : n.attribute()) {
        std::vector<const onnx::GraphProto*> graphs;
        if (a.has_g()) graphs.push_back(&a.g());
        for (const auto& g : a.graphs()) graphs.push_back(&g);
        for (const onnx::GraphProto* g : graphs)
            for (const auto& sub : g->node()) {
                out.insert(sub.input().begin(), sub.input().end());
                subgraph_reads(sub, out);
            }
    }
}

// Nodes listed after a node that reads them (ONNX requires the graph sorted;
// ONNX Runtime sorts it, and skl2onnx's tutorial model is not): sorted
// again, each node as early as its inputs allow and otherwise in its given
// order. A graph with a cycle stays as it is, for check_structure to refuse.
void sort_nodes(onnx::GraphProto& g) {
    const int count = g.node_size();
    std::map<std::string, int> producer;
    for (int i = 0; i < count; ++i)
        for (const auto& o : g.node(i).output())
            if (!o.empty()) producer.emplace(o, i);
    std::vector<std::vector<int>> users(static_cast<size_t>(count), std::vector<int>{});
    std::vector<int> waiting(size_t(count), 0);
    bool sorted = true;
    for (int i = 0; i < count; ++i) {
        std::set<std::string> reads(g.node(i).input().begin(), g.node(i).input().end());
        subgraph_reads(g.node(i), reads);
        std::set<int> from;
        for (const std::string& name : reads) {
            auto p = producer.find(name);
            if (p != producer.end() && p->second != i) from.insert(p->second);
        }
        for (int p : from) {
            users[size_t(p)].push_back(i);
            ++waiting[size_t(i)];
            sorted = sorted && p < i;
        }
    }
    if (sorted) return;
    std::set<int> ready;
    for (int i = 0; i < count; ++i)
        if (waiting[size_t(i)] == 0) ready.insert(i);
    std::vector<int> order;
    while (!ready.empty()) {
        const int i = *ready.begin();
        ready.erase(ready.begin());
        order.push_back(i);
        for (int u : users[size_t(i)])
            if (--waiting[size_t(u)] == 0) ready.insert(u);
    }
    if (int(order.size()) != count) return;  // a cycle
    google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
    for (int i : order) *nodes.Add() = g.node(i);
    g.mutable_node()->Swap(&nodes);
}

void check_structure(onnx::ModelProto& model, const std::string& origin) {
    read_minus_one_dims_as_unknown(*model.mutable_graph());
    sort_nodes(*model.mutable_graph());
    const onnx::GraphProto& gp = model.graph();
    std::set<std::string> defined;
    for (const auto& vi : gp.input()) {
        defined.insert(vi.name());
        if (!vi.type().has_tensor_type() || !vi.type().tensor_type().has_shape()) continue;
        const auto& shape = vi.type().tensor_type().shape();
        std::vector<int64_t> known;  // the fixed dims: their product must fit too
        for (int i = 0; i < shape.dim_size(); ++i) {
            const auto& d = shape.dim(i);
            TS_USER_CHECK(!d.has_dim_value() || (d.dim_value() >= 0 && d.dim_value() <= kMaxTensorElements))
                << origin << ": input '" << vi.name() << "' dimension " << i << " is invalid ("
                << d.dim_value() << ")";
            if (d.has_dim_value()) known.push_back(d.dim_value());
        }
        TS_USER_CHECK(checked_elements(known) >= 0)
            << origin << ": input '" << vi.name() << "' has more than 2^40 elements";
    }
    for (const auto& init : gp.initializer()) defined.insert(init.name());
    std::map<std::string, int> producer;
    for (int i = 0; i < gp.node_size(); ++i)
        for (const auto& o : gp.node(i).output())
            if (!o.empty()) producer.emplace(o, i);
    for (int i = 0; i < gp.node_size(); ++i) {
        const onnx::NodeProto& n = gp.node(i);
        std::string name = n.name().empty() ? n.op_type() + "_" + std::to_string(i) : n.name();
        for (const auto& in : n.input()) {
            if (in.empty() || defined.count(in)) continue;
            auto p = producer.find(in);
            TS_USER_CHECK(p != producer.end())
                << origin << ": node '" << name << "' (op " << n.op_type() << "): input '" << in
                << "' is not a graph input, an initializer or any node's output";
            TS_USER_CHECK(p->second < i)
                << origin << ": node '" << name << "' (op " << n.op_type() << "): input '" << in
                << "' is produced by a later node; the graph has a cycle or is not sorted";
        }
        for (const auto& o : n.output()) defined.insert(o);
    }
    check_inference_inputs(gp, {}, origin);
    check_raw_data(gp, origin);
    // ONNX's version converter dereferences the producer of every graph output.
    for (const auto& vi : gp.output())
        TS_USER_CHECK(defined.count(vi.name()))
            << origin << ": graph output '" << vi.name()
            << "' is not a graph input, an initializer or any node's output";
    for (const auto& init : gp.initializer()) {
        for (int64_t d : init.dims())
            TS_USER_CHECK(d >= 0 && d <= kMaxTensorElements)
                << origin << ": initializer '" << init.name() << "' has invalid dimension " << d;
        TS_USER_CHECK(checked_elements({init.dims().begin(), init.dims().end()}) >= 0)
            << origin << ": initializer '" << init.name() << "' has more than 2^40 elements";
        // External data was read (or refused) by inline_external_data.
    }
}

// Unsupported ops are reported before version conversion (which may not know them).
void check_ops_supported(const onnx::ModelProto& model, const std::string& origin) {
    const ConverterTable& table = converters();
    const onnx::GraphProto& gp = model.graph();
    for (int i = 0; i < gp.node_size(); ++i) {
        const onnx::NodeProto& node = gp.node(i);
        bool default_domain = node.domain().empty() || node.domain() == "ai.onnx";
        // Ops of other domains are keyed "DOMAIN.OpType" in the converter table.
        std::string op = default_domain ? node.op_type() : node.domain() + "." + node.op_type();
        if (table.count(op)) continue;
        std::string name =
            node.name().empty() ? node.op_type() + "_" + std::to_string(i) : node.name();
        TS_USER_FAIL() << origin << ": node '" << name << "' (op " << node.op_type()
                       << (default_domain || node.domain().starts_with("ai.")
                               ? ""
                               : ", " + node.domain())
                       << "): unsupported op " << op
                       << (node.domain() == "com.microsoft.nchwc"
                               ? " (ONNX Runtime's blocked layout for the vector width of the "
                                 "machine that saved it, "
                                 "written when a model is saved at ORT_ENABLE_ALL; save it at "
                                 "ORT_ENABLE_EXTENDED, or open the model it was made from)"
                               : "");
    }
}

// ONNX 1.12's checker rejects initializers of element types newer than it
// (float8, int4... of opsets 19-25), though it accepts them as graph inputs:
// while it checks, such initializers are graph inputs of their type.
void check_model_with_newer_initializers(onnx::ModelProto& model) {
    onnx::GraphProto& g = *model.mutable_graph();
    google::protobuf::RepeatedPtrField<onnx::TensorProto> newer;
    std::set<std::string> inputs;
    for (const auto& vi : g.input()) inputs.insert(vi.name());
    const int first_input = g.input_size();
    auto* inits = g.mutable_initializer();
    for (int i = inits->size() - 1; i >= 0; --i) {
        if (onnx::TensorProto_DataType_IsValid(inits->Get(i).data_type())) continue;
        onnx::TensorProto t = inits->Get(i);
        inits->DeleteSubrange(i, 1);
        if (!inputs.count(t.name())) {
            onnx::ValueInfoProto* vi = g.add_input();
            vi->set_name(t.name());
            auto* tt = vi->mutable_type()->mutable_tensor_type();
            tt->set_elem_type(t.data_type());
            for (int64_t d : t.dims()) tt->mutable_shape()->add_dim()->set_dim_value(d);
        }
        *newer.Add() = std::move(t);
    }
    auto restore = [&] {
        while (g.input_size() > first_input) g.mutable_input()->RemoveLast();
        for (auto& t : newer) *g.add_initializer() = std::move(t);
    };
    try {
        onnx::checker::check_model(model);
    } catch (...) {
        restore();
        throw;
    }
    restore();
}

int64_t default_opset(const onnx::ModelProto& m) {
    for (const auto& op : m.opset_import())
        if (op.domain().empty() || op.domain() == "ai.onnx") return op.version();
    return 0;
}

// Every value name `gp` and its subgraphs use (generated names avoid them).
void collect_value_names(const onnx::GraphProto& gp, std::set<std::string>& out) {
    for (const auto& vi : gp.input()) out.insert(vi.name());
    for (const auto& vi : gp.output()) out.insert(vi.name());
    for (const auto& init : gp.initializer()) out.insert(init.name());
    for (const auto& n : gp.node()) {
        for (const auto& o : n.output()) out.insert(o);
        for (const auto& a : n.attribute()) {
            if (a.has_g()) collect_value_names(a.g(), out);
            for (const auto& sub : a.graphs()) collect_value_names(sub, out);
        }
    }
}

graph::Graph build_graph(const onnx::ModelProto& model, int64_t source_opset,
                         const std::string& origin, const ImportOptions& options,
                         std::vector<OutputLayout>* layout) {
    Importer imp;
    collect_value_names(model.graph(), imp.model_names);
    imp.origin = origin;
    imp.options = options;
    imp.opset = default_opset(model);
    imp.source_opset = source_opset;
    const onnx::GraphProto& gp = model.graph();
    imp.g.name = gp.name().empty() ? "main" : gp.name();

    for (const auto& vi : gp.input()) imp.onnx_types[vi.name()] = &vi.type();
    for (const auto& vi : gp.value_info()) imp.onnx_types[vi.name()] = &vi.type();
    for (const auto& vi : gp.output()) imp.onnx_types[vi.name()] = &vi.type();

    for (const auto& init : gp.initializer()) {
        imp.initializer_elem_types[init.name()] = init.data_type();
        if (init.data_type() == onnx::TensorProto_DataType_STRING) {
            imp.strings[init.name()] = decode_strings(init);  // for string ops at import
            continue;
        }
        imp.constants[init.name()] =
            decode_tensor(init, origin + ": initializer '" + init.name() + "'");
    }
    for (const auto& sp : gp.sparse_initializer()) {
        (void)sp;
        TS_USER_FAIL() << origin << ": sparse initializers are not supported";
    }

    for (const auto& [name, shape] : options.input_shapes) {
        bool known = false;
        for (const auto& vi : gp.input()) known = known || vi.name() == name;
        TS_USER_CHECK(known) << origin << ": --input-shape names '" << name
                             << "', which is not a graph input";
    }
    for (const auto& vi : gp.input()) {
        if (imp.constants.count(vi.name()) || imp.strings.count(vi.name()))
            continue;  // IR < 4 lists initializers as inputs too
        graph::Value v;
        v.name = vi.name();
        v.type = input_type(imp, vi);
        v.dim_names = symbolic_dim_names(vi);
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
        std::string op = default_domain ? node.op_type() : node.domain() + "." + node.op_type();
        auto it = table.find(op);
        TS_USER_CHECK(it != table.end()) << ctx.where() << ": unsupported op " << op;
        it->second(ctx);
    }

    for (const auto& vi : gp.output()) add_graph_output(imp, vi.name(), layout);
    for (const auto& vi : gp.value_info()) name_symbolic_dims(imp, vi);
    for (const auto& vi : gp.output()) name_symbolic_dims(imp, vi);

    try {
        graph::verify(imp.g);
    } catch (const UserError& e) {
        throw UserError(origin + ": " + e.what());
    }
    return std::move(imp.g);
}

}  // namespace

graph::Graph import_onnx_bytes(const std::string& bytes, const std::string& origin,
                               const ImportOptions& options) {
    return onnx_import::import_bytes_with_layout(bytes, origin, options, nullptr);
}

graph::Graph onnx_import::import_bytes_with_layout(const std::string& bytes,
                                                   const std::string& origin,
                                                   const ImportOptions& options,
                                                   std::vector<OutputLayout>* layout) {
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
    inline_external_data(model, origin);
    int64_t opset = default_opset(model);
    TS_USER_CHECK(opset <= newest_adaptable_opset())
        << origin << ": opset " << opset << " is newer than Tessera supports (up to "
        << newest_adaptable_opset() << ")";
    check_structure(model, origin);
    // ONNX 1.12 knows opsets up to 17: newer models are read in their
    // opset-17 forms (onnx_opset_adapter.h).
    expand_contrib_ops(model, origin);
    expand_ml_ops(model, origin);
    opset = default_opset(model);  // raised to 11 for old tree ensembles
    if (options.activations_in_float) read_activation_qdq_as_float(model);
    fold_qdq_into_integer_ops(model, origin);
    if (opset > kOnnx112Opset) adapt_to_opset17(model, origin);
    // A graph output declared without a type (skl2onnx's tutorial model;
    // ONNX Runtime infers it) gets the type ONNX's inference gives it.
    if (std::any_of(model.graph().output().begin(), model.graph().output().end(),
                    [](const onnx::ValueInfoProto& o) { return !o.has_type(); })) {
        try {
            onnx::shape_inference::InferShapes(model);
        } catch (const std::exception&) {
        }
    }
    try {
        check_model_with_newer_initializers(model);
    } catch (const std::exception& e) {
        TS_USER_FAIL() << origin << ": the ONNX checker rejected the model: " << first_line(e.what());
    }
    check_ops_supported(model, origin);
    // ONNX 1.12's shape inference can crash merging an inferred shape into a
    // declared one of another rank (found by fuzz_onnx_import); Tessera infers
    // and checks every node's output type itself, so inference starts from the
    // graph inputs alone.
    model.mutable_graph()->clear_value_info();
    for (auto& out : *model.mutable_graph()->mutable_output())
        if (out.mutable_type()->has_tensor_type())
            out.mutable_type()->mutable_tensor_type()->clear_shape();
    try {
        onnx::shape_inference::InferShapes(model);
    } catch (const std::exception& e) {
        TS_USER_FAIL() << origin << ": ONNX shape inference failed: " << first_line(e.what());
    }
    // ONNX 1.12's Scan 8->9 adapter drops the batch axis from the graph's
    // input types; onnx_control_flow.cpp imports Scan-8 itself.
    bool has_scan = false;
    for (const auto& n : model.graph().node()) has_scan = has_scan || n.op_type() == "Scan";
    if (opset < kCanonicalOpset && !(opset < 9 && has_scan)) {
        // One canonical opset for the converters; newer models import as they
        // are. The few models the converter cannot adapt (its adapters need
        // shapes it does not always have) import at their own opset: the
        // converters also handle the older forms they use.
        try {
            onnx::ModelProto converted =
                onnx::version_conversion::ConvertVersion(model, int(kCanonicalOpset));
            onnx::shape_inference::InferShapes(converted);
            model = std::move(converted);
        } catch (const std::exception&) {
        }
    }
    return build_graph(model, opset, origin, options, layout);
}

graph::Graph import_onnx_file(const std::string& path, const ImportOptions& options) {
    std::error_code ec;
    TS_USER_CHECK(!std::filesystem::is_directory(path, ec))
        << "cannot open model '" << path << "': is a directory";
    std::ifstream in(path, std::ios::binary);
    TS_USER_CHECK(in.good()) << "cannot open model '" << path << "': " << std::strerror(errno);
    std::ostringstream ss;
    ss << in.rdbuf();
    TS_USER_CHECK(!in.bad()) << "cannot read model '" << path << "': " << std::strerror(errno);
    return import_onnx_bytes(ss.str(), path, options);
}

std::vector<std::string> supported_onnx_ops() {
    std::vector<std::string> ops;
    for (const auto& [op, conv] : converters()) ops.push_back(op);
    return ops;
}

}  // namespace tessera::frontend

namespace tessera::frontend {

void parse_input_shape(const std::string& spec, std::map<std::string, std::vector<int64_t>>& out) {
    size_t pos = 0;
    while (pos <= spec.size()) {
        size_t comma = spec.find(',', pos);
        std::string item = spec.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
        size_t colon = item.rfind(':');
        TS_USER_CHECK(colon != std::string::npos && colon > 0 && colon + 1 < item.size())
            << "--input-shape '" << item << "' must look like NAME:1x3x224x224";
        std::vector<int64_t> dims;
        std::string d = item.substr(colon + 1);
        size_t p = 0;
        while (p <= d.size()) {
            size_t x = d.find('x', p);
            std::string tok = d.substr(p, x == std::string::npos ? std::string::npos : x - p);
            char* end = nullptr;
            long long v = tok.empty() ? -1 : std::strtoll(tok.c_str(), &end, 10);
            TS_USER_CHECK(!tok.empty() && end && *end == '\0' && v >= 0 && v <= (1LL << 40))
                << "--input-shape '" << item << "': '" << tok
                << "' is not a dimension (a non-negative integer)";
            dims.push_back(v);
            if (x == std::string::npos) break;
            p = x + 1;
        }
        out[item.substr(0, colon)] = dims;
        if (comma == std::string::npos) break;
        pos = comma + 1;
    }
}

}  // namespace tessera::frontend
