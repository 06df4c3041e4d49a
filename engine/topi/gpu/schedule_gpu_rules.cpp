// GPU schedule rules for reduction stages: the classic shared-memory tiled
// SGEMM (also used as implicit GEMM for convolutions) and block-wide row
// reductions with a shared-memory tree. Each rule builds the stage's loop IR
// directly: sync-separated phases are sibling threadIdx.x loops, so the
// interpreter (which runs thread loops one after another) computes exactly
// what the kernel computes.
#include "engine/topi/gpu/schedule_gpu_rules.h"

#include <functional>
#include <set>

#include "engine/tir/functor.h"
#include "engine/tir/op.h"
#include "engine/tir/passes/simplify.h"

namespace tessera::topi::gpu_rules {

using namespace tir;

namespace {

Expr ci(int64_t v) { return Expr(v); }

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

std::set<const Variable*> vars_in(const Expr& e) {
    std::set<const Variable*> vs;
    post_order_visit(Evaluate::make(e), [&](const Object* n) {
        if (n->node_type == NodeType::Variable) vs.insert(static_cast<const Variable*>(n));
    });
    return vs;
}

bool uses_any(const Expr& e, const std::vector<IterVar>& ivs) {
    auto vs = vars_in(e);
    for (const IterVar& iv : ivs)
        if (vs.count(iv.var.get())) return true;
    return false;
}

int64_t product(const std::vector<IterVar>& ivs) {
    int64_t n = 1;
    for (const IterVar& iv : ivs) n *= *as_const_int(iv.dom.extent);
    return n;
}

// Row-major decomposition of `flat` into the variables of `ivs`: adds
// var -> index entries to `map`.
void decompose(const Expr& flat, const std::vector<IterVar>& ivs,
               std::map<const Variable*, Expr>& map) {
    int64_t stride = 1;
    for (size_t i = ivs.size(); i-- > 0;) {
        int64_t ext = *as_const_int(ivs[i].dom.extent);
        Expr v = stride == 1 ? flat : floordiv(flat, ci(stride));
        if (i > 0) v = floormod(v, ci(ext));
        if (ext == 1) v = ci(0);
        map[ivs[i].var.get()] = v;
        stride *= ext;
    }
}

Stmt thread_loop(const Var& v, int64_t n, const char* tag, const Stmt& body) {
    return For::make(v, ci(0), ci(n), ForKind::ThreadBinding, body, tag);
}

Stmt unrolled(const Var& v, int64_t n, const Stmt& body) {
    return For::make(v, ci(0), ci(n), ForKind::Unrolled, body);
}

Expr combine(NodeType kind, const Expr& a, const Expr& b) {
    switch (kind) {
        case NodeType::Add:
            return a + b;
        case NodeType::Mul:
            return a * b;
        case NodeType::Max:
            return tir::max(a, b);
        default:
            return tir::min(a, b);
    }
}

bool const_value(const Expr& e, double& v) {
    if (const IntImm* i = e.as<IntImm>()) return v = double(i->value), true;
    if (const FloatImm* f = e.as<FloatImm>()) return v = f->value, true;
    return false;
}

// The tile configuration of the SGEMM rule for one output extent.
int64_t block_tile(int64_t extent) { return extent >= 128 ? 128 : extent >= 64 ? 64 : 32; }

// Replaces every load of one buffer by an expression.
class ReplaceLoads : public IRMutator {
public:
    ReplaceLoads(const Buffer& b, const Expr& with) : m_buffer(b), m_with(with) {}

protected:
    Expr visit(const BufferLoad* op) override {
        if (op->buffer.same_as(m_buffer)) return m_with;
        return IRMutator::visit(op);
    }

private:
    Buffer m_buffer;
    Expr m_with;
};

}  // namespace

Stmt epilogue_store(const Epilogue& ep, const std::vector<Expr>& indices, const Expr& result) {
    std::map<const Variable*, Expr> map;
    for (size_t i = 0; i < ep.vars.size(); ++i) map[ep.vars[i].get()] = indices[i];
    Expr value = substitute(ReplaceLoads(ep.in, result).mutate(ep.value), map);
    return BufferStore::make(ep.out, value, indices);
}

bool analyze_stage(const Stmt& nest, Stage& out) {
    std::vector<const For*> loops;
    Stmt s = nest;
    while (const For* f = s.as<For>()) {
        loops.push_back(f);
        s = f->body;
    }
    const BlockRealize* br = s.as<BlockRealize>();
    if (!br) return false;
    const Block* b = br->block_node();
    if (loops.size() != b->iter_vars.size() || !b->alloc_buffers.empty()) return false;
    if (br->predicate.defined() && !is_const_int(br->predicate, 1)) return false;
    for (size_t i = 0; i < loops.size(); ++i) {
        const For* f = loops[i];
        const IterVar& iv = b->iter_vars[i];
        const int64_t* ext = as_const_int(f->extent);
        const int64_t* dext = as_const_int(iv.dom.extent);
        if (f->kind != ForKind::Serial || !is_const_int(f->min, 0) || !ext || !dext ||
            *ext != *dext || *ext <= 0 || !is_const_int(iv.dom.min, 0))
            return false;
        const Variable* bound = br->iter_values[i].as<Variable>();
        if (bound != f->loop_var.get()) return false;
        (iv.kind == IterKind::Spatial ? out.spatial : out.reduce).push_back(iv);
    }
    if (out.reduce.empty() || out.spatial.size() + out.reduce.size() != loops.size()) return false;
    out.update = b->body.as<BufferStore>();
    out.init = b->init.defined() ? b->init.as<BufferStore>() : nullptr;
    if (!out.update || !out.init || !out.init->buffer.same_as(out.update->buffer)) return false;
    NodeType k = out.update->value.node_type();
    if (k != NodeType::Add && k != NodeType::Mul && k != NodeType::Max && k != NodeType::Min)
        return false;
    const Expr& value = out.update->value;
    const Expr *lhs = nullptr, *rhs = nullptr;
    if (const Add* x = value.as<Add>()) lhs = &x->a, rhs = &x->b;
    if (const Mul* x = value.as<Mul>()) lhs = &x->a, rhs = &x->b;
    if (const Max* x = value.as<Max>()) lhs = &x->a, rhs = &x->b;
    if (const Min* x = value.as<Min>()) lhs = &x->a, rhs = &x->b;
    const BufferLoad* acc = lhs ? lhs->as<BufferLoad>() : nullptr;
    if (!acc || !acc->buffer.same_as(out.update->buffer) ||
        acc->indices.size() != out.update->indices.size())
        return false;
    for (size_t i = 0; i < acc->indices.size(); ++i)
        if (!structural_equal(acc->indices[i], out.update->indices[i])) return false;
    // The reduced value must not read the output (only the accumulator does).
    bool reads_output = false;
    post_order_visit(Evaluate::make(*rhs), [&](const Object* n) {
        if (n->node_type == NodeType::BufferLoad &&
            static_cast<const BufferLoad*>(n)->buffer.same_as(out.update->buffer))
            reads_output = true;
    });
    if (reads_output) return false;
    out.kind = k;
    out.value = *rhs;
    out.block = b;
    return !uses_any(out.init->value, out.reduce);
}

Stmt gemm_stage(const Stage& st, const Epilogue* ep, int64_t min_blocks) {
    if (st.kind != NodeType::Add) return Stmt();
    const Mul* prod = st.value.as<Mul>();
    if (!prod) return Stmt();
    double init_value = 0;
    if (!const_value(st.init->value, init_value) || init_value != 0) return Stmt();
    DataType dt = st.update->buffer->dtype;
    if (!dt.is_float() || dt.lanes != 1 || prod->a.dtype() != dt || prod->b.dtype() != dt)
        return Stmt();
    Expr X = prod->a, Y = prod->b;
    std::vector<IterVar> I, J, B;
    for (const IterVar& iv : st.spatial) {
        bool x = uses_any(X, {iv}), y = uses_any(Y, {iv});
        (x && !y ? I : y && !x ? J : B).push_back(iv);
    }
    if (I.empty() || J.empty()) return Stmt();
    int64_t M = product(I), N = product(J), K = product(st.reduce), NB = product(B);
    if (M < 32 || N < 32 || K < 8) return Stmt();
    const int64_t T = 256, BK = 8;
    int64_t BM = block_tile(M), BN = block_tile(N);
    // Enough blocks to fill a large GPU: the larger tile side halves (down
    // to 32) while the grid has fewer than min_blocks. ResNet-18's last
    // stage at batch 16 ran 28 blocks of 128 x 128 tiles (7x7x512, K 4608).
    auto blocks = [&] { return ceil_div(M, BM) * ceil_div(N, BN) * NB; };
    while (blocks() < min_blocks && (BM > 32 || BN > 32)) {
        if (BM >= BN && BM > 32)
            BM /= 2;
        else
            BN /= 2;
    }
    int64_t TM = BM / 16, TN = BN / 16;
    int64_t GY = ceil_div(M, BM), GX = ceil_div(N, BN);
    if (GY > 65535 || NB > 65535) return Stmt();
    const std::string& name = st.block->name;

    Var bz(name + "_bz"), by(name + "_by"), bx(name + "_bx");
    std::map<const Variable*, Expr> batch_map;
    decompose(bz, B, batch_map);
    Expr i0 = by * ci(BM), j0 = bx * ci(BN);
    // Which loop of a tile fetch runs fastest: the tile's rows where the
    // operand's innermost index follows them, else k (coalesced reads).
    auto rows_fastest = [&](const Expr& operand, const std::vector<IterVar>& rows) {
        const BufferLoad* l = operand.as<BufferLoad>();
        if (!l)  // an inlined producer (a conv's zero padding): the load inside it
            post_order_visit(Evaluate::make(operand), [&](const Object* n) {
                if (!l && n->node_type == NodeType::BufferLoad)
                    l = static_cast<const BufferLoad*>(n);
            });
        return l && !l->indices.empty() && uses_any(l->indices.back(), rows);
    };
    bool xr = rows_fastest(X, I), yr = rows_fastest(Y, J);
    // A k-fastest fetch stores with a stride of a tile row: 4 floats of
    // padding per row keep a warp's stores on distinct banks.
    Buffer as(name + "_a_shared", dt, {ci(BK), ci(BM + (xr ? 0 : 4))}, "shared");
    Buffer bs(name + "_b_shared", dt, {ci(BK), ci(BN + (yr ? 0 : 4))}, "shared");
    Buffer acc(name + "_acc_local", dt, {ci(T), ci(TM), ci(TN)}, "local");
    Buffer af(name + "_a_frag", dt, {ci(TM)}, "local");
    Buffer bf(name + "_b_frag", dt, {ci(TN)}, "local");
    Var ko("ko");

    // Cooperative fetch of one operand tile (k tile `kt`): thread t reads
    // elements f * T + t of the tile, rows fastest or k fastest; `store`
    // makes the statement that keeps element f's value (at tile row rr and
    // column kk).
    using Keep = std::function<Stmt(const Var& t, const Var& f, const Var& kk, const Var& rr,
                                    const Expr& value)>;
    auto fetch = [&](const Expr& operand, const std::vector<IterVar>& rows, int64_t R, int64_t BR,
                     const Expr& r0, const Expr& kt, bool rows_fastest, const Keep& keep) -> Stmt {
        Var t("tx"), f("f"), idx("idx"), rr("rr"), kk("kk");
        std::map<const Variable*, Expr> m = batch_map;
        decompose(r0 + rr, rows, m);
        decompose(kt * ci(BK) + kk, st.reduce, m);
        Expr cond;
        if (R % BR != 0) cond = r0 + rr < ci(R);
        if (K % BK != 0) {
            Expr c = kt * ci(BK) + kk < ci(K);
            cond = cond.defined() ? (cond && c) : c;
        }
        Stmt kept = keep(t, f, kk, rr, substitute(operand, m));
        if (cond.defined()) kept = IfThenElse::make(cond, kept, keep(t, f, kk, rr, make_zero(dt)));
        Expr rv = rows_fastest ? floormod(idx, ci(BR)) : floordiv(idx, ci(BK));
        Expr kv = rows_fastest ? floordiv(idx, ci(BR)) : floormod(idx, ci(BK));
        Stmt body = LetStmt::make(rr, rv, LetStmt::make(kk, kv, kept));
        body = LetStmt::make(idx, f * ci(T) + t, body);
        return thread_loop(t, T, "threadIdx.x", unrolled(f, BR * BK / T, body));
    };
    auto to_shared = [](const Buffer& dst) -> Keep {
        return [dst](const Var&, const Var&, const Var& kk, const Var& rr, const Expr& value) {
            return BufferStore::make(dst, value, {kk, rr});
        };
    };
    // The next k tile goes through registers (prefetch): read from global
    // memory before the current tile's products, stored to shared memory
    // after them, so the loads' latency hides behind the arithmetic.
    Buffer ast(name + "_a_stage", dt, {ci(T), ci(BM * BK / T)}, "local");
    Buffer bst(name + "_b_stage", dt, {ci(T), ci(BN * BK / T)}, "local");
    auto to_stage = [](const Buffer& stage) -> Keep {
        return [stage](const Var& t, const Var& f, const Var&, const Var&, const Expr& value) {
            return BufferStore::make(stage, value, {t, f});
        };
    };
    auto from_stage = [&](const Buffer& stage, int64_t BR, const Buffer& dst,
                          bool rows_fastest) -> Stmt {
        Var t("tx"), f("f"), idx("idx");
        Expr rv = rows_fastest ? floormod(idx, ci(BR)) : floordiv(idx, ci(BK));
        Expr kv = rows_fastest ? floordiv(idx, ci(BR)) : floormod(idx, ci(BK));
        Stmt body = LetStmt::make(idx, f * ci(T) + t,
                                  BufferStore::make(dst, BufferLoad::make(stage, {t, f}), {kv, rv}));
        return thread_loop(t, T, "threadIdx.x", unrolled(f, BR * BK / T, body));
    };

    // Thread t = 16 ty + tx owns TM rows and TN columns of the block tile:
    // runs of 4 (ty * 4 .. ty * 4 + 3, then the same 64 rows further) where
    // the tile allows, so each k step reads its fragments from shared memory
    // as float4s; else TM consecutive rows from ty * TM.
    auto owned = [](const Expr& pos, int64_t TT, int64_t BT, const Expr& m) -> Expr {
        if (TT % 4 != 0) return pos * ci(TT) + m;
        return floordiv(m, ci(4)) * ci(BT / (TT / 4)) + pos * ci(4) + floormod(m, ci(4));
    };
    // frag[m] = tile[kk, owned(pos, m)] for m < TT: 4-wide vectorized runs
    // where TT allows.
    auto load_fragment = [&](const Buffer& frag, const Buffer& tile, const Expr& kk,
                             const Expr& pos, int64_t TT, int64_t BT) -> Stmt {
        if (TT % 4 != 0) {
            Var m("m");
            return unrolled(m, TT, BufferStore::make(frag, BufferLoad::make(tile, {kk, owned(pos, TT, BT, m)}), {m}));
        }
        Var mo("mo"), mi("mi");
        Stmt lane = BufferStore::make(
            frag, BufferLoad::make(tile, {kk, mo * ci(BT / (TT / 4)) + pos * ci(4) + mi}),
            {mo * ci(4) + mi});
        return unrolled(mo, TT / 4, For::make(mi, ci(0), ci(4), ForKind::Vectorized, lane));
    };
    auto per_thread =
        [&](const std::function<Stmt(const Var& t, const Expr& ty, const Expr& tx)>& fn) {
            Var t("tx");
            return thread_loop(t, T, "threadIdx.x",
                               fn(t, floordiv(t, ci(16)), floormod(t, ci(16))));
        };
    Stmt init = per_thread([&](const Var& t, const Expr&, const Expr&) {
        Var m("m"), n("n");
        return unrolled(m, TM, unrolled(n, TN, BufferStore::make(acc, st.init->value, {t, m, n})));
    });
    Stmt compute = per_thread([&](const Var& t, const Expr& ty, const Expr& tx) {
        Var kk("kk"), m2("m"), n2("n");
        Stmt la = load_fragment(af, as, kk, ty, TM, BM);
        Stmt lb = load_fragment(bf, bs, kk, tx, TN, BN);
        Expr upd = BufferLoad::make(acc, {t, m2, n2}) +
                   BufferLoad::make(af, {m2}) * BufferLoad::make(bf, {n2});
        Stmt fma = unrolled(m2, TM, unrolled(n2, TN, BufferStore::make(acc, upd, {t, m2, n2})));
        Stmt body = unrolled(kk, BK, SeqStmt::make({la, lb, fma}));
        return Allocate::make(af, Allocate::make(bf, body));
    });
    // Tile 0 straight into shared memory; then per k tile: prefetch the next
    // into registers, multiply the current, store the next (the barrier
    // pass puts __syncthreads() before and after the store).
    const int64_t KT = ceil_div(K, BK);
    Stmt first = SeqStmt::make({fetch(X, I, M, BM, i0, ci(0), xr, to_shared(as)),
                                fetch(Y, J, N, BN, j0, ci(0), yr, to_shared(bs))});
    Stmt step = compute;
    if (KT > 1) {
        Expr more = ko + ci(1) < ci(KT);
        Stmt prefetch = IfThenElse::make(
            more, SeqStmt::make({fetch(X, I, M, BM, i0, ko + ci(1), xr, to_stage(ast)),
                                 fetch(Y, J, N, BN, j0, ko + ci(1), yr, to_stage(bst))}));
        Stmt store = IfThenElse::make(
            more, SeqStmt::make({from_stage(ast, BM, as, xr), from_stage(bst, BN, bs, yr)}));
        step = SeqStmt::make({prefetch, compute, store});
    }
    Stmt k_loop = SeqStmt::make({first, For::make(ko, ci(0), ci(KT), ForKind::Serial, step)});
    Stmt write = per_thread([&](const Var& t, const Expr& ty, const Expr& tx) {
        Var m("m"), n("n");
        Expr row = i0 + owned(ty, TM, BM, m), col = j0 + owned(tx, TN, BN, n);
        std::map<const Variable*, Expr> map = batch_map;
        decompose(row, I, map);
        decompose(col, J, map);
        std::vector<Expr> idx;
        for (const Expr& e : st.update->indices) idx.push_back(substitute(e, map));
        Expr result = BufferLoad::make(acc, {t, m, n});
        Stmt store = ep ? epilogue_store(*ep, idx, result)
                        : BufferStore::make(st.update->buffer, result, idx);
        Expr cond;
        if (M % BM != 0) cond = row < ci(M);
        if (N % BN != 0) cond = cond.defined() ? (cond && col < ci(N)) : col < ci(N);
        if (cond.defined()) store = IfThenElse::make(cond, store);
        return unrolled(m, TM, unrolled(n, TN, store));
    });
    Stmt body = Allocate::make(
        as, Allocate::make(bs, Allocate::make(acc, SeqStmt::make({init, k_loop, write}))));
    if (KT > 1) body = Allocate::make(ast, Allocate::make(bst, body));
    body = For::make(bx, ci(0), ci(GX), ForKind::ThreadBinding, body, "blockIdx.x");
    body = For::make(by, ci(0), ci(GY), ForKind::ThreadBinding, body, "blockIdx.y");
    if (NB > 1)
        body = For::make(bz, ci(0), ci(NB), ForKind::ThreadBinding, body, "blockIdx.z");
    else
        body = LetStmt::make(bz, ci(0), body);
    return body;
}

Stmt block_reduce_stage(const Stage& st, int64_t min_extent, const Epilogue* ep) {
    double init = 0;
    if (!const_value(st.init->value, init)) return Stmt();
    if ((st.kind == NodeType::Add && init != 0) || (st.kind == NodeType::Mul && init != 1))
        return Stmt();
    if (st.update->buffer->dtype.lanes != 1) return Stmt();
    int64_t R = product(st.reduce), rows = st.spatial.empty() ? 1 : product(st.spatial);
    if (R < min_extent || rows > 2147483647) return Stmt();
    int64_t T = 32;
    while (T < 256 && T < R) T *= 2;
    const std::string& name = st.block->name;
    DataType dt = st.update->buffer->dtype;
    Buffer red(name + "_red_shared", dt, {ci(T)}, "shared");
    Buffer part(name + "_part_local", dt, {ci(1)}, "local");
    Var b(name + "_row");
    std::map<const Variable*, Expr> smap;
    decompose(b, st.spatial, smap);

    std::vector<Stmt> phases;
    {
        Var t("tx"), r0("r0"), r("r");
        std::map<const Variable*, Expr> m = smap;
        decompose(r, st.reduce, m);
        Stmt acc = BufferStore::make(
            part, combine(st.kind, BufferLoad::make(part, {ci(0)}), substitute(st.value, m)),
            {ci(0)});
        if (R % T != 0) acc = IfThenElse::make(r < ci(R), acc);
        acc = LetStmt::make(r, r0 * ci(T) + t, acc);
        Stmt body = SeqStmt::make({BufferStore::make(part, st.init->value, {ci(0)}),
                                   For::make(r0, ci(0), ci(ceil_div(R, T)), ForKind::Serial, acc),
                                   BufferStore::make(red, BufferLoad::make(part, {ci(0)}), {t})});
        phases.push_back(thread_loop(t, T, "threadIdx.x", Allocate::make(part, body)));
    }
    for (int64_t s = T / 2; s >= 1; s /= 2) {
        Var t("tx");
        Expr v = combine(st.kind, BufferLoad::make(red, {t}), BufferLoad::make(red, {t + ci(s)}));
        phases.push_back(thread_loop(t, s, "threadIdx.x", BufferStore::make(red, v, {t})));
    }
    {
        Var t("tx");
        std::vector<Expr> idx;
        for (const Expr& e : st.update->indices) idx.push_back(substitute(e, smap));
        Expr result = BufferLoad::make(red, {ci(0)});
        phases.push_back(thread_loop(t, 1, "threadIdx.x",
                                     ep ? epilogue_store(*ep, idx, result)
                                        : BufferStore::make(st.update->buffer, result, idx)));
    }
    Stmt body = Allocate::make(red, SeqStmt::make(phases));
    return For::make(b, ci(0), ci(rows), ForKind::ThreadBinding, body, "blockIdx.x");
}

}  // namespace tessera::topi::gpu_rules
