// compute_inline (an injective producer into its consumers) and
// reverse_compute_inline (an injective consumer into its producer).
#include <algorithm>

#include "engine/schedule/primitives.h"
#include "engine/schedule/schedule_util.h"
#include "engine/tir/functor.h"
#include "engine/tir/op.h"
#include "engine/tir/passes/simplify.h"

namespace tessera::schedule::detail {

using namespace tir;

namespace {

// Replaces loads of `buf` by `value` with `vars` bound to the load indices.
class InlineLoads : public IRMutator {
public:
    InlineLoads(Buffer b, std::vector<Var> vars, Expr value)
        : m_buf(std::move(b)), m_vars(std::move(vars)), m_value(std::move(value)) {}

protected:
    using IRMutator::visit;
    Expr visit(const BufferLoad* op) override {
        Expr e = IRMutator::visit(op);
        const BufferLoad* l = e.as<BufferLoad>();
        if (!l->buffer.same_as(m_buf)) return e;
        std::map<const Variable*, Expr> vmap;
        for (size_t i = 0; i < m_vars.size(); ++i) vmap[m_vars[i].get()] = simplify(l->indices[i]);
        return substitute(m_value, vmap);
    }

private:
    Buffer m_buf;
    std::vector<Var> m_vars;
    Expr m_value;
};

bool is_reduction(const Block* b) {
    if (b->init.defined()) return true;
    return std::any_of(b->iter_vars.begin(), b->iter_vars.end(),
                       [](const IterVar& v) { return v.kind == IterKind::Reduce; });
}

// The single store of an injective block; fails with the block named.
const BufferStore* single_store(const Block* b, const std::string& what) {
    TS_SCHED_CHECK(!is_reduction(b), "block '" << b->name << "' is a reduction; cannot " << what);
    const BufferStore* st = b->body.as<BufferStore>();
    TS_SCHED_CHECK(st, "the body of block '" << b->name << "' is not a single store; cannot " << what);
    return st;
}

// The iteration variables used as store/load indices, one per dimension, distinct.
std::vector<Var> index_vars(const Block* b, const std::vector<Expr>& idx, const std::string& msg) {
    std::vector<Var> vars;
    for (const Expr& e : idx) {
        const Variable* v = e.as<Variable>();
        bool ok = v && std::any_of(b->iter_vars.begin(), b->iter_vars.end(),
                                   [&](const IterVar& iv) { return iv.var.get() == v; });
        ok = ok && std::none_of(vars.begin(), vars.end(), [&](const Var& x) { return x.get() == v; });
        TS_SCHED_CHECK(ok, msg);
        vars.push_back(Var(v));
    }
    return vars;
}

// Replaces every load of a buffer by one expression.
class LoadsToValue : public IRMutator {
public:
    LoadsToValue(Buffer b, Expr v) : m_b(std::move(b)), m_v(std::move(v)) {}

protected:
    using IRMutator::visit;
    Expr visit(const BufferLoad* op) override {
        if (op->buffer.same_as(m_b)) return m_v;
        return IRMutator::visit(op);
    }

private:
    Buffer m_b;
    Expr m_v;
};

PrimFunc replace_block(const PrimFunc& f, const std::string& name, const Stmt& block) {
    Path p = block_path(f, name);
    const BlockRealize* r = p.back().as<BlockRealize>();
    return f.with_body(replace_on_path(p, BlockRealize::make(r->iter_values, r->predicate, block)));
}

}  // namespace

PrimFunc compute_inline(const PrimFunc& f, const std::string& block) {
    Path bp = block_path(f, block);
    const Block* b = bp.back().as<BlockRealize>()->block_node();
    const BufferStore* st = single_store(b, "inline it");
    const Buffer& w = st->buffer;
    TS_SCHED_CHECK(!is_param(f, w), "block '" << block << "' writes '" << w->name
                                              << "', an output of the function; cannot inline it");
    TS_SCHED_CHECK(writers_of(f, w, block).empty(),
                   "buffer '" << w->name << "' has other writers besides block '" << block << "'");
    std::vector<Var> vars = index_vars(b, st->indices,
                                       "block '" + block + "' does not store at its iteration variables");
    std::set<const Variable*> allowed;
    for (const Var& v : vars) allowed.insert(v.get());
    std::set<const Variable*> others;
    for (const IterVar& iv : b->iter_vars)
        if (!allowed.count(iv.var.get())) others.insert(iv.var.get());
    TS_SCHED_CHECK(!uses_any_var(st->value, others),
                   "the value of block '" << block << "' depends on a variable it does not store at");
    for (const Buffer& rb : loaded_buffers(b))
        TS_SCHED_CHECK(!rb.same_as(w), "block '" << block << "' reads its own output");
    PrimFunc g = f;
    InlineLoads inl(w, vars, st->value);
    for (const std::string& c : readers_of(f, w, block)) {
        const Block* cb = block_path(g, c).back().as<BlockRealize>()->block_node();
        Stmt init = cb->init.defined() ? inl.mutate(cb->init) : Stmt();
        Stmt nb = with_regions(cb, init, inl.mutate(cb->body), cb->iter_vars, cb->name);
        g = replace_block(g, c, nb);
    }
    g = remove_block(g, block);
    return remove_root_alloc(g, w);
}

PrimFunc reverse_compute_inline(const PrimFunc& f, const std::string& block) {
    Path bp = block_path(f, block);
    const Block* c = bp.back().as<BlockRealize>()->block_node();
    const BufferStore* cst = single_store(c, "reverse-inline it");
    Buffer in;
    for (const Buffer& rb : loaded_buffers(c)) {
        if (writers_of(f, rb, block).empty()) continue;
        TS_SCHED_CHECK(!in.defined(), "block '" << block << "' reads more than one produced buffer ('"
                                                << in->name << "', '" << rb->name << "')");
        in = rb;
    }
    TS_SCHED_CHECK(in.defined(), "block '" << block << "' has no producer block");
    TS_SCHED_CHECK(!is_param(f, in), "'" << in->name << "' is an output of the function");
    Names writers = writers_of(f, in, block);
    TS_SCHED_CHECK(writers.size() == 1, "buffer '" << in->name << "' has several writers");
    Names readers = readers_of(f, in, block);
    TS_SCHED_CHECK(readers.empty(), "buffer '" << in->name << "' has other consumers ('"
                                               << readers[0] << "')");
    const Block* p = block_path(f, writers[0]).back().as<BlockRealize>()->block_node();
    const BufferStore* pst = single_store(p, "reverse-inline into it");
    auto accesses = load_indices(c, in);
    for (const auto& a : accesses)
        TS_SCHED_CHECK(std::equal(a.begin(), a.end(), accesses[0].begin(), accesses[0].end(),
                                  [](const Expr& x, const Expr& y) { return structural_equal(x, y); }),
                       "block '" << block << "' reads '" << in->name << "' at several places");
    std::string msg = "block '" + block + "' does not read '" + in->name + "' at its iteration variables";
    std::vector<Var> vars = index_vars(c, accesses[0], msg);
    TS_SCHED_CHECK(vars.size() == c->iter_vars.size(), msg);
    for (size_t d = 0; d < vars.size(); ++d) {
        const IterVar* iv = nullptr;
        for (const IterVar& x : c->iter_vars)
            if (x.var.get() == vars[d].get()) iv = &x;
        TS_SCHED_CHECK(is_const_int(iv->dom.min, 0) &&
                           structural_equal(simplify(iv->dom.extent), simplify(in->shape[d])),
                       "the domain of block '" << block << "' does not match the shape of '" << in->name << "'");
    }
    std::map<const Variable*, Expr> pmap;
    for (size_t d = 0; d < vars.size(); ++d) pmap[vars[d].get()] = pst->indices[d];
    // Loads of `in` become the producer's value (in the producer's variables);
    // then the consumer's variables map to the producer's store indices.
    Expr value = substitute(LoadsToValue(in, pst->value).mutate(cst->value), pmap);
    std::vector<Expr> out_idx;
    for (const Expr& e : cst->indices) out_idx.push_back(simplify(substitute(e, pmap)));
    Stmt body = BufferStore::make(cst->buffer, value, out_idx);
    Stmt nb = with_regions(p, Stmt(), body, p->iter_vars, p->name);
    PrimFunc g = replace_block(f, p->name, nb);
    g = remove_block(g, block);
    return remove_root_alloc(g, in);
}

}  // namespace tessera::schedule::detail
