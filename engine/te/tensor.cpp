// Tensor expressions: placeholder, compute, reductions, and their lowering to
// a TensorIR-style PrimFunc with the default (naive) schedule.
#include "engine/te/tensor.h"

#include <algorithm>
#include <set>

#include "engine/core/error.h"
#include "engine/tir/functor.h"
#include "engine/tir/passes/simplify.h"

namespace tessera::te {

using namespace tir;

namespace {

// Tensors read while a compute() lambda runs; one frame per nested compute().
thread_local std::vector<std::vector<Tensor>> t_read_stack;

void record_read(const Tensor& t) {
    if (t_read_stack.empty()) return;
    std::vector<Tensor>& frame = t_read_stack.back();
    for (const Tensor& seen : frame)
        if (seen.same_as(t)) return;
    frame.push_back(t);
}

std::vector<Expr> shape_exprs(const std::vector<int64_t>& shape) {
    std::vector<Expr> out;
    for (int64_t d : shape) out.push_back(Expr(d));
    return out;
}

}  // namespace

Expr Tensor::operator()(const std::vector<Expr>& indices) const {
    TS_CHECK(m_ptr) << "read of an undefined tensor";
    TS_CHECK(indices.size() == m_ptr->shape.size())
        << "tensor " << m_ptr->name << " has rank " << m_ptr->shape.size() << " but is read with "
        << indices.size() << " indices";
    std::vector<Expr> idx;
    for (const Expr& i : indices) {
        TS_CHECK(i.defined() && i.dtype().is_integer())
            << "index into " << m_ptr->name << " is not an integer";
        idx.push_back(i.dtype() == DataType::int64() ? i : cast(DataType::int64(), i));
    }
    record_read(*this);
    return BufferLoad::make(m_ptr->buffer, std::move(idx));
}

const std::vector<int64_t>& Tensor::shape() const { return m_ptr->shape; }
DataType Tensor::dtype() const { return m_ptr->dtype; }
const std::string& Tensor::name() const { return m_ptr->name; }

Tensor placeholder(const std::vector<int64_t>& shape, DataType dtype, const std::string& name) {
    auto node = std::make_shared<TensorNode>();
    node->name = name;
    node->tag = "placeholder";
    node->shape = shape;
    node->dtype = dtype;
    node->buffer = Buffer(name, dtype, shape_exprs(shape));
    node->is_placeholder = true;
    return Tensor(std::move(node));
}

IterVar reduce_axis(int64_t extent, const std::string& name) {
    return IterVar{Var(name), Range{Expr(0), Expr(extent)}, IterKind::Reduce, ""};
}

Tensor compute(const std::vector<int64_t>& shape,
               const std::function<Expr(const std::vector<Var>&)>& f, const std::string& name,
               const std::string& tag) {
    auto node = std::make_shared<TensorNode>();
    std::vector<Var> vars;
    for (size_t i = 0; i < shape.size(); ++i) {
        std::string name = "i";
        name += std::to_string(i);
        Var v(name);
        vars.push_back(v);
        node->axis.push_back(IterVar{v, Range{Expr(0), Expr(shape[i])}, IterKind::Spatial, ""});
    }
    t_read_stack.emplace_back();
    Expr body;
    try {
        body = f(vars);
    } catch (...) {
        t_read_stack.pop_back();
        throw;
    }
    node->inputs = std::move(t_read_stack.back());
    t_read_stack.pop_back();
    TS_CHECK(body.defined()) << "compute " << name << " returned an undefined expression";
    TS_CHECK(body.dtype().is_scalar()) << "compute " << name << " returned a vector";
    node->name = name;
    node->tag = tag.empty() && body.as<tir::Reduce>() ? "reduce" : tag;
    node->shape = shape;
    node->dtype = body.dtype();
    node->buffer = Buffer(name, body.dtype(), shape_exprs(shape));
    node->is_placeholder = false;
    node->body = body;
    return Tensor(std::move(node));
}

Expr sum(Expr source, const std::vector<IterVar>& axis) {
    return tir::Reduce::make(ReduceKind::Sum, std::move(source), axis);
}
Expr max(Expr source, const std::vector<IterVar>& axis) {
    return tir::Reduce::make(ReduceKind::Max, std::move(source), axis);
}
Expr min(Expr source, const std::vector<IterVar>& axis) {
    return tir::Reduce::make(ReduceKind::Min, std::move(source), axis);
}

// ---------------------------------------------------------------- lowering

namespace {

// Post-order walk over the producer graph: producers before consumers.
void topo_collect(const Tensor& t, std::vector<Tensor>& order, std::set<const TensorNode*>& seen) {
    if (!seen.insert(t.get()).second) return;
    for (const Tensor& in : t->inputs) topo_collect(in, order, seen);
    order.push_back(t);
}

// The region of `buf` that the block touches: one point when every access uses
// the same indices, otherwise the whole buffer.
BufferRegion access_region(const Buffer& buf, const std::vector<std::vector<Expr>>& accesses) {
    bool same = !accesses.empty();
    for (const auto& a : accesses) {
        if (a.size() != accesses[0].size()) same = false;
        for (size_t i = 0; same && i < a.size(); ++i)
            if (!structural_equal(a[i], accesses[0][i])) same = false;
    }
    BufferRegion r{buf, {}};
    if (same) {
        for (const Expr& i : accesses[0]) r.region.push_back(Range{i, Expr(1)});
    } else {
        for (const Expr& d : buf->shape) r.region.push_back(Range{Expr(0), d});
    }
    return r;
}

// Collects the loads of an expression by buffer, in order of first
// appearance. A load under a Select branch may be out of bounds when the
// branch is not taken (padding), so its buffer gets the whole-buffer region.
class ReadCollector : public IRVisitor {
public:
    std::vector<Buffer> order;
    std::map<const BufferNode*, std::vector<std::vector<Expr>>> accesses;
    std::set<const BufferNode*> guarded;

protected:
    using IRVisitor::visit;
    void visit(const BufferLoad* op) override {
        auto& list = accesses[op->buffer.get()];
        if (list.empty()) order.push_back(op->buffer);
        list.push_back(op->indices);
        if (m_guard_depth > 0) guarded.insert(op->buffer.get());
        IRVisitor::visit(op);
    }
    void visit(const Select* op) override {
        visit_expr(op->condition);
        ++m_guard_depth;
        visit_expr(op->true_value);
        visit_expr(op->false_value);
        --m_guard_depth;
    }

private:
    int m_guard_depth = 0;
};

std::vector<BufferRegion> read_regions(const Expr& value) {
    ReadCollector rc;
    rc.visit_expr(value);
    std::vector<BufferRegion> out;
    for (const Buffer& b : rc.order) {
        if (rc.guarded.count(b.get())) {
            out.push_back(access_region(b, {}));
        } else {
            out.push_back(access_region(b, rc.accesses[b.get()]));
        }
    }
    return out;
}

void check_no_nested_reduce(const Expr& e, const std::string& stage) {
    post_order_visit(Evaluate::make(e), [&](const Object* n) {
        TS_CHECK(n->node_type != NodeType::Reduce)
            << "compute " << stage << ": a reduction must be the whole body of the compute";
    });
}

// One compute stage as a loop nest around its block.
Stmt lower_stage(const Tensor& t) {
    const TensorNode* node = t.get();
    const tir::Reduce* red = node->body.as<tir::Reduce>();
    std::vector<IterVar> axes = node->axis;
    if (red) axes.insert(axes.end(), red->axis.begin(), red->axis.end());

    std::map<const Variable*, Expr> to_block;
    std::vector<IterVar> block_vars;
    std::vector<Var> loop_vars;
    for (const IterVar& iv : axes) {
        Var bv(iv.var.name(), iv.var.dtype());
        block_vars.push_back(IterVar{bv, iv.dom, iv.kind, ""});
        loop_vars.push_back(Var(iv.var.name(), iv.var.dtype()));
        to_block[iv.var.get()] = bv;
    }
    std::vector<Expr> out_idx;
    for (size_t i = 0; i < node->axis.size(); ++i) out_idx.push_back(block_vars[i].var);

    Stmt init, body;
    Expr value;
    if (red) {
        check_no_nested_reduce(red->source, node->name);
        value = substitute(red->source, to_block);
        Expr acc = BufferLoad::make(node->buffer, out_idx);
        body = BufferStore::make(node->buffer, red->combine(acc, value), out_idx);
        init = BufferStore::make(node->buffer, red->identity(), out_idx);
    } else {
        check_no_nested_reduce(node->body, node->name);
        value = substitute(node->body, to_block);
        body = BufferStore::make(node->buffer, value, out_idx);
    }
    std::vector<BufferRegion> reads = read_regions(value);
    std::vector<BufferRegion> writes{access_region(node->buffer, {out_idx})};
    Stmt block = Block::make(node->name, block_vars, reads, writes, init, body);
    std::vector<Expr> values(loop_vars.begin(), loop_vars.end());
    Stmt s = BlockRealize::make(values, IntImm::make(DataType::boolean(), 1), block);
    for (size_t i = axes.size(); i-- > 0;)
        s = For::make(loop_vars[i], axes[i].dom.min, axes[i].dom.extent, ForKind::Serial, s);
    return s;
}

}  // namespace

tir::PrimFunc create_prim_func(const std::vector<Tensor>& args, const std::string& name) {
    std::vector<Tensor> order;
    std::set<const TensorNode*> seen;
    std::set<const TensorNode*> in_args;
    for (const Tensor& a : args) {
        TS_CHECK(a.defined()) << "create_prim_func(" << name << "): undefined argument";
        TS_CHECK(in_args.insert(a.get()).second)
            << "create_prim_func(" << name << "): tensor " << a.name() << " passed twice";
    }
    for (const Tensor& a : args) topo_collect(a, order, seen);

    std::vector<Buffer> params;
    for (const Tensor& a : args) params.push_back(a->buffer);
    std::vector<Buffer> allocs;
    std::vector<Stmt> nests;
    for (const Tensor& t : order) {
        if (t->is_placeholder) {
            TS_CHECK(in_args.count(t.get())) << "create_prim_func(" << name << "): placeholder "
                                             << t.name() << " is read but is not an argument";
            continue;
        }
        if (!in_args.count(t.get())) allocs.push_back(t->buffer);
        nests.push_back(lower_stage(t));
    }
    TS_CHECK(!nests.empty()) << "create_prim_func(" << name << "): nothing to compute";
    Stmt root = Block::make("root", {}, {}, {}, Stmt(), SeqStmt::make(nests), allocs);
    Stmt body = BlockRealize::make({}, IntImm::make(DataType::boolean(), 1), root);
    return tir::PrimFunc(name, params, body);
}

}  // namespace tessera::te
