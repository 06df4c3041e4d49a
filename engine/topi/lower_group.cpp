// Fused-group lowering: chain the computes of the group's nodes, inline the
// node-boundary injective stages (te-level compute_inline: the producer's
// body is substituted into every read), and create one PrimFunc.
#include "engine/topi/lower_group.h"

#include <cctype>
#include <map>
#include <set>

#include "engine/core/error.h"
#include "engine/te/tensor.h"
#include "engine/tir/functor.h"
#include "engine/topi/topi.h"

namespace tessera::topi {

namespace {

constexpr int64_t kMaxInlineCopies = 64;
constexpr int64_t kMaxInlineGathers = 8;

std::string sanitize(const std::string& s) {
    std::string r = !s.empty() && std::isdigit(static_cast<unsigned char>(s[0])) ? "k_" : "";
    for (char c : s) r += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_';
    if (r.empty()) r.push_back('_');
    return r;
}

void topo_collect(const te::Tensor& t, std::vector<te::Tensor>& order,
                  std::set<const te::TensorNode*>& seen) {
    if (!seen.insert(t.get()).second) return;
    for (const te::Tensor& in : t->inputs) topo_collect(in, order, seen);
    order.push_back(t);
}

// What substituting the inlined stages into a body costs: the copies of stage
// bodies it then holds, the buffer reads it makes, how many of them are at
// computed positions (gathers), and how often it uses its own axes.
struct Expansion {
    int64_t copies = 0;
    int64_t loads = 0;
    int64_t gathers = 0;
    int64_t axis_uses = 0;
};

int64_t saturating(int64_t v) { return std::min<int64_t>(v, int64_t(1) << 30); }

bool reads_a_buffer(const std::vector<tir::Expr>& indices) {
    bool found = false;
    for (const tir::Expr& i : indices)
        tir::post_order_visit(tir::Evaluate::make(i), [&](const tir::Object* o) {
            found = found || o->node_type == tir::NodeType::BufferLoad;
        });
    return found;
}

// A load of an inlined stage S at index I becomes S's body with its axes
// replaced by I: S's copies, plus I's own once per use S makes of its axes
// (a gather whose index is the previous gather: the index copies multiply).
class ExpansionCounter : public tir::IRVisitor {
public:
    ExpansionCounter(const std::set<const tir::Variable*>& axes,
                     const std::map<const tir::BufferNode*, Expansion>& inlined)
        : m_axes(axes), m_inlined(inlined) {}
    Expansion total;

protected:
    using tir::IRVisitor::visit;
    void visit(const tir::Variable* op) override {
        if (m_axes.count(op)) total.axis_uses = saturating(total.axis_uses + 1);
    }
    void visit(const tir::BufferLoad* op) override {
        ExpansionCounter index(m_axes, m_inlined);
        for (const tir::Expr& i : op->indices) index.visit_expr(i);
        auto it = m_inlined.find(op->buffer.get());
        const bool inlined = it != m_inlined.end();
        const Expansion s = inlined ? it->second : Expansion{0, 1, 0, 1};
        auto add = [](int64_t& to, int64_t own, int64_t uses, int64_t per_use) {
            to = saturating(to + own + saturating(uses * per_use));
        };
        add(total.copies, s.copies, s.axis_uses, index.total.copies);
        add(total.loads, s.loads, s.axis_uses, index.total.loads);
        // At a computed index, the loads of an inlined stage's body become gathers too.
        const bool computed = reads_a_buffer(op->indices);
        add(total.gathers, inlined ? (computed ? s.loads : s.gathers) : (computed ? 1 : 0),
            s.axis_uses, index.total.gathers);
        add(total.axis_uses, 0, s.axis_uses, index.total.axis_uses);
    }

private:
    const std::set<const tir::Variable*>& m_axes;
    const std::map<const tir::BufferNode*, Expansion>& m_inlined;
};

int64_t elements(const te::Tensor& t) {
    int64_t n = 1;
    for (int64_t d : t->shape) n = saturating(n * d);
    return n;
}

// Rewrites reads of old stages: loads of an inlined stage become its body at
// the read's indices; loads of a rebuilt stage read the new buffer.
class StageRewriter : public tir::IRMutator {
public:
    std::map<const tir::BufferNode*, te::Tensor> rebuilt;    // old buffer -> new tensor
    std::map<const tir::BufferNode*, te::Tensor> inlined;    // old buffer -> old tensor
    std::map<const tir::BufferNode*, tir::Expr> inline_body;  // old buffer -> rewritten body

