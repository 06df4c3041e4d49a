// infer_regions: Block reads/writes from the accesses in the block body.
#include "engine/tir/passes/infer_regions.h"

#include <set>

#include "engine/arith/analyzer.h"
#include "engine/tir/functor.h"
#include "engine/tir/op.h"
#include "engine/tir/passes/simplify.h"

namespace tessera::tir {
namespace {

using Relax = std::map<const Variable*, Range>;

struct AccessList {
    std::vector<Buffer> order;
    std::map<const BufferNode*, std::vector<std::pair<std::vector<Expr>, Relax>>> accesses;
    void add(const Buffer& b, std::vector<Expr> idx, const Relax& relax) {
        auto& list = accesses[b.get()];
        if (list.empty()) order.push_back(b);
        list.emplace_back(std::move(idx), relax);
    }
};

// Walks one block's body (and its children) and records every access with the
// loop variables to relax at that point, child iteration variables replaced
// by their bindings.
class AccessCollector : public IRVisitor {
public:
    AccessList reads, writes;
    std::set<const BufferNode*> own;  // allocated inside: not part of the regions

protected:
    using IRVisitor::visit;

    void visit(const BufferLoad* op) override {
        IRVisitor::visit(op);
        reads.add(op->buffer, subst(op->indices), m_relax);
    }
    void visit(const BufferStore* op) override {
        IRVisitor::visit(op);
        writes.add(op->buffer, subst(op->indices), m_relax);
    }
    void visit(const For* op) override {
        visit_expr(op->min);
        visit_expr(op->extent);
        m_relax[op->loop_var.get()] =
            Range{substitute(op->min, m_subst), substitute(op->extent, m_subst)};
        visit_stmt(op->body);
        m_relax.erase(op->loop_var.get());
    }
    void visit(const LetStmt* op) override {
        visit_expr(op->value);
        m_subst[op->var.get()] = substitute(op->value, m_subst);
        visit_stmt(op->body);
        m_subst.erase(op->var.get());
    }
    void visit(const Allocate* op) override {
        own.insert(op->buffer.get());
        IRVisitor::visit(op);
    }
    void visit(const BlockRealize* op) override {
        const Block* b = op->block_node();
        for (const Expr& v : op->iter_values) visit_expr(v);
        for (size_t i = 0; i < b->iter_vars.size() && i < op->iter_values.size(); ++i)
            m_subst[b->iter_vars[i].var.get()] = substitute(op->iter_values[i], m_subst);
        for (const Buffer& buf : b->alloc_buffers) own.insert(buf.get());
        visit_stmt(b->init);
        visit_stmt(b->body);
        for (const IterVar& iv : b->iter_vars) m_subst.erase(iv.var.get());
    }

private:
    std::vector<Expr> subst(const std::vector<Expr>& idx) {
        std::vector<Expr> out;
        for (const Expr& e : idx) out.push_back(substitute(e, m_subst));
        return out;
    }
    Relax m_relax;
    std::map<const Variable*, Expr> m_subst;
};

std::vector<BufferRegion> regions(const AccessList& list, const std::set<const BufferNode*>& own,
                                  arith::Analyzer& ana) {
    std::vector<BufferRegion> out;
    for (const Buffer& b : list.order) {
        if (own.count(b.get())) continue;
        size_t rank = b->shape.size();
        std::vector<Expr> lo(rank), hi(rank);
        std::vector<bool> whole(rank, false);
        for (const auto& [idx, relax] : list.accesses.at(b.get())) {
            if (idx.size() != rank) {
                whole.assign(rank, true);
                continue;
            }
            for (size_t d = 0; d < rank; ++d) {
                if (idx[d].dtype().is_vector()) {
                    whole[d] = true;
                    continue;
                }
                arith::IntSet s = arith::eval_set(idx[d], relax, ana);
                if (!s.bounded()) {
                    whole[d] = true;
                    continue;
                }
                lo[d] = lo[d].defined() ? ana.simplify(min(lo[d], s.min)) : s.min;
                hi[d] = hi[d].defined() ? ana.simplify(max(hi[d], s.max)) : s.max;
            }
        }
        BufferRegion r{b, {}};
        for (size_t d = 0; d < rank; ++d) {
            Expr extent = b->shape[d];
            if (whole[d] || !lo[d].defined()) {
                r.region.push_back(Range{make_zero(extent.dtype()), extent});
                continue;
            }
            Expr mn = lo[d], mx = hi[d];
            // Clamp to the buffer: guarded (padding) accesses may reach outside.
            if (!ana.can_prove(mn >= 0)) mn = ana.simplify(max(mn, make_zero(mn.dtype())));
            Expr last = cast(mx.dtype(), extent) - 1;
            if (!ana.can_prove(mx <= last)) mx = ana.simplify(min(mx, last));
            r.region.push_back(Range{mn, ana.simplify(mx - mn + 1)});
        }
        out.push_back(std::move(r));
    }
    return out;
}

class RegionInferrer : public IRMutator {
public:
    arith::Analyzer ana;

protected:
    using IRMutator::visit;

    Stmt visit(const Block* op) override {
        Stmt s = IRMutator::visit(op);  // children first
        const Block* b = s.as<Block>();
        if (b->iter_vars.empty()) return s;  // the root block keeps its (empty) regions
        std::vector<std::unique_ptr<arith::ScopedBind>> binds;
        for (const IterVar& iv : b->iter_vars)
            binds.push_back(std::make_unique<arith::ScopedBind>(ana, iv.var, iv.dom));
        AccessCollector ac;
        for (const Buffer& buf : b->alloc_buffers) ac.own.insert(buf.get());
        ac.visit_stmt(b->init);
        ac.visit_stmt(b->body);
        std::vector<BufferRegion> reads = regions(ac.reads, ac.own, ana);
        std::vector<BufferRegion> writes = regions(ac.writes, ac.own, ana);
        return Block::make(b->name, b->iter_vars, reads, writes, b->init, b->body, b->alloc_buffers,
                           b->annotations);
    }
};

}  // namespace

PrimFunc infer_regions(const PrimFunc& f) {
    Stmt body = RegionInferrer().mutate(f->body);
    return body.same_as(f->body) ? f : f.with_body(body);
}

}  // namespace tessera::tir
