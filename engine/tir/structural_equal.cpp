// Alpha-equivalent structural equality and hashing of statements and PrimFuncs.
#include "engine/tir/structural_equal.h"

#include <cmath>
#include <cstring>
#include <map>

#include "engine/core/error.h"
#include "engine/tir/functor.h"
#include "engine/tir/op.h"

namespace tessera::tir {

namespace {

// Compares two trees while recording which variables/buffers correspond.
class Equal {
public:
    bool expr(const Expr& a, const Expr& b) {
        if (a.same_as(b)) return true;
        if (!a.defined() || !b.defined()) return false;
        if (a.node_type() != b.node_type() || a.dtype() != b.dtype()) return false;
        switch (a.node_type()) {
            case NodeType::IntImm: return a.as<IntImm>()->value == b.as<IntImm>()->value;
            case NodeType::FloatImm: {
                double x = a.as<FloatImm>()->value, y = b.as<FloatImm>()->value;
                return x == y || (std::isnan(x) && std::isnan(y));
            }
            case NodeType::Variable: return var(a.as<Variable>(), b.as<Variable>());
#define TS_X(N)                                      \
    case NodeType::N: {                              \
        const N *x = a.as<N>(), *y = b.as<N>();      \
        return expr(x->a, y->a) && expr(x->b, y->b); \
    }
                TS_TIR_BINARY_NODES(TS_X)
#undef TS_X
            case NodeType::Not: return expr(a.as<Not>()->a, b.as<Not>()->a);
            case NodeType::Select: {
                const Select *x = a.as<Select>(), *y = b.as<Select>();
                return expr(x->condition, y->condition) && expr(x->true_value, y->true_value) &&
                       expr(x->false_value, y->false_value);
            }
            case NodeType::Cast: return expr(a.as<Cast>()->value, b.as<Cast>()->value);
            case NodeType::Call: {
                const Call *x = a.as<Call>(), *y = b.as<Call>();
                return x->op == y->op && exprs(x->args, y->args);
            }
            case NodeType::BufferLoad: {
                const BufferLoad *x = a.as<BufferLoad>(), *y = b.as<BufferLoad>();
                return buffer(x->buffer, y->buffer) && exprs(x->indices, y->indices);
            }
            case NodeType::Ramp: {
                const Ramp *x = a.as<Ramp>(), *y = b.as<Ramp>();
                return x->lanes == y->lanes && expr(x->base, y->base) && expr(x->stride, y->stride);
            }
            case NodeType::Broadcast: {
                const Broadcast *x = a.as<Broadcast>(), *y = b.as<Broadcast>();
                return x->lanes == y->lanes && expr(x->value, y->value);
            }
            case NodeType::Let: {
                const Let *x = a.as<Let>(), *y = b.as<Let>();
                return expr(x->value, y->value) && define(x->var, y->var) && expr(x->body, y->body);
            }
            case NodeType::Reduce: {
                const Reduce *x = a.as<Reduce>(), *y = b.as<Reduce>();
                return x->combiner == y->combiner && iter_vars(x->axis, y->axis) &&
                       expr(x->source, y->source);
            }
            default: return false;
        }
    }

