// compute_at and reverse_compute_at: move a block under a loop of its
// consumer / producer, computing only the region needed there (TVM-style
// region analysis: the loops below the target loop are relaxed).
#include <algorithm>

#include "engine/schedule/primitives.h"
#include "engine/schedule/schedule_util.h"
#include "engine/tir/functor.h"
#include "engine/tir/op.h"
#include "engine/tir/passes/simplify.h"

namespace tessera::schedule::detail {

using namespace tir;

namespace {

// Pre-order index of every block by name.
std::map<std::string, int> block_order(const PrimFunc& f) {
    std::map<std::string, int> order;
    for (const BlockRealize* r : blocks_under(f->body)) {
        int n = int(order.size());
        order[r->block_node()->name] = n;
    }
    return order;
}

// One region per buffer dimension; `full` when unknown.
struct DimRegion {
    Expr lo, hi;
    bool full = false;
    bool set = false;
};

void merge(DimRegion& d, const Interval& iv) {
    if (d.full) return;
    if (!iv.ok()) {
        d.full = true;
        return;
    }
    if (!d.set) {
        d.lo = iv.lo, d.hi = iv.hi, d.set = true;
        return;
    }
    auto dl = const_diff(iv.lo, d.lo), dh = const_diff(iv.hi, d.hi);
    if (!dl || !dh) {
        d.full = true;
        return;
    }
    if (*dl < 0) d.lo = iv.lo;
    if (*dh > 0) d.hi = iv.hi;
}

// Relaxation domain of the loops on `path` below position `from`.
std::map<const Variable*, Interval> relax_domain(const Path& path, size_t from) {
    std::map<const Variable*, Interval> dom;
    for (size_t i = from; i < path.size(); ++i) {
        const For* l = path[i].as<For>();
        if (!l) continue;
        Interval mn = relax(l->min, dom);
        const int64_t* ext = as_const_int(l->extent);
        if (!mn.ok() || !ext) {
            dom[l->loop_var.get()] = Interval{};
            continue;
        }
        dom[l->loop_var.get()] = {mn.lo, simp(mn.hi + int_const(*ext - 1))};
    }
    return dom;
}

// Relaxes index expressions of a block (in its block vars) at `path` (ending
// with its BlockRealize), relaxing the loops from position `from` and the
// loops in `also` (loops above the target bound to threads that share the buffer).
std::vector<Interval> relax_access(const Path& path, size_t from, const std::vector<Expr>& idx,
                                   const std::vector<const For*>& also = {}) {
    const BlockRealize* r = path.back().as<BlockRealize>();
    const Block* b = r->block_node();
    std::map<const Variable*, Expr> bind;
    for (size_t i = 0; i < b->iter_vars.size(); ++i) bind[b->iter_vars[i].var.get()] = r->iter_values[i];
    auto dom = relax_domain(path, from);
    for (const For* l : also) {
        const int64_t* mn = as_const_int(l->min);
        const int64_t* ext = as_const_int(l->extent);
        dom[l->loop_var.get()] =
            mn && ext ? Interval{int_const(*mn), int_const(*mn + *ext - 1)} : Interval{};
    }
    bool bad = false;
    for (auto& [v, iv] : dom) bad |= !iv.ok();
    std::vector<Interval> out;
    for (const Expr& e : idx) {
        if (bad) {
            out.push_back({});
            continue;
        }
        out.push_back(relax(simp(substitute(e, bind)), dom));
    }
    return out;
}

// The loop nest (and BlockRealize) running `b` over the given region of each
// iteration variable: var i runs over [lo[i], lo[i] + ext[i]) or, with an
// undefined lo, over its whole domain. Adds a predicate where the region may
// leave the domain.
Stmt region_nest(const PrimFunc& f, const Path& loop_path, const Stmt& block,
                 const std::vector<Expr>& lo, const std::vector<int64_t>& ext) {
    const Block* b = block.as<Block>();
    auto env = loop_env(loop_path);
    std::set<std::string> used = var_names(f->body);
    std::vector<Var> vars;
    std::vector<int64_t> extents;
    std::vector<Expr> values;
    Expr pred;
    for (size_t i = 0; i < b->iter_vars.size(); ++i) {
        const IterVar& iv = b->iter_vars[i];
        const int64_t* dmin = as_const_int(iv.dom.min);
        const int64_t* dext = as_const_int(iv.dom.extent);
        TS_SCHED_CHECK(dmin && dext, "block '" << b->name << "' has a non-constant domain");
        Expr base = lo[i].defined() ? lo[i] : iv.dom.min;
        int64_t n = lo[i].defined() ? ext[i] : *dext;
        Expr value = base;
        if (n != 1) {
            Var v(fresh_name("ax" + std::to_string(i), used));
            vars.push_back(v);
            extents.push_back(n);
            value = is_const_int(base, 0) ? Expr(v) : base + v;
        }
        values.push_back(simp(value));
        if (!lo[i].defined()) continue;
        auto nb = num_bound(base, env);
        bool inside = nb && nb->first >= *dmin && nb->second + n <= *dmin + *dext;
        if (!inside) {
            Expr c = simp(value) >= iv.dom.min && simp(value) < int_const(*dmin + *dext);
            pred = pred.defined() ? (pred && c) : c;
        }
    }
    Stmt s = BlockRealize::make(values, pred.defined() ? simp(pred) : Expr(), block);
    for (size_t i = vars.size(); i-- > 0;)
        s = For::make(vars[i], int_const(0), int_const(extents[i]), ForKind::Serial, s);
    return s;
}

// Inserts `s` into the loop's body before (or after) the children holding any of `names`.
PrimFunc insert_into_loop(const PrimFunc& f, const std::string& loop, const Stmt& s,
                          const std::set<std::string>& names, bool after) {
    Path lp = loop_path(f, loop);
    const For* l = lp.back().as<For>();
    std::vector<Stmt> seq;
    if (const SeqStmt* q = l->body.as<SeqStmt>()) {
        seq = q->seq;
    } else {
        seq = {l->body};
    }
    auto holds = [&](const Stmt& c) {
        for (const BlockRealize* r : blocks_under(c))
            if (names.count(r->block_node()->name)) return true;
        return false;
    };
    size_t pos = after ? 0 : seq.size();
    for (size_t i = 0; i < seq.size(); ++i) {
        if (!holds(seq[i])) continue;
        if (after) {
            pos = i + 1;
        } else {
            pos = std::min(pos, i);
        }
    }
    seq.insert(seq.begin() + long(pos), s);
    Stmt nl = For::make(l->loop_var, l->min, l->extent, l->kind, SeqStmt::make(seq),
                        l->thread_tag, l->annotations);
    return f.with_body(replace_on_path(lp, nl));
}

// Index of the iteration variable that `e` is, or -1.
int iter_var_index(const Block* b, const Expr& e) {
    for (size_t i = 0; i < b->iter_vars.size(); ++i)
        if (e.same_as(b->iter_vars[i].var)) return int(i);
    return -1;
}

// Maps each buffer dimension of `indices` to a distinct spatial iteration
// variable of b; fails with `what` otherwise.
std::vector<int> dims_to_vars(const Block* b, const std::vector<Expr>& indices, const std::string& what) {
    std::vector<int> m;
    for (const Expr& e : indices) {
        int k = iter_var_index(b, e);
        TS_SCHED_CHECK(k >= 0 && b->iter_vars[k].kind == IterKind::Spatial &&
                           std::find(m.begin(), m.end(), k) == m.end(),
                       what);
        m.push_back(k);
    }
    return m;
}

PrimFunc forward(const PrimFunc& f, const std::string& block, const std::string& loop) {
    Path bp = block_path(f, block);
    Path lp = loop_path(f, loop);
    const BlockRealize* r = bp.back().as<BlockRealize>();
    const Block* b = r->block_node();
    TS_SCHED_CHECK(std::none_of(bp.begin(), bp.end(), [&](const Stmt& s) { return s.same_as(lp.back()); }),
                   "loop '" << loop << "' is in the loop nest of block '" << block << "' itself");
    auto writes = stored_buffers(b);
    TS_SCHED_CHECK(writes.size() == 1, "block '" << block << "' must write exactly one buffer");
    const Buffer& w = writes[0];
    TS_SCHED_CHECK(writers_of(f, w, block).empty(),
                   "buffer '" << w->name << "' has other writers besides block '" << block << "'");
    Names consumers = readers_of(f, w, block);
    TS_SCHED_CHECK(!consumers.empty(), "block '" << block << "' has no consumer");
    std::set<std::string> under;
    for (const BlockRealize* x : blocks_under(lp.back())) under.insert(x->block_node()->name);
    for (const std::string& c : consumers)
        TS_SCHED_CHECK(under.count(c), "loop '" << loop << "' does not enclose consumer block '"
                                                << c << "' of block '" << block << "'");
    auto order = block_order(f);
    int first_under = 1 << 30;
    for (const std::string& n : under) first_under = std::min(first_under, order[n]);
    TS_SCHED_CHECK(order[block] < first_under,
                   "block '" << block << "' does not come before loop '" << loop << "'");
    // The store indices must be the block's spatial variables.
    std::vector<int> dim_var;
    post_order_visit(b->body, [&](const Object* n) {
        if (n->node_type != NodeType::BufferStore) return;
        auto* st = static_cast<const BufferStore*>(n);
        dim_var = dims_to_vars(b, st->indices, "block '" + block + "' does not store at its iteration variables");
    });
    // A shared buffer is filled by all threads of a block together: its region
    // covers the reads of every thread (loops bound to threadIdx above the
    // target are relaxed too, as TVM does for the "shared" scope).
    std::vector<const For*> thread_loops;
    if (w->scope == "shared")
        for (const Stmt& s : lp)
            if (const For* o = s.as<For>();
                o && o->kind == ForKind::ThreadBinding && o->thread_tag.rfind("threadIdx.", 0) == 0)
                thread_loops.push_back(o);
    // Region of w that the consumers read under the loop.
    std::vector<DimRegion> reg(w->shape.size());
    for (const Path& cp : find_all(lp.back(), [&](const Stmt& s) {
             const BlockRealize* x = s.as<BlockRealize>();
             return x && std::find(consumers.begin(), consumers.end(), x->block_node()->name) !=
                             consumers.end();
         })) {
        for (const auto& idx : load_indices(cp.back().as<BlockRealize>()->block_node(), w)) {
            auto ivs = relax_access(cp, 1, idx, thread_loops);
            for (size_t d = 0; d < reg.size(); ++d) merge(reg[d], ivs[d]);
        }
    }
    std::vector<Expr> lo(b->iter_vars.size());
    std::vector<int64_t> ext(b->iter_vars.size(), 0);
    for (size_t d = 0; d < reg.size(); ++d) {
        int k = dim_var[d];
        auto e = reg[d].full || !reg[d].set ? std::nullopt : const_diff(reg[d].hi, reg[d].lo);
        const int64_t* shape = as_const_int(w->shape[d]);
        if (!e || !shape || *e + 1 >= *shape) continue;  // whole domain
        lo[k] = reg[d].lo;
        ext[k] = *e + 1;
    }
    PrimFunc g = remove_block(f, block);
    Path lp2 = loop_path(g, loop);
    Stmt nest = region_nest(g, lp2, r->block, lo, ext);
    return insert_into_loop(g, loop, nest, under, false);
}

PrimFunc reverse(const PrimFunc& f, const std::string& block, const std::string& loop) {
    Path bp = block_path(f, block);
    Path lp = loop_path(f, loop);
    const BlockRealize* r = bp.back().as<BlockRealize>();
    const Block* b = r->block_node();
    TS_SCHED_CHECK(std::none_of(bp.begin(), bp.end(), [&](const Stmt& s) { return s.same_as(lp.back()); }),
                   "loop '" << loop << "' is in the loop nest of block '" << block << "' itself");
    std::set<std::string> under;
    for (const BlockRealize* x : blocks_under(lp.back())) under.insert(x->block_node()->name);
    auto order = block_order(f);
    int last_under = -1;
    for (const std::string& n : under) last_under = std::max(last_under, order[n]);
    TS_SCHED_CHECK(order[block] > last_under,
                   "block '" << block << "' does not come after loop '" << loop << "'");
    int first_under = 1 << 30;
    for (const std::string& n : under) first_under = std::min(first_under, order[n]);
    std::set<const Variable*> outer;
    for (const Stmt& s : lp)
        if (const For* o = s.as<For>()) outer.insert(o->loop_var.get());
    for (const BlockRealize* x : blocks_under(lp.back())) {
        const Block* xb = x->block_node();
        for (size_t i = 0; i < xb->iter_vars.size(); ++i)
            TS_SCHED_CHECK(xb->iter_vars[i].kind != IterKind::Reduce ||
                               !uses_any_var(x->iter_values[i], outer),
                           "loop '" << loop << "' is a reduction loop of block '" << xb->name
                                    << "': its results are not final inside the loop");
    }
    auto own = stored_buffers(b);
    for (const Buffer& ob : own)
        TS_SCHED_CHECK(writers_of(f, ob, block).empty(),
                       "buffer '" << ob->name << "' has other writers besides block '" << block << "'");
    std::vector<Interval> var_region(b->iter_vars.size());
    bool any = false;
    for (const Buffer& rb : loaded_buffers(b)) {
        if (std::any_of(own.begin(), own.end(), [&](const Buffer& x) { return x.same_as(rb); }))
            continue;
        bool produced_here = false;
        for (const std::string& p : writers_of(f, rb, block)) {
            if (under.count(p)) {
                produced_here = true;
                continue;
            }
            TS_SCHED_CHECK(order[p] < first_under,
                           "producer '" << p << "' of block '" << block << "' is neither under nor before loop '"
                                        << loop << "'");
        }
        if (!produced_here) continue;
        any = true;
        auto accesses = load_indices(b, rb);
        for (const auto& a : accesses)
            TS_SCHED_CHECK(a.size() == accesses[0].size() &&
                               std::equal(a.begin(), a.end(), accesses[0].begin(),
                                          [](const Expr& x, const Expr& y) { return structural_equal(x, y); }),
                           "block '" << block << "' reads '" << rb->name << "' at several places");
        std::vector<int> dv = dims_to_vars(b, accesses[0], "block '" + block + "' does not read '" +
                                                              rb->name + "' at its iteration variables");
        std::vector<DimRegion> reg(rb->shape.size());
        for (const Path& pp : find_all(lp.back(), [&](const Stmt& s) {
                 const BlockRealize* x = s.as<BlockRealize>();
                 if (!x) return false;
                 for (const Buffer& ob : stored_buffers(x->block_node()))
                     if (ob.same_as(rb)) return true;
                 return false;
             })) {
            const Block* pb = pp.back().as<BlockRealize>()->block_node();
            post_order_visit(pb->body, [&](const Object* n) {
                if (n->node_type != NodeType::BufferStore) return;
                auto* st = static_cast<const BufferStore*>(n);
                if (!st->buffer.same_as(rb)) return;
                auto ivs = relax_access(pp, 1, st->indices);
                for (size_t d = 0; d < reg.size(); ++d) merge(reg[d], ivs[d]);
            });
        }
        for (size_t d = 0; d < reg.size(); ++d) {
            TS_SCHED_CHECK(!reg[d].full && reg[d].set && const_diff(reg[d].hi, reg[d].lo),
                           "cannot determine the region of '" << rb->name << "' produced under loop '"
                                                              << loop << "'");
            Interval iv{reg[d].lo, reg[d].hi};
            Interval& cur = var_region[dv[d]];
            if (cur.ok()) {
                auto a = const_diff(cur.lo, iv.lo), c = const_diff(cur.hi, iv.hi);
                TS_SCHED_CHECK(a && c && *a == 0 && *c == 0,
                               "block '" << block << "' needs inconsistent regions under loop '" << loop << "'");
            }
            cur = iv;
        }
    }
    TS_SCHED_CHECK(any, "loop '" << loop << "' does not enclose a producer of block '" << block << "'");
    std::vector<Expr> lo(b->iter_vars.size());
    std::vector<int64_t> ext(b->iter_vars.size(), 0);
    for (size_t i = 0; i < var_region.size(); ++i) {
        if (!var_region[i].ok()) continue;
        lo[i] = var_region[i].lo;
        ext[i] = *const_diff(var_region[i].hi, var_region[i].lo) + 1;
    }
    PrimFunc g = remove_block(f, block);
    Path lp2 = loop_path(g, loop);
    Stmt nest = region_nest(g, lp2, r->block, lo, ext);
    return insert_into_loop(g, loop, nest, under, true);
}

}  // namespace

PrimFunc compute_at(const PrimFunc& f, const std::string& block, const std::string& loop,
                    bool reverse_at) {
    return reverse_at ? reverse(f, block, loop) : forward(f, block, loop);
}

}  // namespace tessera::schedule::detail
