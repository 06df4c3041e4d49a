// Operand packing for matmul kernels (see pack_gemm.h).
#include "engine/topi/pack_gemm.h"

#include <algorithm>
#include <cstring>
#include <set>

#include "engine/schedule/primitives.h"
#include "engine/schedule/schedule_util.h"
#include "engine/tir/functor.h"
#include "engine/tir/op.h"

namespace tessera::topi {

using namespace tessera::tir;
namespace sd = tessera::schedule::detail;

namespace {

constexpr const char* kPackAnnotation = "tessera.pack_operand";

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

bool stores_to(const Stmt& s, const Buffer& b) {
    bool found = false;
    post_order_visit(s, [&](const Object* o) {
        if (o->node_type == NodeType::BufferStore &&
            static_cast<const BufferStore*>(o)->buffer.same_as(b))
            found = true;
    });
    return found;
}

}  // namespace

std::optional<PackResult> pack_matmul_operand(const PrimFunc& f, const PackSpec& spec) {
    if (spec.factor < 1 || (spec.tiled_dim != 0 && spec.tiled_dim != 1)) return std::nullopt;
    std::optional<sd::Path> path = sd::find_block(f->body, spec.block);
    if (!path) return std::nullopt;
    const BlockRealize* realize = path->back().as<BlockRealize>();
    const Block* b = realize->block_node();
    Buffer x;
    for (const Buffer& p : f->params)
        if (p->name == spec.buffer) x = p;
    if (!x.defined() || x->shape.size() != 2 || stores_to(f->body, x)) return std::nullopt;
    for (const Expr& d : x->shape)
        if (!as_const_int(d)) return std::nullopt;
    const std::vector<int64_t> shape = x.const_shape();
    const int t = spec.tiled_dim;
    const int64_t dt = shape[size_t(t)], d_o = shape[size_t(1 - t)], F = spec.factor;
    const int64_t panels = (dt + F - 1) / F;

    // The root block's statements; find the one holding the matmul block.
    const BlockRealize* root_r = f->body.as<BlockRealize>();
    if (!root_r) return std::nullopt;
    const Block* root = root_r->block_node();
    std::vector<Stmt> seq;
    if (const SeqStmt* s = root->body.as<SeqStmt>())
        seq = s->seq;
    else
        seq = {root->body};
    size_t pos = seq.size();
    for (size_t i = 0; i < seq.size() && pos == seq.size(); ++i)
        for (const BlockRealize* r : sd::blocks_under(seq[i]))
            if (r->block_node()->name == spec.block) pos = i;
    if (pos == seq.size()) return std::nullopt;

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
    if (rw.count == 0) return std::nullopt;
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
                           {{kPackAnnotation, x->name + ":" + std::to_string(t) + ":" +
                                                  std::to_string(F)}});
    Stmt pblock = sd::with_regions(tmp.as<Block>(), Stmt(), store, pivs, bname);
    Stmt nest = BlockRealize::make({loops[0], loops[1], loops[2]}, Expr(), pblock);
    const bool vec = spec.vector_lanes > 0 && F % spec.vector_lanes == 0;
    nest = For::make(loops[2], sd::int_const(0), sd::int_const(F),
                     vec ? ForKind::Vectorized : ForKind::Serial, nest);
    // Rows of X outermost when the panel width runs along X's rows (B as
    // K x N): X is read front to back, each row split over the panels.
    const bool rows_outer = t == 1;
    const ForKind outer_kind = spec.parallel ? ForKind::Parallel : ForKind::Serial;
    if (rows_outer) {
        nest = For::make(loops[0], sd::int_const(0), sd::int_const(panels), ForKind::Serial, nest);
        nest = For::make(loops[1], sd::int_const(0), sd::int_const(d_o), outer_kind, nest);
    } else {
        nest = For::make(loops[1], sd::int_const(0), sd::int_const(d_o), ForKind::Serial, nest);
        nest = For::make(loops[0], sd::int_const(0), sd::int_const(panels),
                         spec.parallel && panels > 1 ? ForKind::Parallel : ForKind::Serial, nest);
    }

    // Root: the packing nest right before the matmul's nest.
    const Block* new_root = new_nest_root.as<BlockRealize>()->block_node();
    std::vector<Stmt> nseq;
    if (const SeqStmt* s = new_root->body.as<SeqStmt>())
        nseq = s->seq;
    else
        nseq = {new_root->body};
    nseq.insert(nseq.begin() + long(pos), nest);
    Stmt rb = Block::make(new_root->name, new_root->iter_vars, new_root->reads, new_root->writes,
                          new_root->init, SeqStmt::make(nseq), new_root->alloc_buffers,
                          new_root->annotations);
    const BlockRealize* nr = new_nest_root.as<BlockRealize>();
    PrimFunc out = f.with_body(BlockRealize::make(nr->iter_values, nr->predicate, rb));
    out = sd::add_root_alloc(out, xp);
    return PackResult{out, bname, pname};
}