    bool stmt(const Stmt& a, const Stmt& b) {
        if (a.same_as(b)) return true;
        if (!a.defined() || !b.defined()) return false;
        if (a.node_type() != b.node_type()) return false;
        switch (a.node_type()) {
            case NodeType::BufferStore: {
                const BufferStore *x = a.as<BufferStore>(), *y = b.as<BufferStore>();
                return buffer(x->buffer, y->buffer) && expr(x->value, y->value) &&
                       exprs(x->indices, y->indices);
            }
            case NodeType::For: {
                const For *x = a.as<For>(), *y = b.as<For>();
                return x->kind == y->kind && x->thread_tag == y->thread_tag &&
                       x->annotations == y->annotations && expr(x->min, y->min) &&
                       expr(x->extent, y->extent) && define(x->loop_var, y->loop_var) &&
                       stmt(x->body, y->body);
            }
            case NodeType::SeqStmt: {
                const SeqStmt *x = a.as<SeqStmt>(), *y = b.as<SeqStmt>();
                if (x->seq.size() != y->seq.size()) return false;
                for (size_t i = 0; i < x->seq.size(); ++i)
                    if (!stmt(x->seq[i], y->seq[i])) return false;
                return true;
            }
            case NodeType::IfThenElse: {
                const IfThenElse *x = a.as<IfThenElse>(), *y = b.as<IfThenElse>();
                return expr(x->condition, y->condition) && stmt(x->then_case, y->then_case) &&
                       stmt(x->else_case, y->else_case);
            }
            case NodeType::LetStmt: {
                const LetStmt *x = a.as<LetStmt>(), *y = b.as<LetStmt>();
                return expr(x->value, y->value) && define(x->var, y->var) && stmt(x->body, y->body);
            }
            case NodeType::Allocate: {
                const Allocate *x = a.as<Allocate>(), *y = b.as<Allocate>();
                return define_buffer(x->buffer, y->buffer) && stmt(x->body, y->body);
            }
            case NodeType::Evaluate: return expr(a.as<Evaluate>()->value, b.as<Evaluate>()->value);
            case NodeType::Block: {
                const Block *x = a.as<Block>(), *y = b.as<Block>();
                if (x->name != y->name || x->annotations != y->annotations) return false;
                if (x->alloc_buffers.size() != y->alloc_buffers.size()) return false;
                for (size_t i = 0; i < x->alloc_buffers.size(); ++i)
                    if (!define_buffer(x->alloc_buffers[i], y->alloc_buffers[i])) return false;
                return iter_vars(x->iter_vars, y->iter_vars) && regions(x->reads, y->reads) &&
                       regions(x->writes, y->writes) && stmt(x->init, y->init) &&
                       stmt(x->body, y->body);
            }
            case NodeType::BlockRealize: {
                const BlockRealize *x = a.as<BlockRealize>(), *y = b.as<BlockRealize>();
                return exprs(x->iter_values, y->iter_values) && expr(x->predicate, y->predicate) &&
                       stmt(x->block, y->block);
            }
            default: return false;
        }
    }

    /// Declares that `b` corresponds to `a` (a buffer defined at the same place).
    bool define_buffer(const Buffer& a, const Buffer& b) {
        const BufferNode *x = a.get(), *y = b.get();
        if (x->dtype != y->dtype || x->scope != y->scope || !exprs(x->shape, y->shape)) return false;
        m_buffers[x] = y;
        return true;
    }

private:
    bool exprs(const std::vector<Expr>& a, const std::vector<Expr>& b) {
        if (a.size() != b.size()) return false;
        for (size_t i = 0; i < a.size(); ++i)
            if (!expr(a[i], b[i])) return false;
        return true;
    }
    bool var(const Variable* a, const Variable* b) {
        auto it = m_vars.find(a);
        return it != m_vars.end() ? it->second == b : a == b;
    }
    bool define(const Var& a, const Var& b) {
        if (a.dtype() != b.dtype()) return false;
        m_vars[a.get()] = b.get();
        return true;
    }
    bool buffer(const Buffer& a, const Buffer& b) {
        auto it = m_buffers.find(a.get());
        return it != m_buffers.end() ? it->second == b.get() : a.same_as(b);
    }
    bool iter_vars(const std::vector<IterVar>& a, const std::vector<IterVar>& b) {
        if (a.size() != b.size()) return false;
        for (size_t i = 0; i < a.size(); ++i) {
            if (a[i].kind != b[i].kind || a[i].thread_tag != b[i].thread_tag) return false;
            if (!expr(a[i].dom.min, b[i].dom.min) || !expr(a[i].dom.extent, b[i].dom.extent))
                return false;
            if (!define(a[i].var, b[i].var)) return false;
        }
        return true;
    }
    bool regions(const std::vector<BufferRegion>& a, const std::vector<BufferRegion>& b) {
        if (a.size() != b.size()) return false;
        for (size_t i = 0; i < a.size(); ++i) {
            if (!buffer(a[i].buffer, b[i].buffer) || a[i].region.size() != b[i].region.size())
                return false;
            for (size_t j = 0; j < a[i].region.size(); ++j)
                if (!expr(a[i].region[j].min, b[i].region[j].min) ||
                    !expr(a[i].region[j].extent, b[i].region[j].extent))
                    return false;
        }
        return true;
    }

