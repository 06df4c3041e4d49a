// The op registry: a table filled on first use (no static initialisers that a
// static-library link could drop) plus shared shape-rule helpers.
#include "engine/graph/op_registry.h"

#include <map>
#include <memory>
#include <mutex>
#include <sstream>

#include "engine/core/error.h"
#include "engine/graph/op_table.h"

namespace tessera::graph {

const char* op_pattern_name(OpPattern p) {
    switch (p) {
        case OpPattern::ElemWise:
            return "ElemWise";
        case OpPattern::Broadcast:
            return "Broadcast";
        case OpPattern::Injective:
            return "Injective";
        case OpPattern::CommReduce:
            return "CommReduce";
        case OpPattern::OutEWiseFusable:
            return "OutEWiseFusable";
        case OpPattern::Opaque:
            return "Opaque";
    }
    return "Unknown";
}

namespace {

// Entries are heap-allocated so pointers handed out by find_op stay valid when
// more ops are registered; re-registering replaces an entry's contents.
struct Registry {
    std::mutex mutex;
    std::map<std::string, std::unique_ptr<OpDef>> ops;
};

Registry& registry() {
    static Registry* r = [] {
        auto* reg = new Registry;
        std::vector<OpDef> table;
        detail::add_nn_ops(table);
        detail::add_tensor_ops(table);
        detail::add_math_ops(table);
        detail::add_reduce_ops(table);
        detail::add_transform_ops(table);
        detail::add_pool_deconv_ops(table);
        detail::add_layout_ops(table);
        detail::add_winograd_ops(table);
        detail::add_nn_nd_ops(table);
        detail::add_math_signal_ops(table);
        detail::add_index_ops(table);
        detail::add_dtype_ops(table);
        detail::add_int8_ops(table);
        for (OpDef& d : table) {
            std::string name = d.name;
            reg->ops[name] = std::make_unique<OpDef>(std::move(d));
        }
        return reg;
    }();
    return *r;
}

}  // namespace

const OpDef* find_op(const std::string& name) {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    auto it = r.ops.find(name);
    return it == r.ops.end() ? nullptr : it->second.get();
}

std::vector<const OpDef*> all_ops() {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    std::vector<const OpDef*> out;
    for (auto& [name, def] : r.ops) out.push_back(def.get());
    return out;
}

void register_op(OpDef def) {
    TS_CHECK(!def.name.empty()) << "register_op: empty op name";
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    auto it = r.ops.find(def.name);
    if (it != r.ops.end()) {
        *it->second = std::move(def);
    } else {
        std::string name = def.name;
        r.ops[name] = std::make_unique<OpDef>(std::move(def));
    }
}

std::vector<TensorType> infer_types(const Graph& g, const Node& n) {
    const OpDef* def = find_op(n.op);
    TS_USER_CHECK(def != nullptr) << detail::where(n) << ": op '" << n.op << "' is not registered";
    TS_CHECK(def->infer) << "op '" << n.op << "' has no shape rule";
    std::vector<TensorType> in;
    for (int v : n.inputs) {
        TS_USER_CHECK(v >= 0 && v < int(g.values.size()))
            << detail::where(n) << ": input index " << v << " out of range";
        in.push_back(g.values[size_t(v)].type);
    }
    return def->infer(n, in);
}

namespace detail {

std::string where(const Node& n) { return "node '" + n.name + "' (" + n.op + ")"; }

std::vector<int64_t> ints_of_size(const Node& n, const std::string& key, size_t size, int64_t dflt) {
    std::vector<int64_t> v = n.attr_ints(key, std::vector<int64_t>(size, dflt));
    TS_USER_CHECK(v.size() == size)
        << where(n) << ": attribute '" << key << "' needs " << size << " values, got " << v.size();
    return v;
}

int64_t window_out(const Node& n, int64_t in, int64_t pad_lo, int64_t pad_hi, int64_t kernel,
                   int64_t stride, int64_t dilation, bool ceil_mode) {
    TS_USER_CHECK(stride >= 1 && dilation >= 1 && kernel >= 1 && pad_lo >= 0 && pad_hi >= 0)
        << where(n) << ": strides, dilations and kernel must be positive and pads non-negative";
    int64_t span = in + pad_lo + pad_hi - dilation * (kernel - 1) - 1;
    TS_USER_CHECK(span >= 0) << where(n) << ": window of extent " << dilation * (kernel - 1) + 1
                             << " does not fit the padded input extent " << in + pad_lo + pad_hi;
    int64_t out = (ceil_mode ? (span + stride - 1) / stride : span / stride) + 1;
    // A last window that starts inside the end padding is dropped (PyTorch, ONNX >= 1.15).
    if (ceil_mode && (out - 1) * stride >= in + pad_lo) --out;
    return out;
}

std::string shape_str(const std::vector<int64_t>& s) {
    std::ostringstream os;
    os << "(";
    for (size_t i = 0; i < s.size(); ++i) os << (i ? ", " : "") << s[i];
    os << ")";
    return os.str();
}

void expect_arity(const Node& n, const std::vector<TensorType>& types, size_t lo, size_t hi) {
    TS_USER_CHECK(types.size() >= lo && types.size() <= hi)
        << where(n) << ": expects "
        << (lo == hi ? std::to_string(lo) : std::to_string(lo) + " to " + std::to_string(hi))
        << " inputs, got " << types.size();
}

void expect_float(const Node& n, const std::vector<TensorType>& types, size_t i, int rank) {
    const TensorType& t = types.at(i);
    TS_USER_CHECK(t.dtype == DType::Float32)
        << where(n) << ": input " << i << " must be float32, got " << t.str();
    if (rank >= 0) {
        TS_USER_CHECK(int(t.shape.size()) == rank)
            << where(n) << ": input " << i << " must have rank " << rank << ", got " << t.str();
    }
}

std::vector<int64_t> broadcast_shapes(const Node& n, const std::vector<int64_t>& a,
                                      const std::vector<int64_t>& b) {
    size_t rank = std::max(a.size(), b.size());
    std::vector<int64_t> out(rank);
    for (size_t i = 0; i < rank; ++i) {
        int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
        int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
        TS_USER_CHECK(da == db || da == 1 || db == 1)
            << where(n) << ": shapes " << shape_str(a) << " and " << shape_str(b)
            << " do not broadcast";
        out[i] = da == 1 ? db : da;
    }
    return out;
}

}  // namespace detail
}  // namespace tessera::graph