    tir::Expr rewrite(const tir::Expr& e) { return mutate(e); }

protected:
    using tir::IRMutator::visit;
    tir::Expr visit(const tir::BufferLoad* op) override {
        bool changed = false;
        std::vector<tir::Expr> idx = mutate_exprs(op->indices, &changed);
        if (auto it = inlined.find(op->buffer.get()); it != inlined.end()) {
            const te::Tensor& t = it->second;
            std::map<const tir::Variable*, tir::Expr> vmap;
            for (size_t i = 0; i < t->axis.size(); ++i) vmap[t->axis[i].var.get()] = idx[i];
            return tir::substitute(inline_body.at(op->buffer.get()), vmap);
        }
        if (auto it = rebuilt.find(op->buffer.get()); it != rebuilt.end())
            return tir::BufferLoad::make(it->second->buffer, std::move(idx));
        if (!changed) return tir::Expr(op);
        return tir::BufferLoad::make(op->buffer, std::move(idx));
    }
};

// The tensors whose buffers `body` loads, in order of first appearance.
std::vector<te::Tensor> loaded_tensors(const tir::Expr& body,
                                       const std::map<const tir::BufferNode*, te::Tensor>& by_buf) {
    std::vector<te::Tensor> out;
    std::set<const tir::BufferNode*> seen;
    tir::post_order_visit(tir::Evaluate::make(body), [&](const tir::Object* n) {
        if (n->node_type != tir::NodeType::BufferLoad) return;
        const auto* load = static_cast<const tir::BufferLoad*>(n);
        if (!seen.insert(load->buffer.get()).second) return;
        auto it = by_buf.find(load->buffer.get());
        TS_CHECK(it != by_buf.end()) << "lower_group: a stage reads buffer '"
                                     << load->buffer->name << "' that no tensor owns";
        out.push_back(it->second);
    });
    return out;
}

}  // namespace

std::string group_kernel_name(const graph::Graph& g, const std::vector<int>& nodes) {
    TS_CHECK(!nodes.empty()) << "group_kernel_name: empty group";
    if (nodes.size() == 1) return kernel_name(g, nodes[0]);
    std::string name = "fused";
    for (size_t i = 0; i < nodes.size() && i < 3; ++i)
        name += "_" + sanitize(g.nodes[size_t(nodes[i])].name.empty()
                                   ? g.nodes[size_t(nodes[i])].op
                                   : g.nodes[size_t(nodes[i])].name);
    if (nodes.size() > 3) name += "_and_" + std::to_string(nodes.size() - 3);
    return name;
}

LoweredGroup lower_group(const graph::Graph& g, const std::vector<int>& nodes) {
    TS_CHECK(!nodes.empty()) << "lower_group: empty group";
    if (nodes.size() == 1) {
        const graph::Node& n = g.nodes[size_t(nodes[0])];
        LoweredGroup r;
        r.func = lower_node(g, nodes[0]);
        r.inputs = n.inputs;
        r.outputs = n.outputs;
        r.args = n.inputs;
        r.args.insert(r.args.end(), n.outputs.begin(), n.outputs.end());
        return r;
    }
    std::set<int> in_group(nodes.begin(), nodes.end());
    std::set<int> produced;
    for (int i : nodes) {
        TS_CHECK(i >= 0 && i < int(g.nodes.size())) << "lower_group: node index " << i;
        for (int v : g.nodes[size_t(i)].outputs) produced.insert(v);
    }
    LoweredGroup r;
    std::set<int> seen_inputs;
    for (int i : nodes)
        for (int v : g.nodes[size_t(i)].inputs)
            if (!produced.count(v) && seen_inputs.insert(v).second) r.inputs.push_back(v);
    std::set<int> graph_outputs(g.outputs.begin(), g.outputs.end());
    std::set<int> read_outside;
    for (int j = 0; j < int(g.nodes.size()); ++j)
        if (!in_group.count(j))
            for (int v : g.nodes[size_t(j)].inputs) read_outside.insert(v);
    for (int i : nodes)
        for (int v : g.nodes[size_t(i)].outputs)
            if (graph_outputs.count(v) || read_outside.count(v)) r.outputs.push_back(v);
    TS_CHECK(!r.outputs.empty()) << "lower_group: the group of node '"
                                 << g.nodes[size_t(nodes.back())].name << "' has no output";

    // 1. Chain the computes: placeholders for the inputs, node by node.
    std::map<int, te::Tensor> tensor_of;
    std::map<std::string, int> used;
    std::vector<te::Tensor> placeholders;
    for (int v : r.inputs) {
        const graph::Value& val = g.values[size_t(v)];
        std::string name = sanitize(val.name);
        if (int k = used[name]++; k > 0) name.append("_").append(std::to_string(k));
        te::Tensor t = te::placeholder(val.type.shape, to_tir(val.type.dtype), name);
        tensor_of[v] = t;
        placeholders.push_back(t);
    }
    std::set<const te::TensorNode*> boundary;  // node outputs
    for (int i : nodes) {
        const graph::Node& n = g.nodes[size_t(i)];
        std::vector<te::Tensor> ins;
        for (int v : n.inputs) ins.push_back(tensor_of.at(v));
        std::vector<graph::TensorType> types;
        for (int v : n.outputs) types.push_back(g.values[size_t(v)].type);
        std::vector<te::Tensor> outs = compute_node(n, ins, types);
        for (size_t k = 0; k < outs.size(); ++k) {
            tensor_of[n.outputs[k]] = outs[k];
            boundary.insert(outs[k].get());
        }
    }
    std::set<const te::TensorNode*> is_output;
    for (int v : r.outputs) is_output.insert(tensor_of.at(v).get());

    // 2. Rebuild every compute stage in producer-first order.
    std::vector<te::Tensor> order;
    std::set<const te::TensorNode*> seen;
    for (int v : r.outputs) topo_collect(tensor_of.at(v), order, seen);
    StageRewriter rw;
    std::map<const tir::BufferNode*, te::Tensor> by_buf;
    for (const te::Tensor& p : placeholders) by_buf[p->buffer.get()] = p;
    std::set<std::string> stage_names;
    for (const te::Tensor& p : placeholders) stage_names.insert(p.name());
    // Elements read at computed positions (gathers) from each stage, by all
    // the stages that read it.
    std::map<const tir::BufferNode*, int64_t> gathered;
    for (const te::Tensor& t : order) {
        if (t->is_placeholder) continue;
        tir::post_order_visit(tir::Evaluate::make(t->body), [&](const tir::Object* o) {
            if (o->node_type != tir::NodeType::BufferLoad) return;
            const auto* load = static_cast<const tir::BufferLoad*>(o);
            if (reads_a_buffer(load->indices))
                gathered[load->buffer.get()] =
                    saturating(gathered[load->buffer.get()] + elements(t));
        });
    }
    // A stage that only moves elements (a reshape, a transpose) passes the
    // gathers of it on to what it reads.
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
        const te::Tensor& t = *it;
        const auto* load = t->is_placeholder ? nullptr : t->body.as<tir::BufferLoad>();
        if (load && gathered.count(t->buffer.get()))
            gathered[load->buffer.get()] =
                saturating(gathered[load->buffer.get()] + gathered[t->buffer.get()]);
    }
    // Whether a node-boundary stage is substituted into its readers or
    // computed into its own buffer. It is computed when
    // - its expanded body (ExpansionCounter) would hold more than
    //   kMaxInlineCopies stage bodies (64: no kernel of the corpus or the bench
    //   models changes but two LSTM cells, which time the same), or more than
    //   kMaxInlineGathers reads at computed positions: a chain of gathers,
    //   each indexed by the one before and using its index several times
    //   (a tree ensemble's levels), grew exponentially, until the compiler
    //   ran out of memory, and LLVM does not merge the repeated gathers;
    // - the reads its body would make, times the reads of it at computed
    //   positions, outnumber its elements: every such read would compute it
    //   again with gathers of what it reads (a tree ensemble's branch table,
    //   read once per level).
    std::map<const tir::BufferNode*, Expansion> copies;
    for (const te::Tensor& t : order) {
        if (t->is_placeholder) continue;
        bool reduce = t->body.as<tir::Reduce>() != nullptr;
        std::set<const tir::Variable*> axes;
        for (const te::IterVar& a : t->axis) axes.insert(a.var.get());
        ExpansionCounter counter(axes, copies);
        counter.visit_expr(t->body);
        Expansion own = counter.total;
        own.copies = saturating(own.copies + 1);
        const bool cheap = own.copies <= kMaxInlineCopies && own.gathers <= kMaxInlineGathers &&
                           saturating(gathered[t->buffer.get()] * own.loads) <= elements(t);
        tir::Expr body = rw.rewrite(t->body);
        if (boundary.count(t.get()) && !reduce && !is_output.count(t.get()) && cheap) {
            rw.inlined[t->buffer.get()] = t;
            rw.inline_body[t->buffer.get()] = body;
            copies[t->buffer.get()] = own;
            continue;
        }
        auto node = std::make_shared<te::TensorNode>(*t.get());
        std::string name = t.name();
        for (int k = 1; stage_names.count(name); ++k) name = t.name() + "_" + std::to_string(k);
        stage_names.insert(name);
        node->name = name;
        node->buffer = tir::Buffer(name, t->dtype, t->buffer->shape);
        node->body = body;
        node->inputs = loaded_tensors(body, by_buf);
        te::Tensor nt(std::move(node));
        rw.rebuilt[t->buffer.get()] = nt;
        by_buf[nt->buffer.get()] = nt;
    }

    std::vector<te::Tensor> args = placeholders;
    for (int v : r.outputs) args.push_back(rw.rebuilt.at(tensor_of.at(v)->buffer.get()));
    r.func = te::create_prim_func(args, group_kernel_name(g, nodes));
    r.args = r.inputs;
    r.args.insert(r.args.end(), r.outputs.begin(), r.outputs.end());
    return r;
}

}  // namespace tessera::topi