    std::map<const Variable*, const Variable*> m_vars;
    std::map<const BufferNode*, const BufferNode*> m_buffers;
};

// Hashes a tree, numbering variables and buffers by first appearance.
class Hasher : public IRVisitor {
public:
    uint64_t value() const { return m_h; }
    void mix(uint64_t v) { m_h = (m_h ^ v) * 0x100000001b3ull; }
    void mix(const std::string& s) {
        for (unsigned char c : s) mix(uint64_t(c));
        mix(uint64_t(0xff));
    }
    void mix_buffer(const BufferNode* b) {
        auto [it, fresh] = m_buffers.emplace(b, m_buffers.size());
        mix(0xB0000000ull + it->second);
        if (fresh) {
            mix(b->dtype.str());
            mix(b->scope);
            for (const Expr& e : b->shape) visit_expr(e);
        }
    }
    void mix_dtype(DataType t) { mix((uint64_t(t.code) << 32) | (uint64_t(t.bits) << 16) | t.lanes); }

protected:
    using IRVisitor::visit;
#define TS_X(N)                                    \
    void visit(const N* op) override {             \
        mix(uint64_t(NodeType::N) + 1);            \
        IRVisitor::visit(op);                      \
    }
    TS_X(Not) TS_X(Select) TS_X(Let) TS_X(Reduce) TS_X(Ramp) TS_X(Broadcast)
    TS_X(SeqStmt) TS_X(IfThenElse) TS_X(LetStmt) TS_X(Evaluate) TS_X(BlockRealize)
    TS_TIR_BINARY_NODES(TS_X)
#undef TS_X
    void visit(const IntImm* op) override {
        mix_dtype(op->dtype);
        mix(uint64_t(op->value));
    }
    void visit(const FloatImm* op) override {
        mix_dtype(op->dtype);
        uint64_t bits;
        std::memcpy(&bits, &op->value, sizeof bits);
        mix(bits);
    }
    void visit(const Variable* op) override {
        auto [it, fresh] = m_vars.emplace(op, m_vars.size());
        mix(0xA0000000ull + it->second);
        if (fresh) mix_dtype(op->dtype);
    }
    void visit(const Cast* op) override {
        mix_dtype(op->dtype);
        IRVisitor::visit(op);
    }
    void visit(const Call* op) override {
        mix(op->op);
        IRVisitor::visit(op);
    }
    void visit(const BufferLoad* op) override {
        mix_buffer(op->buffer.get());
        IRVisitor::visit(op);
    }
    void visit(const BufferStore* op) override {
        mix_buffer(op->buffer.get());
        IRVisitor::visit(op);
    }
    void visit(const For* op) override {
        mix(uint64_t(op->kind) + 100);
        mix(op->thread_tag);
        for (const auto& [k, v] : op->annotations) {
            mix(k);
            mix(v);
        }
        visit(op->loop_var.get());
        IRVisitor::visit(op);
    }
    void visit(const Allocate* op) override {
        mix_buffer(op->buffer.get());
        IRVisitor::visit(op);
    }
    void visit(const Block* op) override {
        mix(op->name);
        for (const Buffer& b : op->alloc_buffers) mix_buffer(b.get());
        for (const IterVar& iv : op->iter_vars) {
            mix(uint64_t(iv.kind));
            visit(iv.var.get());
        }
        IRVisitor::visit(op);
    }

private:
    uint64_t m_h = 0xcbf29ce484222325ull;
    std::map<const Variable*, uint64_t> m_vars;
    std::map<const BufferNode*, uint64_t> m_buffers;
};

}  // namespace

bool structural_equal(const Stmt& a, const Stmt& b) { return Equal().stmt(a, b); }

bool structural_equal(const PrimFunc& a, const PrimFunc& b) {
    if (a.get() == b.get()) return true;
    if (a->params.size() != b->params.size() || a->attrs != b->attrs) return false;
    Equal eq;
    for (size_t i = 0; i < a->params.size(); ++i)
        if (!eq.define_buffer(a->params[i], b->params[i])) return false;
    return eq.stmt(a->body, b->body);
}

uint64_t structural_hash(const PrimFunc& f) {
    Hasher h;
    for (const Buffer& p : f->params) h.mix_buffer(p.get());
    for (const auto& [k, v] : f->attrs) {
        h.mix(k);
        h.mix(v);
    }
    h.visit_stmt(f->body);
    return h.value();
}

namespace {

bool equal_exprs(const std::vector<Expr>& a, const std::vector<Expr>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (!structural_equal(a[i], b[i])) return false;
    return true;
}

}  // namespace

bool structural_equal(const Expr& a, const Expr& b) {
    if (a.same_as(b)) return true;
    if (!a.defined() || !b.defined()) return false;
    if (a.node_type() != b.node_type() || a.dtype() != b.dtype()) return false;
    switch (a.node_type()) {
        case NodeType::IntImm:
            return a.as<IntImm>()->value == b.as<IntImm>()->value;
        case NodeType::FloatImm: {
            double x = a.as<FloatImm>()->value, y = b.as<FloatImm>()->value;
            return x == y || (std::isnan(x) && std::isnan(y));
        }
        case NodeType::Variable:
            return false;  // distinct nodes are distinct variables
#define TS_X(N)                                                              \
    case NodeType::N: {                                                      \
        const N *x = a.as<N>(), *y = b.as<N>();                              \
        return structural_equal(x->a, y->a) && structural_equal(x->b, y->b); \
    }
            TS_TIR_BINARY_NODES(TS_X)
#undef TS_X
        case NodeType::Not:
            return structural_equal(a.as<Not>()->a, b.as<Not>()->a);
        case NodeType::Select: {
            const Select *x = a.as<Select>(), *y = b.as<Select>();
            return structural_equal(x->condition, y->condition) &&
                   structural_equal(x->true_value, y->true_value) &&
                   structural_equal(x->false_value, y->false_value);
        }
        case NodeType::Cast:
            return structural_equal(a.as<Cast>()->value, b.as<Cast>()->value);
        case NodeType::Call: {
            const Call *x = a.as<Call>(), *y = b.as<Call>();
            return x->op == y->op && equal_exprs(x->args, y->args);
        }
        case NodeType::BufferLoad: {
            const BufferLoad *x = a.as<BufferLoad>(), *y = b.as<BufferLoad>();
            return x->buffer.same_as(y->buffer) && equal_exprs(x->indices, y->indices);
        }
        case NodeType::Ramp: {
            const Ramp *x = a.as<Ramp>(), *y = b.as<Ramp>();
            return x->lanes == y->lanes && structural_equal(x->base, y->base) &&
                   structural_equal(x->stride, y->stride);
        }
        case NodeType::Broadcast: {
            const Broadcast *x = a.as<Broadcast>(), *y = b.as<Broadcast>();
            return x->lanes == y->lanes && structural_equal(x->value, y->value);
        }
        case NodeType::Let: {
            const Let *x = a.as<Let>(), *y = b.as<Let>();
            return x->var.same_as(y->var) && structural_equal(x->value, y->value) &&
                   structural_equal(x->body, y->body);
        }
        default:
            return false;  // Reduce: compared by identity only
    }
}

}  // namespace tessera::tir
