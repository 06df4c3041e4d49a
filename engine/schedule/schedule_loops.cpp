// Loop primitives: split, fuse, reorder, parallel/vectorize/unroll/bind,
// annotate; and the helpers the other primitives share.
#include <algorithm>

#include "engine/core/checked_math.h"
#include "engine/core/error.h"
#include "engine/schedule/primitives.h"
#include "engine/schedule/schedule_util.h"
#include "engine/tir/functor.h"
#include "engine/tir/op.h"
#include "engine/tir/passes/simplify.h"

namespace tessera::schedule::detail {

using namespace tir;

// ---------------------------------------------------------------- shared helpers

namespace {
class BindingSimplifier : public IRMutator {
protected:
    using IRMutator::visit;
    Stmt visit(const BlockRealize* op) override {
        std::vector<Expr> values;
        for (const Expr& v : op->iter_values) values.push_back(simplify(v));
        Expr pred = op->predicate.defined() ? simplify(op->predicate) : op->predicate;
        return BlockRealize::make(values, pred, op->block);
    }
    Stmt visit(const For* op) override {
        Stmt body = mutate(op->body);
        return For::make(op->loop_var, simplify(op->min), simplify(op->extent), op->kind, body,
                         op->thread_tag, op->annotations);
    }
};

class PredicateAdder : public IRMutator {
public:
    explicit PredicateAdder(Expr c) : m_cond(std::move(c)) {}

protected:
    using IRMutator::visit;
    Stmt visit(const BlockRealize* op) override {
        Expr p = is_true(op->predicate) ? m_cond : (op->predicate && m_cond);
        return BlockRealize::make(op->iter_values, simplify(p), op->block);
    }

private:
    Expr m_cond;
};
}  // namespace

Stmt subst_loops(const Stmt& s, const std::map<const Variable*, Expr>& vmap) {
    return BindingSimplifier().mutate(substitute(s, vmap));
}

std::vector<Stmt> block_path(const PrimFunc& f, const std::string& block) {
    auto p = find_block(f->body, block);
    TS_SCHED_CHECK(p && block != "root", "no block named '" << block << "'");
    return *p;
}

std::vector<Stmt> loop_path(const PrimFunc& f, const std::string& loop) {
    auto p = find_loop(f->body, loop);
    TS_SCHED_CHECK(p, "no loop named '" << loop << "'");
    return *p;
}

namespace {
Names blocks_touching(const PrimFunc& f, const Buffer& b, const std::string& except, bool write) {
    Names out;
    for (const BlockRealize* r : blocks_under(f->body)) {
        const Block* blk = r->block_node();
        if (blk->name == "root" || blk->name == except) continue;
        auto bufs = write ? stored_buffers(blk) : loaded_buffers(blk);
        for (const Buffer& x : bufs)
            if (x.same_as(b)) out.push_back(blk->name);
    }
    return out;
}
}  // namespace

Names writers_of(const PrimFunc& f, const Buffer& b, const std::string& except) {
    return blocks_touching(f, b, except, true);
}
Names readers_of(const PrimFunc& f, const Buffer& b, const std::string& except) {
    return blocks_touching(f, b, except, false);
}

bool is_param(const PrimFunc& f, const Buffer& b) {
    for (const Buffer& p : f->params)
        if (p.same_as(b)) return true;
    return false;
}

namespace {
PrimFunc edit_root_alloc(const PrimFunc& f, const Buffer& buf, bool add) {
    const BlockRealize* r = f->body.as<BlockRealize>();
    TS_CHECK(r && r->block_node()->name == "root") << "schedule: function without root block";
    const Block* b = r->block_node();
    std::vector<Buffer> allocs;
    for (const Buffer& x : b->alloc_buffers)
        if (!x.same_as(buf)) allocs.push_back(x);
    if (add) allocs.push_back(buf);
    Stmt nb = Block::make(b->name, b->iter_vars, b->reads, b->writes, b->init, b->body, allocs,
                          b->annotations);
    return f.with_body(BlockRealize::make(r->iter_values, r->predicate, nb));
}
}  // namespace

PrimFunc add_root_alloc(const PrimFunc& f, const Buffer& buf) { return edit_root_alloc(f, buf, true); }
PrimFunc remove_root_alloc(const PrimFunc& f, const Buffer& buf) {
    return edit_root_alloc(f, buf, false);
}

PrimFunc remove_block(const PrimFunc& f, const std::string& block) {
    Path p = block_path(f, block);
    Stmt body = replace_on_path(p, Stmt());
    TS_SCHED_CHECK(body.defined(), "removing block '" << block << "' leaves nothing");
    return f.with_body(body);
}

Stmt make_nest(std::set<std::string>& used, const std::vector<std::string>& bases,
               const std::vector<int64_t>& extents,
               const std::function<Stmt(const std::vector<Var>&)>& make_inner) {
    std::vector<Var> vars;
    for (const std::string& b : bases) vars.push_back(Var(fresh_name(b, used)));
    Stmt s = make_inner(vars);
    for (size_t i = vars.size(); i-- > 0;)
        s = For::make(vars[i], int_const(0), int_const(extents[i]), ForKind::Serial, s);
    return s;
}

PrimFunc uniquify_loops(const PrimFunc& f) {
    std::set<std::string> used = var_names(f->body);
    std::set<std::string> loops_seen;
    PrimFunc cur = f;
    for (;;) {
        std::optional<Path> dup = find_path(cur->body, [&](const Stmt& s) {
            const For* l = s.as<For>();
            return l && !loops_seen.insert(l->loop_var.name()).second;
        });
        if (!dup) return cur;
        const For* l = dup->back().as<For>();
        Var nv(fresh_name(l->loop_var.name(), used), l->loop_var.dtype());
        Stmt body = substitute(l->body, {{l->loop_var.get(), nv}});
        Stmt nl = For::make(nv, l->min, l->extent, l->kind, body, l->thread_tag, l->annotations);
        cur = cur.with_body(replace_on_path(*dup, nl));
        loops_seen.clear();
    }
}

// ---------------------------------------------------------------- split

PrimFunc split(const PrimFunc& f, const std::string& loop, const std::vector<int64_t>& factors,
               Names& out) {
    Path p = loop_path(f, loop);
    const For* l = p.back().as<For>();
    const int64_t* ext = as_const_int(l->extent);
    TS_SCHED_CHECK(ext, "loop '" << loop << "' has a non-constant extent");
    TS_SCHED_CHECK(*ext > 0, "loop '" << loop << "' has extent " << *ext << ": nothing to split");
    TS_SCHED_CHECK(factors.size() >= 2, "split needs at least two factors");
    int inferred = -1;
    int64_t prod = 1;
    for (size_t i = 0; i < factors.size(); ++i) {
        if (factors[i] == -1 && inferred < 0) {
            inferred = int(i);
            continue;
        }
        TS_SCHED_CHECK(factors[i] > 0, "factor " << factors[i] << " is invalid: factors must be "
                                                 << "positive, with at most one -1 (inferred)");
        // A wrapped product would divide by zero below: bound it instead.
        TS_SCHED_CHECK(checked_mul(prod, factors[i], &prod) && prod <= kMaxTensorElements,
                       "the product of the factors exceeds 2^40: far beyond any loop's extent");
    }
    std::vector<int64_t> fs = factors;
    if (inferred >= 0) {
        fs[inferred] = (*ext + prod - 1) / prod;
        prod *= fs[inferred];
    } else {
        TS_SCHED_CHECK(prod == *ext, "the product of the factors (" << prod
                                         << ") does not equal the extent of loop '" << loop
                                         << "' (" << *ext << ")");
    }
    std::set<std::string> used = var_names(f->body, l->loop_var.get());
    std::vector<Var> vars;
    for (size_t i = 0; i < fs.size(); ++i)
        vars.push_back(Var(fresh_name(loop + "_" + std::to_string(i), used), l->loop_var.dtype()));
    Expr sum;
    int64_t stride = prod;
    for (size_t i = 0; i < fs.size(); ++i) {
        stride /= fs[i];
        Expr term = stride == 1 ? Expr(vars[i]) : Expr(vars[i]) * int_const(stride);
        sum = sum.defined() ? sum + term : term;
    }
    Expr value = is_const_int(l->min, 0) ? sum : l->min + sum;
    Stmt body = subst_loops(l->body, {{l->loop_var.get(), value}});
    if (prod != *ext) body = PredicateAdder(sum < int_const(*ext)).mutate(body);
    for (size_t i = fs.size(); i-- > 0;)
        body = For::make(vars[i], int_const(0), int_const(fs[i]), ForKind::Serial, body);
    for (const Var& v : vars) out.push_back(v.name());
    return f.with_body(replace_on_path(p, body));
}

// ---------------------------------------------------------------- fuse

PrimFunc fuse(const PrimFunc& f, const Names& loops, Names& out) {
    TS_SCHED_CHECK(loops.size() >= 2, "fuse needs at least two loops");
    std::vector<const For*> ls;
    Path outer_path;
    for (size_t i = 0; i < loops.size(); ++i) {
        Path p = loop_path(f, loops[i]);
        if (i == 0) outer_path = p;
        ls.push_back(p.back().as<For>());
        if (i > 0)
            TS_SCHED_CHECK(ls[i - 1]->body.same_as(p.back()),
                           "loops '" << loops[i - 1] << "' and '" << loops[i]
                                     << "' are not adjacent perfectly nested loops");
        TS_SCHED_CHECK(is_const_int(ls[i]->min, 0) && as_const_int(ls[i]->extent),
                       "loop '" << loops[i] << "' must start at 0 and have a constant extent");
    }
    std::set<const Variable*> fvars;
    for (const For* l : ls) fvars.insert(l->loop_var.get());
    for (const BlockRealize* r : blocks_under(ls.back()->body)) {
        const Block* b = r->block_node();
        bool spatial = false, reduce = false;
        for (size_t i = 0; i < b->iter_vars.size(); ++i)
            if (uses_any_var(r->iter_values[i], fvars))
                (b->iter_vars[i].kind == IterKind::Reduce ? reduce : spatial) = true;
        TS_SCHED_CHECK(!(spatial && reduce), "cannot fuse spatial and reduction loops of block '"
                                                 << b->name << "'");
    }
    std::set<std::string> used = var_names(f->body);
    for (const For* l : ls) used.erase(l->loop_var.name());
    std::string base;
    for (const std::string& n : loops) base += n + "_";
    Var fused(fresh_name(base + "fused", used));
    std::map<const Variable*, Expr> vmap;
    int64_t stride = 1;
    for (size_t i = ls.size(); i-- > 0;) {
        int64_t e = *as_const_int(ls[i]->extent);
        Expr v = stride == 1 ? Expr(fused) : floordiv(fused, int_const(stride));
        if (i > 0) v = floormod(v, int_const(e));
        vmap[ls[i]->loop_var.get()] = v;
        stride *= e;
    }
    Stmt body = subst_loops(ls.back()->body, vmap);
    Stmt nl = For::make(fused, int_const(0), int_const(stride), ForKind::Serial, body);
    out.push_back(fused.name());
    return f.with_body(replace_on_path(outer_path, nl));
}

// ---------------------------------------------------------------- reorder

PrimFunc reorder(const PrimFunc& f, const Names& loops) {
    TS_SCHED_CHECK(!loops.empty(), "reorder needs loops");
    std::vector<Path> paths;
    size_t deepest = 0;
    for (size_t i = 0; i < loops.size(); ++i) {
        for (size_t j = 0; j < i; ++j)
            TS_SCHED_CHECK(loops[i] != loops[j], "loop '" << loops[i] << "' is given twice");
        paths.push_back(loop_path(f, loops[i]));
        if (paths[i].size() > paths[deepest].size()) deepest = i;
    }
    const Path& inner = paths[deepest];
    size_t top = inner.size() - 1;
    for (size_t i = 0; i < loops.size(); ++i) {
        const Stmt& node = paths[i].back();
        auto it = std::find_if(inner.begin(), inner.end(),
                               [&](const Stmt& s) { return s.same_as(node); });
        TS_SCHED_CHECK(it != inner.end(), "loops '" << loops[i] << "' and '" << loops[deepest]
                                                    << "' are not in one loop nest");
        top = std::min(top, size_t(it - inner.begin()));
    }
    std::vector<const For*> chain;
    for (size_t i = top; i < inner.size(); ++i) {
        const For* l = inner[i].as<For>();
        TS_SCHED_CHECK(!inner[i].as<SeqStmt>(), "cannot reorder across a dependency: loop '"
                                                    << inner[i - 1].as<For>()->loop_var.name()
                                                    << "' holds several statements");
        TS_SCHED_CHECK(l, "cannot reorder across block '"
                              << (inner[i].as<Block>() ? inner[i].as<Block>()->name
                                  : inner[i].as<BlockRealize>()
                                      ? inner[i].as<BlockRealize>()->block_node()->name
                                      : std::string("?"))
                              << "'");
        if (i + 1 < inner.size())
            TS_SCHED_CHECK(l->body.same_as(inner[i + 1]),
                           "cannot reorder across a dependency: loop '"
                               << l->loop_var.name()
                               << "' contains other statements besides the nest");
        chain.push_back(l);
    }
    std::vector<const For*> order = chain;
    size_t k = 0;
    for (size_t i = 0; i < chain.size(); ++i) {
        if (std::find(loops.begin(), loops.end(), chain[i]->loop_var.name()) == loops.end())
            continue;
        order[i] = paths[k++].back().as<For>();
    }
    for (size_t i = 0; i < order.size(); ++i) {
        std::set<const Variable*> inside;
        for (size_t j = i; j < order.size(); ++j) inside.insert(order[j]->loop_var.get());
        TS_SCHED_CHECK(!uses_any_var(order[i]->min, inside) && !uses_any_var(order[i]->extent, inside),
                       "cannot reorder across a dependency: the bounds of loop '"
                           << order[i]->loop_var.name() << "' depend on a loop that would be inside it");
    }
    Stmt body = chain.back()->body;
    for (size_t i = order.size(); i-- > 0;) {
        const For* l = order[i];
        body = For::make(l->loop_var, l->min, l->extent, l->kind, body, l->thread_tag,
                         l->annotations);
    }
    return f.with_body(replace_on_path(Path(inner.begin(), inner.begin() + top + 1), body));
}

// ---------------------------------------------------------------- loop kinds

namespace {
bool valid_thread_axis(const std::string& t) {
    for (const char* base : {"blockIdx.", "threadIdx.", "vthread."})
        for (const char* ax : {"x", "y", "z"})
            if (t == std::string(base) + ax) return true;
    return t == "vthread";
}
}  // namespace

PrimFunc set_loop_kind(const PrimFunc& f, const std::string& loop, const std::string& op,
                       const std::string& thread_axis) {
    Path p = loop_path(f, loop);
    const For* l = p.back().as<For>();
    ForKind kind = op == "parallel"    ? ForKind::Parallel
                   : op == "vectorize" ? ForKind::Vectorized
                   : op == "unroll"    ? ForKind::Unrolled
                                       : ForKind::ThreadBinding;
    if (kind != ForKind::Unrolled) {
        for (const BlockRealize* r : blocks_under(l->body)) {
            const Block* b = r->block_node();
            bool reduces = b->init.defined();
            std::vector<Expr> spatial;
            for (size_t i = 0; i < r->iter_values.size(); ++i) {
                reduces |= b->iter_vars[i].kind == IterKind::Reduce;
                if (b->iter_vars[i].kind != IterKind::Reduce) spatial.push_back(r->iter_values[i]);
            }
            for (size_t i = 0; i < r->iter_values.size(); ++i) {
                if (!uses_var(r->iter_values[i], l->loop_var.get())) continue;
                TS_SCHED_CHECK(b->iter_vars[i].kind != IterKind::Reduce,
                               "cannot " << op << " loop '" << loop
                                         << "': it iterates over the reduction variable '"
                                         << b->iter_vars[i].var.name() << "' of block '"
                                         << b->name << "'");
            }
            bool distinct = distinct_in(spatial, l->loop_var.get());
            TS_SCHED_CHECK(!reduces || distinct,
                           "cannot " << op << " loop '" << loop << "': its iterations repeat the reduction of block '"
                                     << b->name << "' on the same elements");
        }
    }
    if (kind == ForKind::Vectorized)
        TS_SCHED_CHECK(as_const_int(l->extent), "cannot vectorize loop '" << loop
                                                    << "' with a non-constant extent");
    if (kind == ForKind::ThreadBinding) {
        TS_SCHED_CHECK(valid_thread_axis(thread_axis),
                       "unknown thread axis '" << thread_axis
                                               << "' (use blockIdx.x|y|z, threadIdx.x|y|z or "
                                                  "vthread.x|y|z)");
        // (outer, inner) pairs of loops bound to the same axis. A nested
        // rebinding is allowed for a cooperative fetch: same constant extent,
        // and the inner loop's body does not depend on the outer loop (in a
        // kernel both are the same thread index).
        std::vector<std::pair<const For*, const For*>> nest;
        for (const Stmt& s : p)
            if (const For* o = s.as<For>(); o && o != l) nest.push_back({o, l});
        find_all(l->body, [&](const Stmt& s) {
            if (const For* o = s.as<For>()) nest.push_back({l, o});
            return false;
        });
        for (const auto& pair : nest) {
            const For* outer = pair.first;  // not a structured binding: clang 14 cannot capture those
            const For* inner = pair.second;
            const For* o = outer == l ? inner : outer;
            if (o->kind != ForKind::ThreadBinding || o->thread_tag != thread_axis) continue;
            const int64_t* eo = as_const_int(outer->extent);
            const int64_t* ei = as_const_int(inner->extent);
            bool uses_outer = false;
            post_order_visit(inner->body, [&](const Object* n) {
                uses_outer |= n == static_cast<const Object*>(outer->loop_var.get());
            });
            TS_SCHED_CHECK(thread_axis.rfind("threadIdx.", 0) == 0 && eo && ei && *eo == *ei &&
                               !uses_outer,
                           "bind conflict: thread axis '"
                               << thread_axis << "' is already bound to loop '"
                               << o->loop_var.name()
                               << "' in this nest (a nested threadIdx binding needs the same "
                                  "extent and a body independent of the outer loop)");
        }
    }
    Stmt nl = For::make(l->loop_var, l->min, l->extent, kind, l->body,
                        kind == ForKind::ThreadBinding ? thread_axis : "", l->annotations);
    return f.with_body(replace_on_path(p, nl));
}

PrimFunc annotate(const PrimFunc& f, const std::string& target, const std::string& key,
                  const std::string& value) {
    TS_SCHED_CHECK(!key.empty(), "annotation key is empty");
    if (auto p = find_loop(f->body, target)) {
        const For* l = p->back().as<For>();
        auto ann = l->annotations;
        ann[key] = value;
        Stmt nl = For::make(l->loop_var, l->min, l->extent, l->kind, l->body, l->thread_tag, ann);
        return f.with_body(replace_on_path(*p, nl));
    }
    auto p = find_block(f->body, target);
    TS_SCHED_CHECK(p && target != "root", "no loop or block named '" << target << "'");
    const BlockRealize* r = p->back().as<BlockRealize>();
    const Block* b = r->block_node();
    auto ann = b->annotations;
    ann[key] = value;
    Stmt nb = Block::make(b->name, b->iter_vars, b->reads, b->writes, b->init, b->body,
                          b->alloc_buffers, ann);
    return f.with_body(replace_on_path(*p, BlockRealize::make(r->iter_values, r->predicate, nb)));
}

}  // namespace tessera::schedule::detail
