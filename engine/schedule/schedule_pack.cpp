// pack_operand: a layout transform of a matmul operand into panels, as a
// schedule primitive (see Schedule::pack_operand). The packing nest carries
// the annotation kPackOperandAnnotation so that the compiler can fold it into
// a constant when the operand is one (topi/pack_gemm.h).
#include <algorithm>
#include <optional>
#include <set>

#include "engine/schedule/primitives.h"
#include "engine/schedule/schedule.h"
#include "engine/schedule/schedule_util.h"
#include "engine/tir/functor.h"
#include "engine/tir/op.h"

namespace tessera::schedule::detail {

using namespace tessera::tir;
namespace sd = tessera::schedule::detail;

namespace {

// Loads X[e0, e1] -> Xp[e_t // F, e_o, e_t % F].
class PackLoads : public IRMutator {
public:
    PackLoads(Buffer from, Buffer to, int t, int64_t f)
        : m_from(std::move(from)), m_to(std::move(to)), m_t(t), m_f(f) {}
    /// Loads indexed by exactly `v` along t become Xp[vo, e_o, vi].
    void set_split(const Variable* v, Var vo, Var vi) {
        m_v = v;
        m_vo = std::move(vo);
        m_vi = std::move(vi);
    }
    int count = 0;

protected:
    using IRMutator::visit;
    Expr visit(const BufferLoad* op) override {
        Expr e = IRMutator::visit(op);
        const BufferLoad* l = e.as<BufferLoad>();
        if (!l->buffer.same_as(m_from)) return e;
        ++count;
        const Expr& et = l->indices[size_t(m_t)];
        const Expr& eo = l->indices[size_t(1 - m_t)];
        if (m_v && et.as<Variable>() == m_v) return BufferLoad::make(m_to, {m_vo, eo, m_vi});
        Expr f = IntImm::make(et.dtype(), m_f);
        return BufferLoad::make(m_to, {floordiv(et, f), eo, floormod(et, f)});
    }

private:
    Buffer m_from, m_to;
    int m_t;
    int64_t m_f;
    const Variable* m_v = nullptr;
    Var m_vo, m_vi;
};

// When the block binds the iteration variable `v` to `outer * F + inner` with
// `inner` a loop of extent F: (outer, inner). Lets the packed access use two
// block variables instead of v // F and v % F (which do not vectorize).
std::optional<std::pair<Expr, Var>> split_binding(const sd::Path& path, const Expr& binding,
                                                  int64_t F) {
    const Add* add = binding.as<Add>();
    if (!add) return std::nullopt;
    for (int side = 0; side < 2; ++side) {
        const Expr& rest = side ? add->a : add->b;
        const Variable* inner = (side ? add->b : add->a).as<Variable>();
        if (!inner) continue;
        // rest must be a multiple of F: rest == (rest // F) * F.
        Expr outer = sd::simp(floordiv(rest, IntImm::make(rest.dtype(), F)));
        auto diff = sd::const_diff(sd::simp(outer * IntImm::make(rest.dtype(), F)), rest);
        if (!diff || *diff != 0) continue;
        for (const For* l : sd::loops_on_path(path))
            if (l->loop_var.get() == inner && is_const_int(l->min, 0) && is_const_int(l->extent, F))
                return std::make_pair(outer, l->loop_var);
    }
    return std::nullopt;
}

}  // namespace

PrimFunc pack_operand(const PrimFunc& f, const std::string& block, const std::string& buffer,
                      int tiled_dim, int64_t factor, bool parallel, int vector_lanes, Names& out_names) {
    TS_SCHED_CHECK(factor >= 1, "the panel width must be at least 1, got " << factor);
    TS_SCHED_CHECK(tiled_dim == 0 || tiled_dim == 1,
                   "the tiled dimension must be 0 or 1, got " << tiled_dim);
    std::optional<sd::Path> path = sd::find_block(f->body, block);
    TS_SCHED_CHECK(path && block != "root", "no block named '" << block << "'");
    const BlockRealize* realize = path->back().as<BlockRealize>();
    const Block* b = realize->block_node();
    Buffer x;
    for (const Buffer& p : f->params)
        if (p->name == buffer) x = p;
    TS_SCHED_CHECK(x.defined(), "no parameter named '" << buffer << "' (only a function parameter can be packed)");
    TS_SCHED_CHECK(x->shape.size() == 2, "'" << buffer << "' has rank " << x->shape.size() << "; only rank-2 operands are packed");
    TS_SCHED_CHECK(!stores_buffer(f->body, x), "'" << buffer << "' is written by the function");
    for (const Expr& d : x->shape)
        TS_SCHED_CHECK(as_const_int(d), "'" << buffer << "' has a symbolic shape");
    const std::vector<int64_t> shape = x.const_shape();
    const int t = tiled_dim;
    const int64_t dt = shape[size_t(t)], d_o = shape[size_t(1 - t)], F = factor;
    const int64_t panels = (dt + F - 1) / F;

    // The root block's statements; find the one holding the matmul block.
    const BlockRealize* root_r = f->body.as<BlockRealize>();
    TS_SCHED_CHECK(root_r, "the function has no root block");
    const Block* root = root_r->block_node();
    std::vector<Stmt> seq = sd::sequence(root->body);
    size_t pos = seq.size();
    for (size_t i = 0; i < seq.size() && pos == seq.size(); ++i)
        for (const BlockRealize* r : sd::blocks_under(seq[i]))
            if (r->block_node()->name == block) pos = i;
    TS_SCHED_CHECK(pos < seq.size(), "block '" << block << "' is not under the root block");

    std::set<std::string> used = sd::var_names(f->body);
    for (const Buffer& p : f->params) used.insert(p->name);
    for (const BlockRealize* r : sd::blocks_under(f->body)) {
        used.insert(r->block_node()->name);
        for (const Buffer& a : r->block_node()->alloc_buffers) used.insert(a->name);
    }
    const std::string pname = sd::fresh_name(x->name + "_packed", used);
    const std::string bname = sd::fresh_name(x->name + "_pack", used);
    Buffer xp(pname, x->dtype, {sd::int_const(panels), sd::int_const(d_o), sd::int_const(F)});

    // The matmul block reads the panels: Xp[v // F, k, v % F], or with v
    // split into two block variables Xp[vo, k, vi] where the binding allows.
    std::vector<Expr> values = realize->iter_values;
    const Variable* tv = nullptr;
    for (const std::vector<Expr>& idx : sd::load_indices(b, x))
        tv = idx[size_t(t)].as<Variable>();
    size_t tpos = b->iter_vars.size();
    for (size_t i = 0; tv && i < b->iter_vars.size(); ++i)
        if (b->iter_vars[i].var.get() == tv) tpos = i;
    PackLoads rw(x, xp, t, F);
    Stmt init = b->init.defined() ? rw.mutate(b->init) : Stmt();
    Stmt body = rw.mutate(b->body);
    std::vector<IterVar> ivs = b->iter_vars;
    TS_SCHED_CHECK(rw.count > 0, "block '" << block << "' does not read '" << buffer << "'");
    if (tpos < b->iter_vars.size()) {
        if (auto sb = split_binding(*path, sd::simp(values[tpos]), F)) {
            const IterVar& old = b->iter_vars[tpos];
            Var vo(sd::fresh_name(old.var.name() + "_o", used));
            Var vi(sd::fresh_name(old.var.name() + "_i", used));
            ivs.clear();
            std::vector<Expr> nv;
            for (size_t i = 0; i < b->iter_vars.size(); ++i) {
                if (i != tpos) {
                    ivs.push_back(b->iter_vars[i]);
                    nv.push_back(values[i]);
                    continue;
                }
                ivs.push_back(IterVar{vo, Range{sd::int_const(0), sd::int_const(panels)}, old.kind, ""});
                ivs.push_back(IterVar{vi, Range{sd::int_const(0), sd::int_const(F)}, old.kind, ""});
                nv.push_back(sb->first);
                nv.push_back(sb->second);
            }
            PackLoads split(x, xp, t, F);
            split.set_split(tv, vo, vi);
            std::map<const Variable*, Expr> vmap{{tv, vo * sd::int_const(F) + vi}};
            init = b->init.defined() ? substitute(split.mutate(b->init), vmap) : Stmt();
            body = substitute(split.mutate(b->body), vmap);
            values = nv;
        }
    }
    Stmt nb = sd::with_regions(b, init, body, ivs, b->name);
    Stmt new_nest_root =
        sd::replace_on_path(*path, BlockRealize::make(values, realize->predicate, nb));

    // The packing nest: for p0, p1, p2: Xp[p0, p1, p2] = X[.. p0 * F + p2 ..] (0 past the end).
    std::vector<Var> loops, iters;
    for (const char* base : {"p0", "p1", "p2"}) loops.emplace_back(sd::fresh_name(base, used));
    for (const char* base : {"vp0", "vp1", "vp2"}) iters.emplace_back(sd::fresh_name(base, used));
    Expr col = iters[0] * sd::int_const(F) + iters[2];
    std::vector<Expr> idx(2);
    idx[size_t(1 - t)] = iters[1];
    Expr value;
    if (dt % F == 0) {
        idx[size_t(t)] = col;
        value = BufferLoad::make(x, idx);
    } else {
        idx[size_t(t)] = min(col, sd::int_const(dt - 1));
        value = select(col < sd::int_const(dt), BufferLoad::make(x, idx), make_zero(x->dtype));
    }
    Stmt store = BufferStore::make(xp, value, {iters[0], iters[1], iters[2]});
    std::vector<IterVar> pivs;
    const int64_t ext[3] = {panels, d_o, F};
    for (int i = 0; i < 3; ++i)
        pivs.push_back(IterVar{iters[size_t(i)], Range{sd::int_const(0), sd::int_const(ext[i])},
                              IterKind::Spatial, ""});
    // The annotation lets prepack_constant_operands find the nest again.
    Stmt tmp = Block::make(bname, {}, {}, {}, Stmt(), store, {},
                           {{kPackOperandAnnotation, x->name + ":" + std::to_string(t) + ":" +
                                                  std::to_string(F)}});
    Stmt pblock = sd::with_regions(tmp.as<Block>(), Stmt(), store, pivs, bname);
    Stmt nest = BlockRealize::make({loops[0], loops[1], loops[2]}, Expr(), pblock);
    const bool vec = vector_lanes > 0 && F % vector_lanes == 0;
    nest = For::make(loops[2], sd::int_const(0), sd::int_const(F),
                     vec ? ForKind::Vectorized : ForKind::Serial, nest);
    // Rows of X outermost when the panel width runs along X's rows (B as
    // K x N): X is read front to back, each row split over the panels.
    const bool rows_outer = t == 1;
    const ForKind outer_kind = parallel ? ForKind::Parallel : ForKind::Serial;
    if (rows_outer) {
        nest = For::make(loops[0], sd::int_const(0), sd::int_const(panels), ForKind::Serial, nest);
        nest = For::make(loops[1], sd::int_const(0), sd::int_const(d_o), outer_kind, nest);
    } else {
        nest = For::make(loops[1], sd::int_const(0), sd::int_const(d_o), ForKind::Serial, nest);
        nest = For::make(loops[0], sd::int_const(0), sd::int_const(panels),
                         parallel && panels > 1 ? ForKind::Parallel : ForKind::Serial, nest);
    }

    // Root: the packing nest right before the matmul's nest.
    const Block* new_root = new_nest_root.as<BlockRealize>()->block_node();
    std::vector<Stmt> nseq = sd::sequence(new_root->body);
    nseq.insert(nseq.begin() + long(pos), nest);
    Stmt rb = Block::make(new_root->name, new_root->iter_vars, new_root->reads, new_root->writes,
                          new_root->init, SeqStmt::make(nseq), new_root->alloc_buffers,
                          new_root->annotations);
    const BlockRealize* nr = new_nest_root.as<BlockRealize>();
    PrimFunc out = f.with_body(BlockRealize::make(nr->iter_values, nr->predicate, rb));
    out = sd::add_root_alloc(out, xp);
    out_names = {bname, pname};
    return out;
}

}  // namespace tessera::schedule::detail
