// ai.onnx.preview.training.Gradient: reverse-mode differentiation of the
// already-imported graph from y back to xs, emitting the adjoint graph ops.
#include "engine/frontend/onnx/onnx_gradient.h"

#include <set>

#include "engine/core/error.h"
#include "engine/frontend/onnx/onnx_index.h"

namespace tessera::frontend::onnx_import {

namespace {

using graph::DType;
using Attrs = std::map<std::string, graph::AttrValue>;

/// Builds the adjoints of one Gradient node: grads[v] is the value holding
/// d(sum of y)/dv, accumulated over every use of v.
class Differentiator {
public:
    explicit Differentiator(NodeCtx& ctx) : m_ctx(ctx) {}

    /// Differentiates y with respect to the values `xs`; returns one gradient value per x.
    std::vector<int> run(int y, const std::vector<int>& xs) {
        const graph::Graph& g = m_ctx.imp.g;
        for (int x : xs) m_depends.insert(x);
        const size_t forward_nodes = g.nodes.size();
        for (size_t i = 0; i < forward_nodes; ++i) {
            bool dep = false;
            for (int v : g.nodes[i].inputs) dep = dep || m_depends.count(v);
            if (dep)
                for (int v : g.nodes[i].outputs) m_depends.insert(v);
        }
        const graph::TensorType yt = m_ctx.type_of(y);
        TS_USER_CHECK(yt.dtype == DType::Float32 || yt.dtype == DType::Float64)
            << m_ctx.where() << ": y must be a float tensor, got " << yt.str();
        if (m_depends.count(y)) {
            std::vector<double> ones(size_t(yt.num_elements()), 1.0);
            m_grads[y] = constant(make_tensor(yt, ones));
            const int start = g.values[size_t(y)].producer;
            for (int i = start; i >= 0; --i) {
                graph::Node n = m_ctx.imp.g.nodes[size_t(i)];  // copy: emitting appends nodes
                bool wanted = false;
                for (int v : n.outputs) wanted = wanted || m_grads.count(v);
                if (wanted) backprop(n);
            }
        }
        std::vector<int> out;
        for (int x : xs) {
            auto it = m_grads.find(x);
            if (it != m_grads.end()) {
                out.push_back(it->second);
                continue;
            }
            const graph::TensorType xt = m_ctx.type_of(x);  // y does not depend on x
            out.push_back(constant(make_tensor(xt, std::vector<double>(size_t(xt.num_elements()), 0.0))));
        }
        return out;
    }

private:
    int constant(ConstTensor c) {
        return m_ctx.imp.value(m_ctx.imp.define_helper_constant(m_ctx.name, std::move(c)),
                               m_ctx.where());
    }
    int scalar(int like, double v) {
        return constant(make_tensor({m_ctx.type_of(like).dtype, {}}, {v}));
    }
    int op(const std::string& name, std::vector<int> in, Attrs attrs = {}) {
        return m_ctx.emit_internal(name, std::move(in), std::move(attrs));
    }
    const std::vector<int64_t>& shape(int v) const { return m_ctx.type_of(v).shape; }

    // Sums g over the axes that numpy broadcasting added to reach g's shape from `to`.
    int unbroadcast(int g, const std::vector<int64_t>& to) {
        const std::vector<int64_t> gs = shape(g);
        if (gs == to) return g;
        TS_CHECK(gs.size() >= to.size()) << "unbroadcast to a higher rank";
        const size_t lead = gs.size() - to.size();
        std::vector<int64_t> axes;
        for (size_t i = 0; i < gs.size(); ++i)
            if (i < lead || (to[i - lead] == 1 && gs[i] != 1)) axes.push_back(int64_t(i));
        int r = g;
        if (!axes.empty()) r = op("reduce_sum", {g}, {{"axes", axes}, {"keepdims", int64_t(0)}});
        return shape(r) == to ? r : op("reshape", {r}, {{"newshape", to}});
    }

    // Adds gradient contribution `g` to input value v (summed over broadcasting).
    void accumulate(int v, int g) {
        g = unbroadcast(g, shape(v));
        auto it = m_grads.find(v);
        m_grads[v] = it == m_grads.end() ? g : op("add", {it->second, g});
    }

    // Inverse of reduce_sum/reduce_mean over axes: g viewed with the reduced
    // axes kept as 1, broadcast back to x's shape.
    int unreduce(const graph::Node& n, int g, int x) {
        std::vector<int64_t> keep = shape(x);
        for (int64_t a : n.attr_ints("axes")) keep[size_t(a)] = 1;
        int r = op("reshape", {g}, {{"newshape", keep}});
        return op("broadcast_to", {r}, {{"shape", shape(x)}});
    }

    // Swaps the last two axes.
    int transpose_last(int v) {
        std::vector<int64_t> perm;
        for (size_t i = 0; i < shape(v).size(); ++i) perm.push_back(int64_t(i));
        std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
        return op("transpose", {v}, {{"axes", perm}});
    }

