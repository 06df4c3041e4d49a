// lower_blocks: Block/BlockRealize -> substitutions, IfThenElse and Allocate.
#include "engine/tir/passes/lower_blocks.h"

#include "engine/core/error.h"
#include "engine/tir/functor.h"
#include "engine/tir/op.h"

namespace tessera::tir {
namespace {

// The block body with its init (guarded by the first reduction iteration)
// and its allocations, still in terms of the block's iteration variables.
Stmt expand_block(const Block* block, Stmt init, Stmt body) {
    if (init.defined()) {
        Expr first;
        for (const IterVar& iv : block->iter_vars) {
            if (iv.kind != IterKind::Reduce) continue;
            Expr is_min = EQ::make(iv.var, iv.dom.min);
            first = first.defined() ? And::make(first, is_min) : is_min;
        }
        // A block without reduction iter vars runs its init every time.
        Stmt guarded = first.defined() ? IfThenElse::make(first, init) : init;
        body = SeqStmt::make({guarded, body});
    }
    for (auto it = block->alloc_buffers.rbegin(); it != block->alloc_buffers.rend(); ++it)
        body = Allocate::make(*it, body);
    return body;
}

class BlockLowerer : public IRMutator {
protected:
    using IRMutator::visit;

    Stmt visit(const BlockRealize* op) override {
        const Block* block = op->block_node();
        TS_CHECK(block) << "BlockRealize without a Block";
        TS_CHECK(block->iter_vars.size() == op->iter_values.size())
            << "block '" << block->name << "' binds " << op->iter_values.size()
            << " values to " << block->iter_vars.size() << " iteration variables";
        Stmt init = block->init.defined() ? mutate(block->init) : Stmt();
        Stmt body = expand_block(block, init, mutate(block->body));
        std::map<const Variable*, Expr> vmap;
        for (size_t i = 0; i < block->iter_vars.size(); ++i) {
            Expr value = mutate(op->iter_values[i]);
            const Var& v = block->iter_vars[i].var;
            if (value.dtype() != v.dtype()) value = Cast::make(v.dtype(), value);
            vmap[v.get()] = value;
        }
        if (!vmap.empty()) body = substitute(body, vmap);
        if (op->predicate.defined() && !is_const_int(op->predicate, 1))
            body = IfThenElse::make(mutate(op->predicate), body);
        return body;
    }

    // A Block outside a BlockRealize (e.g. a root block without bindings).
    Stmt visit(const Block* op) override {
        for (const IterVar& iv : op->iter_vars)
            TS_CHECK(false) << "block '" << op->name << "' has iteration variable '"
                            << iv.var.name() << "' but no BlockRealize binding it";
        Stmt init = op->init.defined() ? mutate(op->init) : Stmt();
        return expand_block(op, init, mutate(op->body));
    }
};

}  // namespace

Stmt lower_blocks(const Stmt& s) { return BlockLowerer().mutate(s); }

PrimFunc lower_blocks(const PrimFunc& f) {
    Stmt body = lower_blocks(f->body);
    return body.same_as(f->body) ? f : f.with_body(body);
}

}  // namespace tessera::tir