namespace {

// The packing block under a root statement (a nest of loops around one block
// realize), or null.
const Block* pack_block_of(const Stmt& s) {
    Stmt cur = s;
    while (const For* l = cur.as<For>()) cur = l->body;
    const BlockRealize* r = cur.as<BlockRealize>();
    if (!r) return nullptr;
    const Block* b = r->block_node();
    return b->annotations.count(kPackAnnotation) ? b : nullptr;
}

bool loads_from(const Stmt& s, const Buffer& b) {
    bool found = false;
    post_order_visit(s, [&](const Object* o) {
        if (o->node_type == NodeType::BufferLoad &&
            static_cast<const BufferLoad*>(o)->buffer.same_as(b))
            found = true;
    });
    return found;
}

}  // namespace

PrepackResult prepack_constant_operands(const PrimFunc& f,
                                        const std::function<bool(size_t)>& is_constant) {
    PrepackResult out{f, {}};
    const BlockRealize* root_r = f->body.as<BlockRealize>();
    if (!root_r) return out;
    const Block* root = root_r->block_node();
    std::vector<Stmt> seq;
    if (const SeqStmt* s = root->body.as<SeqStmt>())
        seq = s->seq;
    else
        seq = {root->body};
    std::vector<Buffer> params = f->params;
    std::vector<Buffer> allocs = root->alloc_buffers;
    std::vector<Stmt> kept;
    for (size_t i = 0; i < seq.size(); ++i) {
        const Block* pb = pack_block_of(seq[i]);
        const BufferStore* st = pb ? pb->body.as<BufferStore>() : nullptr;
        if (!st) {
            kept.push_back(seq[i]);
            continue;
        }
        const std::string& ann = pb->annotations.at(kPackAnnotation);
        const size_t c1 = ann.rfind(':', ann.rfind(':') - 1), c2 = ann.rfind(':');
        const std::string src = ann.substr(0, c1);
        const int t = std::stoi(ann.substr(c1 + 1, c2 - c1 - 1));
        const int64_t F = std::stoll(ann.substr(c2 + 1));
        size_t pi = params.size();
        for (size_t p = 0; p < params.size(); ++p)
            if (params[p]->name == src) pi = p;
        const Buffer xp = st->buffer;
        auto alloc_it = std::find_if(allocs.begin(), allocs.end(),
                                     [&](const Buffer& a) { return a.same_as(xp); });
        bool ok = pi < params.size() && alloc_it != allocs.end() && is_constant(pi);
        if (ok) {
            // The source must be read by nothing but this nest.
            const Buffer x = params[pi];
            for (size_t j = 0; j < seq.size() && ok; ++j)
                if (j != i && loads_from(seq[j], x)) ok = false;
            if (ok) {
                out.operands.push_back(PrepackedOperand{pi, x.const_shape(), t, F});
                params[pi] = xp;
                allocs.erase(alloc_it);
                continue;  // drop the nest
            }
        }
        kept.push_back(seq[i]);
    }
    if (out.operands.empty()) return out;
    Stmt body = kept.size() == 1 ? kept[0] : SeqStmt::make(kept);
    Stmt rb = Block::make(root->name, root->iter_vars, root->reads, root->writes, root->init, body,
                          allocs, root->annotations);
    out.func = PrimFunc(f->name, params,
                        BlockRealize::make(root_r->iter_values, root_r->predicate, rb), f->attrs);
    return out;
}

std::vector<uint8_t> pack_panels(const void* x, const std::vector<int64_t>& shape,
                                 size_t elem_bytes, int tiled_dim, int64_t factor) {
    const int64_t dt = shape[size_t(tiled_dim)], d_o = shape[size_t(1 - tiled_dim)];
    const int64_t panels = (dt + factor - 1) / factor;
    std::vector<uint8_t> out(size_t(panels * d_o * factor) * elem_bytes, 0);
    const auto* src = static_cast<const uint8_t*>(x);
    for (int64_t p = 0; p < panels; ++p)
        for (int64_t o = 0; o < d_o; ++o)
            for (int64_t i = 0; i < factor; ++i) {
                const int64_t col = p * factor + i;
                if (col >= dt) break;
                const int64_t r = tiled_dim == 1 ? o : col, c = tiled_dim == 1 ? col : o;
                std::memcpy(&out[size_t((p * d_o + o) * factor + i) * elem_bytes],
                            src + size_t(r * shape[1] + c) * elem_bytes, elem_bytes);
            }
    return out;
}

}  // namespace tessera::topi