    void backprop(const graph::Node& n) {
        TS_USER_CHECK(n.outputs.size() == 1)
            << m_ctx.where() << ": cannot differentiate through node '" << n.name << "' (op "
            << n.op << "): it has several outputs";
        const int y = n.outputs[0];
        const int g = m_grads.at(y);
        const std::vector<int>& in = n.inputs;
        auto need = [&](size_t i) { return i < in.size() && m_depends.count(in[i]) > 0; };
        const std::string& o = n.op;
        if (o == "add" || o == "subtract") {
            if (need(0)) accumulate(in[0], g);
            if (need(1)) accumulate(in[1], o == "add" ? g : op("negative", {g}));
        } else if (o == "multiply") {
            if (need(0)) accumulate(in[0], op("multiply", {g, in[1]}));
            if (need(1)) accumulate(in[1], op("multiply", {g, in[0]}));
        } else if (o == "divide") {
            if (need(0)) accumulate(in[0], op("divide", {g, in[1]}));
            if (need(1))  // d(a/b)/db = -(a/b)/b
                accumulate(in[1], op("negative", {op("divide", {op("multiply", {g, y}), in[1]})}));
        } else if (o == "negative") {
            accumulate(in[0], op("negative", {g}));
        } else if (o == "exp") {
            accumulate(in[0], op("multiply", {g, y}));
        } else if (o == "log") {
            accumulate(in[0], op("divide", {g, in[0]}));
        } else if (o == "sqrt") {
            accumulate(in[0], op("divide", {op("multiply", {g, scalar(g, 0.5)}), y}));
        } else if (o == "tanh") {  // 1 - y^2
            int d = op("subtract", {scalar(y, 1.0), op("multiply", {y, y})});
            accumulate(in[0], op("multiply", {g, d}));
        } else if (o == "sigmoid") {  // y (1 - y)
            int d = op("multiply", {y, op("subtract", {scalar(y, 1.0), y})});
            accumulate(in[0], op("multiply", {g, d}));
        } else if (o == "nn.relu") {
            int pos = op("greater", {in[0], scalar(in[0], 0.0)});
            accumulate(in[0], op("where", {pos, g, scalar(g, 0.0)}));
        } else if (o == "reshape") {
            accumulate(in[0], op("reshape", {g}, {{"newshape", shape(in[0])}}));
        } else if (o == "transpose") {
            std::vector<int64_t> perm = n.attr_ints("axes"), inv(perm.size());
            for (size_t i = 0; i < perm.size(); ++i) inv[size_t(perm[i])] = int64_t(i);
            accumulate(in[0], op("transpose", {g}, {{"axes", inv}}));
        } else if (o == "broadcast_to") {
            accumulate(in[0], g);
        } else if (o == "reduce_sum" || o == "reduce_mean") {
            int r = unreduce(n, g, in[0]);
            if (o == "reduce_mean") {
                double count = double(m_ctx.type_of(in[0]).num_elements()) /
                               double(std::max<int64_t>(m_ctx.type_of(y).num_elements(), 1));
                r = op("multiply", {r, scalar(r, 1.0 / count)});
            }
            accumulate(in[0], r);
        } else if (o == "where") {
            int zero = scalar(g, 0.0);
            if (need(1)) accumulate(in[1], op("where", {in[0], g, zero}));
            if (need(2)) accumulate(in[2], op("where", {in[0], zero, g}));
        } else if (o == "nn.matmul" && shape(in[0]).size() >= 2 && shape(in[1]).size() >= 2) {
            if (need(0)) accumulate(in[0], op("nn.matmul", {g, transpose_last(in[1])}));
            if (need(1)) accumulate(in[1], op("nn.matmul", {transpose_last(in[0]), g}));
        } else {
            TS_USER_FAIL() << m_ctx.where() << ": cannot differentiate through node '" << n.name
                           << "' (op " << n.op << "): no gradient rule for it";
        }
    }

    NodeCtx& m_ctx;
    std::set<int> m_depends;    // values that depend on some x
    std::map<int, int> m_grads;  // value -> its accumulated gradient value
};

void convert_gradient(NodeCtx& ctx) {
    std::vector<std::string> xs;
    for (const auto& a : ctx.node.attribute())
        if (a.name() == "xs") xs.assign(a.strings().begin(), a.strings().end());
    const std::string y = ctx.attr_str("y");
    TS_USER_CHECK(!xs.empty() && !y.empty())
        << ctx.where() << ": attributes 'xs' (a list of names) and 'y' (a name) are required";
    TS_USER_CHECK(ctx.node.output_size() == int(xs.size()))
        << ctx.where() << ": has " << ctx.node.output_size() << " outputs for " << xs.size()
        << " names in 'xs'";
    auto lookup = [&](const std::string& name, const char* role) {
        auto it = ctx.imp.values.find(name);
        TS_USER_CHECK(it != ctx.imp.values.end() || ctx.imp.constants.count(name))
            << ctx.where() << ": " << role << " '" << name << "' is not a graph input or an earlier node's output";
        return ctx.imp.value(name, ctx.where());
    };
    std::vector<int> xv;
    for (const auto& x : xs) {
        int v = lookup(x, "x");
        // Ops on constants fold at import: the gradient path through them is gone.
        TS_USER_CHECK(!ctx.imp.g.values[size_t(v)].is_constant())
            << ctx.where() << ": x '" << x << "' is a constant; only gradients with respect to "
            << "graph inputs or computed values are supported";
        xv.push_back(v);
    }
    int yv = lookup(y, "y");
    Differentiator d(ctx);
    std::vector<int> grads = d.run(yv, xv);
    for (size_t k = 0; k < grads.size(); ++k) {
        if (ctx.node.output(int(k)).empty()) continue;
        alias_name(ctx.imp, ctx.node.output(int(k)), ctx.imp.g.values[size_t(grads[k])].name,
                   ctx.where());
    }
}

}  // namespace

void add_gradient_converters(ConverterTable& t) {
    t["ai.onnx.preview.training.Gradient"] = convert_gradient;
}

}  // namespace tessera::frontend::onnx_import
