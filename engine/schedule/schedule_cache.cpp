// cache_read / cache_write (copy blocks through a buffer in another scope),
// rfactor and decompose_reduction.
#include <algorithm>

#include "engine/core/error.h"
#include "engine/schedule/primitives.h"
#include "engine/schedule/schedule_util.h"
#include "engine/tir/functor.h"
#include "engine/tir/op.h"
#include "engine/tir/passes/simplify.h"

namespace tessera::schedule::detail {

using namespace tir;

namespace {

class ReplaceBuffer : public IRMutator {
public:
    ReplaceBuffer(Buffer from, Buffer to, bool loads, bool stores)
        : m_from(std::move(from)), m_to(std::move(to)), m_loads(loads), m_stores(stores) {}

protected:
    using IRMutator::visit;
    Expr visit(const BufferLoad* op) override {
        Expr e = IRMutator::visit(op);
        const BufferLoad* l = e.as<BufferLoad>();
        if (!m_loads || !l->buffer.same_as(m_from)) return e;
        return BufferLoad::make(m_to, l->indices);
    }
    Stmt visit(const BufferStore* op) override {
        Stmt s = IRMutator::visit(op);
        const BufferStore* st = s.as<BufferStore>();
        if (!m_stores || !st->buffer.same_as(m_from)) return s;
        return BufferStore::make(m_to, st->value, st->indices);
    }

private:
    Buffer m_from, m_to;
    bool m_loads, m_stores;
};

std::set<std::string> used_names(const PrimFunc& f) {
    std::set<std::string> used;
    for (const Buffer& b : f->params) used.insert(b->name);
    for (const BlockRealize* r : blocks_under(f->body)) {
        used.insert(r->block_node()->name);
        for (const Buffer& b : r->block_node()->alloc_buffers) used.insert(b->name);
    }
    return used;
}

// Index of the root-level statement that holds the block, and the root sequence.
std::pair<size_t, std::vector<Stmt>> root_position(const PrimFunc& f, const std::string& block) {
    const Block* root = f->body.as<BlockRealize>()->block_node();
    std::vector<Stmt> seq = sequence(root->body);
    for (size_t i = 0; i < seq.size(); ++i)
        for (const BlockRealize* r : blocks_under(seq[i]))
            if (r->block_node()->name == block) return {i, seq};
    TS_FAIL() << "schedule: block " << block << " not under the root";
}

std::set<std::string> block_names(const Stmt& s) {
    std::set<std::string> out;
    for (const BlockRealize* r : blocks_under(s)) out.insert(r->block_node()->name);
    return out;
}

PrimFunc with_root_seq(const PrimFunc& f, const std::vector<Stmt>& seq) {
    const BlockRealize* r = f->body.as<BlockRealize>();
    const Block* b = r->block_node();
    Stmt nb = Block::make(b->name, b->iter_vars, b->reads, b->writes, b->init, SeqStmt::make(seq),
                          b->alloc_buffers, b->annotations);
    return f.with_body(BlockRealize::make(r->iter_values, r->predicate, nb));
}

// A nest copying src[v] into dst[v] over the whole shape.
Stmt copy_nest(const PrimFunc& f, const std::string& name, const Buffer& src, const Buffer& dst) {
    std::set<std::string> used = var_names(f->body);
    std::vector<int64_t> shape = src.const_shape();
    std::vector<std::string> bases;
    for (size_t i = 0; i < shape.size(); ++i) bases.push_back("ax" + std::to_string(i));
    return make_nest(used, bases, shape, [&](const std::vector<Var>& loops) {
        std::vector<IterVar> ivs;
        std::vector<Expr> idx, values(loops.begin(), loops.end());
        for (size_t i = 0; i < shape.size(); ++i) {
            std::string vn = "v";
            vn += std::to_string(i);
            Var v(vn);
            ivs.push_back(IterVar{v, Range{int_const(0), int_const(shape[i])}, IterKind::Spatial, ""});
            idx.push_back(v);
        }
        Stmt body = BufferStore::make(dst, BufferLoad::make(src, idx), idx);
        Stmt tmp = Block::make(name, {}, {}, {}, Stmt(), body);
        Stmt blk = with_regions(tmp.as<Block>(), Stmt(), body, ivs, name);
        return BlockRealize::make(values, Expr(), blk);
    });
}

void check_scope(const std::string& scope) {
    TS_SCHED_CHECK(scope == "global" || scope == "shared" || scope == "local",
                   "unknown storage scope '" << scope << "' (use global, shared or local)");
}

PrimFunc rewrite_block(const PrimFunc& f, const std::string& block, IRMutator& m) {
    Path p = block_path(f, block);
    const BlockRealize* r = p.back().as<BlockRealize>();
    const Block* b = r->block_node();
    Stmt init = b->init.defined() ? m.mutate(b->init) : Stmt();
    Stmt nb = with_regions(b, init, m.mutate(b->body), b->iter_vars, b->name);
    return f.with_body(replace_on_path(p, BlockRealize::make(r->iter_values, r->predicate, nb)));
}

}  // namespace

PrimFunc cache_read(const PrimFunc& f, const std::string& block, int index,
                    const std::string& scope, Names& out) {
    const Block* b = block_path(f, block).back().as<BlockRealize>()->block_node();
    check_scope(scope);
    TS_SCHED_CHECK(index >= 0 && index < int(b->reads.size()),
                   "read index " << index << " is out of range: block '" << block << "' reads "
                                 << b->reads.size() << " buffer(s)");
    Buffer src = b->reads[index].buffer;
    auto [pos, seq] = root_position(f, block);
    std::set<std::string> nest = block_names(seq[pos]);
    for (const std::string& w : writers_of(f, src, block))
        TS_SCHED_CHECK(!nest.count(w), "buffer '" << src->name << "' is produced in the loop nest of block '"
                                                  << block << "' (by '" << w << "')");
    auto written = stored_buffers(b);
    TS_SCHED_CHECK(std::none_of(written.begin(), written.end(),
                                [&](const Buffer& x) { return x.same_as(src); }),
                   "block '" << block << "' writes '" << src->name << "' too");
    std::set<std::string> used = used_names(f);
    std::string name = fresh_name(src->name + "_" + scope, used);
    Buffer dst(name, src->dtype, src->shape, scope);
    ReplaceBuffer rb(src, dst, true, false);
    PrimFunc g = rewrite_block(f, block, rb);
    seq = root_position(g, block).second;
    seq.insert(seq.begin() + long(pos), copy_nest(g, name, src, dst));
    out.push_back(name);
    return add_root_alloc(with_root_seq(g, seq), dst);
}

PrimFunc cache_write(const PrimFunc& f, const std::string& block, int index,
                     const std::string& scope, Names& out) {
    const Block* b = block_path(f, block).back().as<BlockRealize>()->block_node();
    check_scope(scope);
    TS_SCHED_CHECK(index >= 0 && index < int(b->writes.size()),
                   "write index " << index << " is out of range: block '" << block << "' writes "
                                  << b->writes.size() << " buffer(s)");
    Buffer dst = b->writes[index].buffer;
    TS_SCHED_CHECK(writers_of(f, dst, block).empty(),
                   "buffer '" << dst->name << "' has other writers besides block '" << block << "'");
    auto [pos, seq] = root_position(f, block);
    std::set<std::string> nest = block_names(seq[pos]);
    for (const std::string& r : readers_of(f, dst, block))
        TS_SCHED_CHECK(!nest.count(r), "buffer '" << dst->name << "' is read in the loop nest of block '"
                                                  << block << "' (by '" << r << "')");
    std::set<std::string> used = used_names(f);
    std::string name = fresh_name(dst->name + "_" + scope, used);
    Buffer cache(name, dst->dtype, dst->shape, scope);
    ReplaceBuffer rb(dst, cache, true, true);
    PrimFunc g = rewrite_block(f, block, rb);
    seq = root_position(g, block).second;
    seq.insert(seq.begin() + long(pos) + 1, copy_nest(g, name, cache, dst));
    out.push_back(name);
    return add_root_alloc(with_root_seq(g, seq), cache);
}

// ---------------------------------------------------------------- reductions

namespace {
// combiner(acc, value) with the node kind of `like`.
Expr combine_like(NodeType t, Expr a, Expr b) {
    switch (t) {
        case NodeType::Add: return Add::make(a, b);
        case NodeType::Mul: return Mul::make(a, b);
        case NodeType::Max: return Max::make(a, b);
        default: return Min::make(a, b);
    }
}
template <typename T>
bool split_update(const Expr& e, const Buffer& w, Expr& acc, Expr& val) {
    const T* op = e.as<T>();
    if (!op) return false;
    const BufferLoad* l = op->a.template as<BufferLoad>();
    if (!l || !l->buffer.same_as(w)) return false;
    acc = op->a, val = op->b;
    return true;
}
}  // namespace

PrimFunc rfactor(const PrimFunc& f, const std::string& loop, int factor_axis, Names& out) {
    Path lp = loop_path(f, loop);
    const For* l = lp.back().as<For>();
    auto inside = blocks_under(l->body);
    TS_SCHED_CHECK(inside.size() == 1, "loop '" << loop << "' must contain exactly one block");
    std::string bname = inside[0]->block_node()->name;
    Path bp = block_path(f, bname);
    const BlockRealize* r = bp.back().as<BlockRealize>();
    const Block* b = r->block_node();
    const BufferStore* st = b->body.as<BufferStore>();
    const BufferStore* ist = b->init.defined() ? b->init.as<BufferStore>() : nullptr;
    TS_SCHED_CHECK(st && ist, "block '" << bname << "' is not a reduction with an init");
    Expr acc, val;
    NodeType kind = st->value.node_type();
    bool ok = split_update<Add>(st->value, st->buffer, acc, val) ||
              split_update<Mul>(st->value, st->buffer, acc, val) ||
              split_update<Max>(st->value, st->buffer, acc, val) ||
              split_update<Min>(st->value, st->buffer, acc, val);
    TS_SCHED_CHECK(ok, "the update of block '" << bname << "' is not a recognized reduction");
    auto [pos, seq] = root_position(f, bname);
    TS_SCHED_CHECK(block_names(seq[pos]).size() == 1,
                   "block '" << bname << "' shares its loop nest with other blocks");
    const Buffer& w = st->buffer;
    int nd = int(w->shape.size());
    TS_SCHED_CHECK(factor_axis >= 0 && factor_axis <= nd,
                   "factor axis " << factor_axis << " is out of range [0, " << nd << "]");
    // Loops that reduction bindings use, and the role of the rfactor loop.
    std::vector<const For*> loops = loops_on_path(bp);
    std::set<const Variable*> spatial_uses, reduce_uses;
    for (size_t i = 0; i < b->iter_vars.size(); ++i)
        for (const For* x : loops)
            if (uses_var(r->iter_values[i], x->loop_var.get()))
                (b->iter_vars[i].kind == IterKind::Reduce ? reduce_uses : spatial_uses).insert(x->loop_var.get());
    TS_SCHED_CHECK(reduce_uses.count(l->loop_var.get()) && !spatial_uses.count(l->loop_var.get()),
                   "loop '" << loop << "' is not a reduction loop of block '" << bname << "'");
    TS_SCHED_CHECK(is_true(r->predicate), "block '" << bname
                                                     << "' has a predicate (a non-dividing split); "
                                                        "rfactor needs a block without one");
    std::set<std::string> used = used_names(f);
    std::map<const Variable*, Expr> loop_to_bv;
    std::vector<IterVar> rf_ivs;
    std::vector<Expr> rf_vals;
    Var vr;
    for (size_t i = 0; i < b->iter_vars.size(); ++i)
        if (b->iter_vars[i].kind != IterKind::Reduce) rf_ivs.push_back(b->iter_vars[i]), rf_vals.push_back(r->iter_values[i]);
    for (const For* x : loops) {
        if (!reduce_uses.count(x->loop_var.get())) continue;
        TS_SCHED_CHECK(!spatial_uses.count(x->loop_var.get()),
                       "loop '" << x->loop_var.name() << "' mixes spatial and reduction variables");
        TS_SCHED_CHECK(as_const_int(x->min) && as_const_int(x->extent),
                       "loop '" << x->loop_var.name() << "' has non-constant bounds");
        Var v("v" + x->loop_var.name());
        if (x == l) vr = v;
        loop_to_bv[x->loop_var.get()] = v;
        rf_ivs.push_back(IterVar{v, Range{x->min, x->extent},
                                 x == l ? IterKind::Spatial : IterKind::Reduce, ""});
        rf_vals.push_back(x->loop_var);
    }
    std::map<const Variable*, Expr> red_map;
    for (size_t i = 0; i < b->iter_vars.size(); ++i)
        if (b->iter_vars[i].kind == IterKind::Reduce)
            red_map[b->iter_vars[i].var.get()] = simplify(substitute(r->iter_values[i], loop_to_bv));
    std::vector<Expr> rf_shape = w->shape;
    rf_shape.insert(rf_shape.begin() + factor_axis, l->extent);
    Buffer wrf(fresh_name(w->name + "_rf", used), w->dtype, rf_shape, "global");
    std::vector<Expr> rf_idx = st->indices;
    rf_idx.insert(rf_idx.begin() + factor_axis, vr);
    Expr rf_acc = BufferLoad::make(wrf, rf_idx);
    Stmt rf_body = BufferStore::make(wrf, combine_like(kind, rf_acc, substitute(val, red_map)), rf_idx);
    Stmt rf_init = BufferStore::make(wrf, ist->value, rf_idx);
    std::string rf_name = fresh_name(bname + "_rf", used);
    Stmt rf_block = with_regions(b, rf_init, rf_body, rf_ivs, rf_name);
    PrimFunc g = f.with_body(replace_on_path(bp, BlockRealize::make(rf_vals, r->predicate, rf_block)));
    // The write-back block: w[s] = combine over vr of wrf[..., vr, ...].
    std::set<std::string> vused = var_names(g->body);
    std::vector<std::string> bases;
    std::vector<int64_t> extents;
    std::vector<IterVar> wb_ivs;
    std::map<const Variable*, Expr> sp_map;
    for (const IterVar& iv : b->iter_vars) {
        if (iv.kind == IterKind::Reduce) continue;
        TS_SCHED_CHECK(is_const_int(iv.dom.min, 0) && as_const_int(iv.dom.extent),
                       "block '" << bname << "' has a non-constant domain");
        Var nv(iv.var.name());
        sp_map[iv.var.get()] = nv;
        wb_ivs.push_back(IterVar{nv, iv.dom, IterKind::Spatial, ""});
        bases.push_back("ax" + std::to_string(bases.size()));
        extents.push_back(*as_const_int(iv.dom.extent));
    }
    Var vr2(vr.name());
    wb_ivs.push_back(IterVar{vr2, Range{int_const(0), l->extent}, IterKind::Reduce, ""});
    bases.push_back("ax" + std::to_string(bases.size()));
    extents.push_back(*as_const_int(l->extent));
    std::vector<Expr> widx;
    for (const Expr& e : st->indices) widx.push_back(substitute(e, sp_map));
    std::vector<Expr> ridx = widx;
    ridx.insert(ridx.begin() + factor_axis, vr2);
    Stmt wb_body = BufferStore::make(
        w, combine_like(kind, BufferLoad::make(w, widx), BufferLoad::make(wrf, ridx)), widx);
    Stmt wb_init = BufferStore::make(w, ist->value, widx);
    Stmt nest = make_nest(vused, bases, extents, [&](const std::vector<Var>& lv) {
        Stmt blk = with_regions(b, wb_init, wb_body, wb_ivs, bname);
        return BlockRealize::make(std::vector<Expr>(lv.begin(), lv.end()), Expr(), blk);
    });
    seq = root_position(g, rf_name).second;
    seq.insert(seq.begin() + long(pos) + 1, nest);
    out.push_back(rf_name);
    return add_root_alloc(with_root_seq(g, seq), wrf);
}

PrimFunc decompose_reduction(const PrimFunc& f, const std::string& block, const std::string& loop,
                             Names& out) {
    Path bp = block_path(f, block);
    const BlockRealize* r = bp.back().as<BlockRealize>();
    const Block* b = r->block_node();
    TS_SCHED_CHECK(b->init.defined(), "block '" << block << "' has no init to decompose");
    std::vector<const For*> loops = loops_on_path(bp);
    auto at = std::find_if(loops.begin(), loops.end(),
                           [&](const For* x) { return x->loop_var.name() == loop; });
    TS_SCHED_CHECK(at != loops.end(), "loop '" << loop << "' does not enclose block '" << block << "'");
    std::set<const Variable*> outer, inner;
    for (auto it = loops.begin(); it != at; ++it) outer.insert((*it)->loop_var.get());
    for (auto it = at; it != loops.end(); ++it) inner.insert((*it)->loop_var.get());
    std::set<const Variable*> kept, bound;
    for (const Variable* v : inner)
        if (distinct_in(r->iter_values, v)) bound.insert(v);
    for (auto it = at; it != loops.end(); ++it)
        TS_SCHED_CHECK(bound.count((*it)->loop_var.get()),
                       "loop '" << (*it)->loop_var.name() << "' repeats block '" << block
                                << "' without changing its variables; the reduction would accumulate twice");
    for (size_t i = 0; i < b->iter_vars.size(); ++i) {
        if (b->iter_vars[i].kind == IterKind::Reduce) {
            TS_SCHED_CHECK(!uses_any_var(r->iter_values[i], outer),
                           "loop '" << loop << "' is inside a reduction loop of block '" << block << "'");
            continue;
        }
        for (const Variable* v : inner)
            if (uses_var(r->iter_values[i], v)) kept.insert(v);
    }
    std::set<std::string> used = var_names(f->body);
    std::set<std::string> bused;
    for (const BlockRealize* x : blocks_under(f->body)) bused.insert(x->block_node()->name);
    std::map<const Variable*, Expr> lmap;
    std::vector<const For*> new_loops;
    std::vector<Var> new_vars;
    for (auto it = at; it != loops.end(); ++it) {
        if (!kept.count((*it)->loop_var.get())) continue;
        std::set<const Variable*> dropped_here;
        for (const Variable* v : inner)
            if (!kept.count(v)) dropped_here.insert(v);
        TS_SCHED_CHECK(!uses_any_var((*it)->min, dropped_here),
                       "the bounds of loop '" << (*it)->loop_var.name() << "' depend on a reduction loop");
        Var nv(fresh_name((*it)->loop_var.name() + "_init", used));
        lmap[(*it)->loop_var.get()] = nv;
        new_loops.push_back(*it);
        new_vars.push_back(nv);
    }
    std::vector<IterVar> ivs;
    std::vector<Expr> vals;
    std::map<const Variable*, Expr> bmap;
    for (size_t i = 0; i < b->iter_vars.size(); ++i) {
        if (b->iter_vars[i].kind == IterKind::Reduce) continue;
        Var nv(b->iter_vars[i].var.name());
        bmap[b->iter_vars[i].var.get()] = nv;
        ivs.push_back(IterVar{nv, b->iter_vars[i].dom, b->iter_vars[i].kind, b->iter_vars[i].thread_tag});
        vals.push_back(simplify(substitute(r->iter_values[i], lmap)));
    }
    Expr pred;
    std::vector<Expr> conj;
    std::function<void(const Expr&)> split_and = [&](const Expr& e) {
        if (const And* a = e.as<And>()) {
            split_and(a->a), split_and(a->b);
        } else {
            conj.push_back(e);
        }
    };
    if (!is_true(r->predicate)) split_and(r->predicate);
    std::set<const Variable*> dropped;
    for (const Variable* v : inner)
        if (!kept.count(v)) dropped.insert(v);
    for (const Expr& c : conj)
        if (!uses_any_var(c, dropped)) {
            Expr m = substitute(c, lmap);
            pred = pred.defined() ? (pred && m) : m;
        }
    std::string iname = fresh_name(block + "_init", bused);
    Stmt ibody = substitute(b->init, bmap);
    Stmt iblock = with_regions(b, Stmt(), ibody, ivs, iname);
    Stmt init_nest = BlockRealize::make(vals, pred.defined() ? simplify(pred) : Expr(), iblock);
    for (size_t i = new_loops.size(); i-- > 0;) {
        const For* x = new_loops[i];
        init_nest = For::make(new_vars[i], simplify(substitute(x->min, lmap)), x->extent,
                              ForKind::Serial, init_nest);
    }
    Stmt upd = Block::make(b->name, b->iter_vars, b->reads, b->writes, Stmt(), b->body,
                           b->alloc_buffers, b->annotations);
    PrimFunc g = f.with_body(replace_on_path(bp, BlockRealize::make(r->iter_values, r->predicate, upd)));
    Path lp = loop_path(g, loop);
    out.push_back(iname);
    return g.with_body(replace_on_path(lp, SeqStmt::make({init_nest, lp.back()})));
}

}  // namespace tessera::schedule::detail
