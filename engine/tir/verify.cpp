// Structural checks of loop IR: scoping of variables and buffers, index
// counts, and operand types.
#include "engine/tir/verify.h"

#include <set>

#include "engine/core/error.h"
#include "engine/tir/functor.h"
#include "engine/tir/printer.h"

namespace tessera::tir {

namespace {

class Verifier : public IRVisitor {
public:
    explicit Verifier(const PrimFunc& f) : m_func(f->name) {}

    void define_buffer(const Buffer& b) {
        TS_CHECK(b.defined()) << where() << "undefined buffer";
        for (const Expr& d : b->shape) {
            TS_CHECK(d.defined() && d.dtype().is_integer() && d.dtype().is_scalar())
                << where() << "buffer " << b->name << " has a non-integer shape";
            visit_expr(d);
        }
        m_buffers.insert(b.get());
    }
    void define_param(const Buffer& b) {
        // Symbolic shapes of parameters define their variables.
        for (const Expr& d : b->shape)
            if (const Variable* v = d.as<Variable>()) m_vars.insert(v);
        define_buffer(b);
    }

protected:
    using IRVisitor::visit;

    std::string where() const { return "verify(" + m_func + "): "; }

    void define(const Variable* v) { m_vars.insert(v); }
    void undefine(const Variable* v) { m_vars.erase(m_vars.find(v)); }

    void visit(const Variable* op) override {
        TS_CHECK(m_vars.count(op))
            << where() << "variable " << op->name << " is used before it is defined";
    }

    void check_access(const Buffer& b, const std::vector<Expr>& indices, const char* what) {
        TS_CHECK(m_buffers.count(b.get()))
            << where() << what << " of buffer " << b->name
            << ", which is not a parameter or an allocation in scope";
        size_t rank = b->shape.size();
        TS_CHECK(indices.size() == rank || indices.size() == 1)
            << where() << what << " of buffer " << b->name << " of rank " << rank << " with "
            << indices.size() << " indices";
        int lanes = 0;
        for (const Expr& i : indices) {
            TS_CHECK(i.defined() && i.dtype().is_integer())
                << where() << "non-integer index into " << b->name;
            if (i.dtype().is_vector()) {
                TS_CHECK(lanes == 0) << where() << "more than one vector index into " << b->name;
                lanes = i.dtype().lanes;
            }
            visit_expr(i);
        }
    }

    void visit(const BufferLoad* op) override {
        check_access(op->buffer, op->indices, "load");
        TS_CHECK(op->dtype.element_of() == op->buffer->dtype)
            << where() << "load of type " << op->dtype.str() << " from " << op->buffer->dtype.str()
            << " buffer " << op->buffer->name;
    }

    void visit(const BufferStore* op) override {
        check_access(op->buffer, op->indices, "store");
        TS_CHECK(op->value.defined()) << where() << "store of an undefined value";
        TS_CHECK(op->value.dtype().element_of() == op->buffer->dtype)
            << where() << "store of " << op->value.dtype().str() << " into "
            << op->buffer->dtype.str() << " buffer " << op->buffer->name;
        visit_expr(op->value);
    }

#define TS_X(N)                                                                        \
    void visit(const N* op) override {                                                 \
        TS_CHECK(op->a.defined() && op->b.defined() && op->a.dtype() == op->b.dtype()) \
            << where() << #N << " of mismatched types in " << print(Expr(op));         \
        IRVisitor::visit(op);                                                          \
    }
    TS_TIR_BINARY_NODES(TS_X)
#undef TS_X

    void visit(const Select* op) override {
        TS_CHECK(op->condition.dtype().is_bool()) << where() << "Select condition is not bool";
        IRVisitor::visit(op);
    }

    void visit(const Let* op) override {
        visit_expr(op->value);
        define(op->var.get());
        visit_expr(op->body);
        undefine(op->var.get());
    }

    void visit(const Reduce*) override {
        TS_FAIL() << where() << "Reduce expression left in loop IR (it must be lowered to a block)";
    }

    void visit(const For* op) override {
        visit_expr(op->min);
        visit_expr(op->extent);
        TS_CHECK(op->min.dtype() == op->loop_var.dtype() &&
                 op->extent.dtype() == op->loop_var.dtype())
            << where() << "loop " << op->loop_var.name() << " has bounds of another type";
        define(op->loop_var.get());
        visit_stmt(op->body);
        undefine(op->loop_var.get());
    }

    void visit(const IfThenElse* op) override {
        TS_CHECK(op->condition.dtype().is_bool() && op->condition.dtype().is_scalar())
            << where() << "if condition is not a scalar bool";
        IRVisitor::visit(op);
    }

    void visit(const LetStmt* op) override {
        visit_expr(op->value);
        define(op->var.get());
        visit_stmt(op->body);
        undefine(op->var.get());
    }

    void visit(const Allocate* op) override {
        define_buffer(op->buffer);
        visit_stmt(op->body);
        m_buffers.erase(m_buffers.find(op->buffer.get()));
    }

    void visit(const Block* op) override { block(op, nullptr); }

    void visit(const BlockRealize* op) override {
        const Block* b = op->block_node();
        TS_CHECK(b) << where() << "BlockRealize of a non-block";
        TS_CHECK(b->iter_vars.size() == op->iter_values.size())
            << where() << "block " << b->name << " binds " << op->iter_values.size()
            << " values to " << b->iter_vars.size() << " iteration variables";
        for (const Expr& v : op->iter_values) visit_expr(v);
        visit_expr(op->predicate);
        block(b, op);
    }

    void block(const Block* b, const BlockRealize* realize) {
        TS_CHECK(realize || b->iter_vars.empty())
            << where() << "block " << b->name << " has iteration variables but no BlockRealize";
        for (const IterVar& iv : b->iter_vars) {
            visit_range(iv.dom);
            define(iv.var.get());
        }
        for (const Buffer& buf : b->alloc_buffers) define_buffer(buf);
        for (const auto* regions : {&b->reads, &b->writes}) {
            for (const BufferRegion& r : *regions) {
                TS_CHECK(m_buffers.count(r.buffer.get()))
                    << where() << "block " << b->name << " names buffer " << r.buffer->name
                    << ", which is not in scope";
                TS_CHECK(r.region.size() == r.buffer->shape.size())
                    << where() << "block " << b->name << " region of " << r.buffer->name << " has "
                    << r.region.size() << " dimensions, the buffer " << r.buffer->shape.size();
                for (const Range& rg : r.region) visit_range(rg);
            }
        }
        visit_stmt(b->init);
        visit_stmt(b->body);
        for (const Buffer& buf : b->alloc_buffers) m_buffers.erase(m_buffers.find(buf.get()));
        for (const IterVar& iv : b->iter_vars) undefine(iv.var.get());
    }

private:
    std::string m_func;
    std::multiset<const Variable*> m_vars;
    std::multiset<const BufferNode*> m_buffers;
};

}  // namespace

void verify(const PrimFunc& f) {
    TS_CHECK(f.defined()) << "verify: undefined function";
    TS_CHECK(f->body.defined()) << "verify(" << f->name << "): function has no body";
    Verifier v(f);
    for (const Buffer& b : f->params) v.define_param(b);
    v.visit_stmt(f->body);
}

}  // namespace tessera::tir
