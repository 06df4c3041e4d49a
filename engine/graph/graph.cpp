// Graph IR basics: dtypes, tensor types, node attributes, graph building,
// Relay-like printing, structural verification and per-node FLOP counts.
#include "engine/graph/graph.h"

#include <charconv>
#include <set>
#include <sstream>

#include "engine/core/error.h"
#include "engine/graph/op_registry.h"

namespace tessera::graph {

const char* dtype_name(DType t) {
    switch (t) {
        case DType::Float32:
            return "float32";
        case DType::Float64:
            return "float64";
        case DType::Int64:
            return "int64";
        case DType::Int32:
            return "int32";
        case DType::Int8:
            return "int8";
        case DType::UInt8:
            return "uint8";
        case DType::Bool:
            return "bool";
    }
    return "unknown";
}

int dtype_bytes(DType t) {
    switch (t) {
        case DType::Float32:
            return 4;
        case DType::Float64:
            return 8;
        case DType::Int64:
            return 8;
        case DType::Int32:
            return 4;
        case DType::Int8:
            return 1;
        case DType::UInt8:
            return 1;
        case DType::Bool:
            return 1;
    }
    return 0;
}

int64_t TensorType::num_elements() const {
    // An empty tensor first: its other dims may be huge (a fuzzed empty
    // constant of (115, 3.5e17, 0, ...) overflowed the product before the 0,
    // found by the sanitize preset's UBSan).
    for (int64_t d : shape)
        if (d == 0) return 0;
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
}

int64_t TensorType::num_bytes() const { return num_elements() * dtype_bytes(dtype); }

std::string TensorType::str() const {
    std::ostringstream os;
    os << "Tensor[(";
    for (size_t i = 0; i < shape.size(); ++i) os << (i ? ", " : "") << shape[i];
    // Relay writes a rank-1 tuple as "(4,)"; keep that so the text reads as Python.
    if (shape.size() == 1) os << ",";
    os << "), " << dtype_name(dtype) << "]";
    return os.str();
}

// ---- Node attributes -------------------------------------------------------

int64_t Node::attr_int(const std::string& key, int64_t dflt) const {
    auto it = attrs.find(key);
    if (it == attrs.end()) return dflt;
    if (auto* i = std::get_if<int64_t>(&it->second)) return *i;
    if (auto* d = std::get_if<double>(&it->second)) return int64_t(*d);
    TS_USER_FAIL() << "node '" << name << "' (" << op << "): attribute '" << key
                   << "' is not an integer";
}

double Node::attr_float(const std::string& key, double dflt) const {
    auto it = attrs.find(key);
    if (it == attrs.end()) return dflt;
    if (auto* d = std::get_if<double>(&it->second)) return *d;
    if (auto* i = std::get_if<int64_t>(&it->second)) return double(*i);
    TS_USER_FAIL() << "node '" << name << "' (" << op << "): attribute '" << key
                   << "' is not a number";
}

std::vector<int64_t> Node::attr_ints(const std::string& key, std::vector<int64_t> dflt) const {
    auto it = attrs.find(key);
    if (it == attrs.end()) return dflt;
    if (auto* v = std::get_if<std::vector<int64_t>>(&it->second)) return *v;
    if (auto* i = std::get_if<int64_t>(&it->second)) return {*i};
    TS_USER_FAIL() << "node '" << name << "' (" << op << "): attribute '" << key
                   << "' is not a list of integers";
}

std::string Node::attr_str(const std::string& key, const std::string& dflt) const {
    auto it = attrs.find(key);
    if (it == attrs.end()) return dflt;
    if (auto* s = std::get_if<std::string>(&it->second)) return *s;
    TS_USER_FAIL() << "node '" << name << "' (" << op << "): attribute '" << key
                   << "' is not a string";
}

// ---- Graph building --------------------------------------------------------

int Graph::add_value(Value v) {
    values.push_back(std::move(v));
    return int(values.size()) - 1;
}

int Graph::add_node(Node n) {
    int idx = int(nodes.size());
    for (int o : n.outputs) {
        TS_CHECK(o >= 0 && o < int(values.size())) << "node '" << n.name << "' output index " << o;
        values[size_t(o)].producer = idx;
    }
    nodes.push_back(std::move(n));
    return idx;
}

int Graph::find_node(const std::string& node_name) const {
    int found = -1;
    double most = -1;  // FLOPs of `found`, counted once a second node shares the name
    for (size_t i = 0; i < nodes.size(); ++i) {
        if (nodes[i].name != node_name) continue;
        if (found < 0) {
            found = int(i);
            continue;
        }
        if (most < 0) most = node_flops(*this, nodes[size_t(found)]);
        const double flops = node_flops(*this, nodes[i]);
        if (flops > most) found = int(i), most = flops;
    }
    return found;
}

int Graph::find_value(const std::string& value_name) const {
    for (size_t i = 0; i < values.size(); ++i)
        if (values[i].name == value_name) return int(i);
    return -1;
}

// ---- Printing --------------------------------------------------------------

namespace {

std::string format_double(double d) {
    char buf[32];
    auto res = std::to_chars(buf, buf + sizeof buf, d);  // shortest round-trip text
    std::string s(buf, res.ptr);
    // Keep a visible decimal point so 1.0 does not read as an integer.
    if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
    return s;
}

struct AttrPrinter {
    std::ostream& os;
    void operator()(int64_t v) const { os << v; }
    void operator()(double v) const { os << format_double(v); }
    void operator()(const std::string& v) const { os << '"' << v << '"'; }
    void operator()(const std::vector<int64_t>& v) const {
        os << "[";
        for (size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << v[i];
        os << "]";
    }
    void operator()(const std::vector<double>& v) const {
        os << "[";
        for (size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << format_double(v[i]);
        os << "]";
    }
};

std::string value_ref(const Graph& g, int v) {
    if (v < 0 || v >= int(g.values.size())) return "%<bad:" + std::to_string(v) + ">";
    return "%" + g.values[size_t(v)].name;
}

}  // namespace

std::string Value::type_str() const {
    if (dim_names.size() != type.shape.size()) return type.str();
    std::ostringstream os;
    os << "Tensor[(";
    for (size_t i = 0; i < type.shape.size(); ++i) {
        os << (i ? ", " : "");
        if (!dim_names[i].empty()) os << dim_names[i] << "=";
        os << type.shape[i];
    }
    os << (type.shape.size() == 1 ? ",), " : "), ") << dtype_name(type.dtype) << "]";
    return os.str();
}

bool is_integer_gemm(const std::string& op) {
    return op == "nn.matmul_u8i8" || op == "nn.matmul_i8u8";
}

bool any_integer_gemm(const Graph& g, const std::vector<int>& nodes) {
    for (int n : nodes)
        if (n >= 0 && size_t(n) < g.nodes.size() && is_integer_gemm(g.nodes[size_t(n)].op))
            return true;
    return false;
}

std::string print(const Graph& g) {
    std::ostringstream os;
    os << "def @main(";
    for (size_t i = 0; i < g.inputs.size(); ++i) {
        int v = g.inputs[i];
        os << (i ? ", " : "") << value_ref(g, v);
        if (v >= 0 && v < int(g.values.size())) os << ": " << g.values[size_t(v)].type_str();
    }
    os << ") {\n";
    // Constants (weights) are listed first, like Relay's meta section.
    int meta = 0;
    for (const Value& v : g.values) {
        if (!v.is_constant()) continue;
        os << "  %" << v.name << " = meta[Constant][" << meta++ << "] /* ty=" << v.type.str()
           << " */\n";
    }
    for (const Node& n : g.nodes) {
        os << "  ";
        for (size_t i = 0; i < n.outputs.size(); ++i)
            os << (i ? ", " : "") << value_ref(g, n.outputs[i]);
        os << " = " << n.op << "(";
        bool first = true;
        for (int in : n.inputs) {
            os << (first ? "" : ", ") << value_ref(g, in);
            first = false;
        }
        for (const auto& [key, val] : n.attrs) {
            os << (first ? "" : ", ") << key << "=";
            std::visit(AttrPrinter{os}, val);
            first = false;
        }
        os << ")";
        os << " /* ";
        if (n.outputs.size() == 1 && n.outputs[0] >= 0 && n.outputs[0] < int(g.values.size())) {
            os << "ty=" << g.values[size_t(n.outputs[0])].type_str();
        } else {
            os << "ty=(";
            for (size_t i = 0; i < n.outputs.size(); ++i) {
                int o = n.outputs[i];
                os << (i ? ", " : "")
                   << (o >= 0 && o < int(g.values.size()) ? g.values[size_t(o)].type_str() : "?");
            }
            os << ")";
        }
        if (!n.name.empty() &&
            (n.outputs.size() != 1 || n.outputs[0] < 0 || n.outputs[0] >= int(g.values.size()) ||
             g.values[size_t(n.outputs[0])].name != n.name))
            os << ", name=\"" << n.name << "\"";
        os << " */\n";
    }
    os << "  ";
    if (g.outputs.size() == 1) {
        os << value_ref(g, g.outputs[0]);
    } else {
        os << "(";
        for (size_t i = 0; i < g.outputs.size(); ++i)
            os << (i ? ", " : "") << value_ref(g, g.outputs[i]);
        os << ")";
    }
    os << "\n}\n";
    return os.str();
}

// ---- Verification ----------------------------------------------------------

void verify(const Graph& g) {
    const int nv = int(g.values.size());
    std::vector<int> produced_by(size_t(nv), -1);
    std::set<int> graph_inputs(g.inputs.begin(), g.inputs.end());
    for (int v : g.inputs) {
        TS_USER_CHECK(v >= 0 && v < nv)
            << "graph '" << g.name << "': input index " << v << " out of range";
        const Value& val = g.values[size_t(v)];
        TS_USER_CHECK(!val.is_constant())
            << "graph '" << g.name << "': input '" << val.name << "' is a constant";
        TS_USER_CHECK(val.producer == -1)
            << "graph '" << g.name << "': input '" << val.name << "' is produced by a node";
    }
    for (size_t ni = 0; ni < g.nodes.size(); ++ni) {
        const Node& n = g.nodes[ni];
        const std::string where = "node '" + n.name + "' (" + n.op + ")";
        const OpDef* def = find_op(n.op);
        TS_USER_CHECK(def != nullptr) << where << ": op '" << n.op << "' is not registered";
        for (size_t i = 0; i < n.inputs.size(); ++i) {
            int v = n.inputs[i];
            TS_USER_CHECK(v >= 0 && v < nv)
                << where << ": input " << i << " index " << v << " out of range";
            const Value& val = g.values[size_t(v)];
            bool available = val.is_constant() || graph_inputs.count(v) ||
                             (produced_by[size_t(v)] >= 0 && produced_by[size_t(v)] < int(ni));
            TS_USER_CHECK(available)
                << where << ": input '" << val.name
                << "' is not a graph input, a constant or produced by an earlier node";
        }
        TS_USER_CHECK(!n.outputs.empty()) << where << ": has no outputs";
        for (int v : n.outputs) {
            TS_USER_CHECK(v >= 0 && v < nv) << where << ": output index " << v << " out of range";
            const Value& val = g.values[size_t(v)];
            TS_USER_CHECK(produced_by[size_t(v)] == -1)
                << where << ": value '" << val.name << "' is already produced by node '"
                << g.nodes[size_t(produced_by[size_t(v)])].name << "'";
            TS_USER_CHECK(!val.is_constant() && !graph_inputs.count(v))
                << where << ": output '" << val.name << "' is a graph input or constant";
            TS_USER_CHECK(val.producer == int(ni))
                << where << ": output '" << val.name << "' records producer " << val.producer;
            produced_by[size_t(v)] = int(ni);
        }
        std::vector<TensorType> expected = infer_types(g, n);
        TS_USER_CHECK(expected.size() == n.outputs.size())
            << where << ": op gives " << expected.size() << " outputs, node has "
            << n.outputs.size();
        for (size_t i = 0; i < expected.size(); ++i) {
            const Value& val = g.values[size_t(n.outputs[i])];
            TS_USER_CHECK(val.type == expected[i])
                << where << ": output '" << val.name << "' has type " << val.type.str()
                << " but the op gives " << expected[i].str();
        }
    }
    for (int v : g.outputs) {
        TS_USER_CHECK(v >= 0 && v < nv)
            << "graph '" << g.name << "': output index " << v << " out of range";
        const Value& val = g.values[size_t(v)];
        TS_USER_CHECK(val.is_constant() || graph_inputs.count(v) || produced_by[size_t(v)] >= 0)
            << "graph '" << g.name << "': output '" << val.name << "' is never produced";
    }
    for (int v = 0; v < nv; ++v) {
        const Value& val = g.values[size_t(v)];
        TS_USER_CHECK(val.producer == produced_by[size_t(v)])
            << "graph '" << g.name << "': value '" << val.name << "' records producer "
            << val.producer << " but is produced by node " << produced_by[size_t(v)];
        if (val.is_constant()) {
            TS_USER_CHECK(int64_t(val.constant->bytes.size()) == val.type.num_bytes())
                << "graph '" << g.name << "': constant '" << val.name << "' holds "
                << val.constant->bytes.size() << " bytes, its type " << val.type.str() << " needs "
                << val.type.num_bytes();
        }
    }
}

// ---- FLOPs -----------------------------------------------------------------

namespace {

// The elements of `t` that hold data: a blocked-layout tensor (N, C/b, H, W, b)
// of a node that records its logical channel count ("channels", set by
// convert_layout) pads C up to a multiple of b; the padding is not work.
double logical_elements(const TensorType& t, const Node& n) {
    const double all = double(t.num_elements());
    if (t.shape.size() != 5 || !n.attrs.count("channels")) return all;
    const double padded = double(t.shape[1] * t.shape[4]);
    return padded > 0 ? all * double(n.attr_int("channels", 0)) / padded : all;
}

}  // namespace

// FLOPs from each op's definition: the multiply-adds of the mathematical
// operation on the logical shapes, not the work of a transformed kernel
// (padded channels, Winograd's transforms): see node_work_flops for that.
double node_flops(const Graph& g, const Node& n) {
    auto type_of = [&](int v) -> const TensorType& { return g.values.at(size_t(v)).type; };
    if (n.outputs.empty()) return 0;
    const TensorType& out = type_of(n.outputs[0]);
    const double out_elems = logical_elements(out, n);
    const std::string& op = n.op;
    if (op == "nn.conv2d") {
        if (n.inputs.size() < 2) return 0;
        const auto& w = type_of(n.inputs[1]).shape;  // (K, C/groups, R, S)
        if (w.size() != 4) return 0;
        double flops = 2.0 * out_elems * double(w[1] * w[2] * w[3]);
        if (n.inputs.size() > 2) flops += out_elems;  // bias
        return flops;
    }
    if ((op == "nn.conv2d_NCHWc" || op == "nn.conv2d_winograd_NCHWc") && n.inputs.size() >= 2 &&
        type_of(n.inputs[1]).shape.size() == 6) {
        // Weights (OCo, ICo, KH, KW, ib, ob), or Winograd's U (alpha, alpha,
        // OCo, ICo, ib, ob) of a 3x3 conv: the direct conv's multiply-adds.
        const auto& w = type_of(n.inputs[1]).shape;
        const bool winograd = op == "nn.conv2d_winograd_NCHWc";
        const double kernel = winograd ? 9.0 : double(w[2] * w[3]);
        const double padded_in = winograd ? double(w[3] * w[4]) : double(w[1] * w[4]);
        const int64_t groups = n.attr_int("groups", 1);
        const double in_per_group =
            n.attrs.count("in_channels") ? double(n.attr_int("in_channels", 1) / std::max<int64_t>(groups, 1))
            : groups > 1                 ? 1.0
                                         : padded_in;
        return 2.0 * out_elems * in_per_group * kernel + (n.inputs.size() > 2 ? out_elems : 0);
    }
    if (op == "nn.matmul") {
        if (n.inputs.size() < 2) return 0;
        const auto& a = type_of(n.inputs[0]).shape;
        if (a.empty()) return 0;
        return 2.0 * out_elems * double(a.back());
    }
    if (is_integer_gemm(op)) {
        // Integer multiply-adds of the packed bytes (4 per word), counted as
        // 2 operations each like a float product's.
        if (n.inputs.size() < 2) return 0;
        const auto& a = type_of(n.inputs[0]).shape;
        if (a.empty()) return 0;
        return 2.0 * out_elems * 4.0 * double(a.back());
    }
    if (op == "nn.gemm") {
        if (n.inputs.size() < 2) return 0;
        const auto& a = type_of(n.inputs[0]).shape;
        if (a.size() != 2) return 0;
        int64_t k = n.attr_int("transA", 0) ? a[0] : a[1];
        double flops = 2.0 * out_elems * double(k);
        if (n.inputs.size() > 2) flops += 2.0 * out_elems;  // alpha*AB + beta*C
        return flops;
    }
    if (op == "add" || op == "subtract" || op == "multiply" || op == "divide" || op == "nn.relu")
        return out_elems;
    // A window's compares or adds per output (an average's division counted
    // with them).
    if (op == "nn.max_pool2d" || op == "nn.max_pool2d_NCHWc" || op == "nn.max_pool2d_indices" ||
        op == "nn.avg_pool2d" || op == "nn.max_pool3d" || op == "nn.avg_pool3d") {
        const bool three = op == "nn.max_pool3d" || op == "nn.avg_pool3d";
        std::vector<int64_t> k = n.attr_ints("kernel", std::vector<int64_t>(three ? 3 : 2, 1));
        double window = 1;
        for (int64_t d : k) window *= double(d);
        return out_elems * window;
    }
    if (op == "nn.global_avg_pool2d" || op == "nn.global_avg_pool2d_NCHWc" ||
        op == "nn.global_max_pool2d") {
        if (n.inputs.empty()) return 0;
        return logical_elements(type_of(n.inputs[0]), n);
    }
    if (op == "nn.softmax") return 5.0 * out_elems;
    if (op == "nn.attention" && n.inputs.size() >= 3) {
        // What the ops it replaces count: two products, the scale, the mask's
        // add and the softmax over the scores.
        const auto& b = type_of(n.inputs[1]).shape;  // (.., D, Sk)
        if (b.size() < 2) return 0;
        const double d = double(b[b.size() - 2]), sk = double(b.back());
        const double scores = out_elems / double(type_of(n.outputs[0]).shape.back()) * sk;
        const double scale = n.attr_float("scale", 1.0) != 1.0 ? scores : 0;
        const double mask = n.inputs.size() > 3 && !n.attrs.count("mask_fill") ? scores : 0;
        return 2.0 * scores * d + 2.0 * out_elems * sk + scale + mask + 5.0 * scores;
    }
    return 0;  // reshape and other data movement
}

double node_work_flops(const Graph& g, const Node& n) {
    if (n.op != "nn.conv2d_winograd_NCHWc" || n.inputs.size() < 2 || n.outputs.empty())
        return node_flops(g, n);
    // Winograd F(m x m, 3 x 3): per output tile of m x m pixels, the batched
    // product of alpha^2 (alpha = m + 2) input and weight transforms over the
    // (padded) channels, plus the input and output transforms.
    const auto& u = g.values.at(size_t(n.inputs[1])).type.shape;  // alpha, alpha, OCo, ICo, ib, ob
    const auto& y = g.values.at(size_t(n.outputs[0])).type.shape;  // N, OCo, H, W, ob
    if (u.size() != 6 || y.size() != 5) return node_flops(g, n);
    const int64_t m = n.attr_int("tile", 2);
    const double alpha = double(u[0]);
    const double tiles = double(y[0]) * double((y[2] + m - 1) / m) * double((y[3] + m - 1) / m);
    const double ic = double(u[3] * u[4]), oc = double(u[2] * u[5]);
    const double product = 2.0 * tiles * alpha * alpha * ic * oc;
    const double transforms = tiles * (ic * 2.0 * alpha * alpha * alpha + oc * 2.0 * alpha * alpha * double(m));
    return product + transforms + (n.inputs.size() > 2 ? double(g.values.at(size_t(n.outputs[0])).type.num_elements()) : 0);
}

}  // namespace tessera::graph
