// The matmul schedule rule (see schedule_cpu_matmul.h).
#include "engine/topi/cpu/schedule_cpu_matmul.h"

#include <unistd.h>

#include <algorithm>
#include <thread>

#include "engine/schedule/primitives.h"
#include "engine/schedule/query.h"
#include "engine/schedule/schedule_util.h"
#include "engine/tir/functor.h"
#include "engine/tir/op.h"
#include "engine/tir/passes/inject_prefetch.h"
#include "engine/topi/cpu/schedule_cpu_util.h"

namespace tessera::topi {

using schedule::Schedule;
using Names = std::vector<std::string>;

namespace {

// Blocking on one thread (order 2): for each MC block of rows (A's MC x K
// rows in L2) and each NR panel of B, the KC blocks of the panel, each
// (KC x NR, at most 2/3 of L1) reused from L1 by the MC / MR register tiles,
// which stay in cache across the KC blocks. Measured on an AVX-512 Xeon
// (48 KiB L1, 2 MiB L2), 2048^3: 0.86 -> 0.93 of OpenBLAS against the
// earlier (MC, KC, NR panel, MR tile) order with KC = 512, whose KC x N
// slab of B does not fit L2 and whose C tiles come back from L3 on every
// KC pass. MC = 64 rows beat 32, 96 and 128. Not worth it there (measured,
// kept as knobs for the tuner): packing A into MR-row panels (slower with
// every order and MC tried, though its copy costs only ~1 % at 2048^3),
// KC = 128 / 192 / 384, the BLIS order. With threads: the BLIS order
// (default_plan) with KC x NR at most kPanelBytes, then cut to fit L2.
constexpr int64_t kPanelBytes = 64 * 1024;
constexpr int64_t kMcRows = 64;
// Up to this many rows, a B that does not fit L2 gets one MC block (below).
constexpr int64_t kOneBlockRows = 512;
// B with at least this many elements is packed by all threads.
constexpr int64_t kParallelPackElements = 1 << 18;
// B smaller than this stays in L1 unpacked: packing does not pay.
constexpr int64_t kPackMinBytes = 48 * 1024;

const tir::Block* find_block(const tir::PrimFunc& f, const std::string& name) {
    auto p = schedule::detail::find_block(f->body, name);
    return p ? p->back().as<tir::BlockRealize>()->block_node() : nullptr;
}

int64_t loop_extent(const tir::PrimFunc& f, const std::string& name) {
    auto p = schedule::detail::find_loop(f->body, name);
    if (!p) return -1;
    const int64_t* c = tir::as_const_int(p->back().as<tir::For>()->extent);
    return c ? *c : -1;
}

bool is_var(const tir::Expr& e, const tir::Var& v) { return e.as<tir::Variable>() == v.get(); }

/// The rank-2 parameter the block reads as X[r, c] or X[c, r] (with r, c
/// the block variables at positions `ir`, `ic` of its iteration variables):
/// its name and the dimension indexed by r. Empty when none.
std::pair<std::string, int> find_operand(const tir::PrimFunc& f, const tir::Block* b, size_t ir,
                                         size_t ic) {
    const auto& iv = b->iter_vars;
    const tir::Var& vr = iv[ir].var;
    const tir::Var& vc = iv[ic].var;
    for (const tir::BufferRegion& r : b->reads) {
        const tir::Buffer& x = r.buffer;
        if (x->shape.size() != 2 || !schedule::detail::is_param(f, x)) continue;
        auto all = schedule::detail::load_indices(b, x);
        if (all.size() != 1) continue;
        const auto& idx = all[0];
        if (is_var(idx[0], vc) && is_var(idx[1], vr)) return {x->name, 1};
        if (is_var(idx[0], vr) && is_var(idx[1], vc)) return {x->name, 0};
    }
    return {"", -1};
}

/// What the rule needs to know about a matmul block: its loops (batch..,
/// i, j, k), their extents and the operands it can pack.
struct Geometry {
    Names loops;
    int64_t ei = 0, ej = 0, ek = 0, work = 1;
    std::string a, b;  // packable operands (rank-2 parameters), "" if none
    int adim = -1;     // A's dimension indexed by i
    int bdim = -1;     // B's dimension indexed by j
    bool integer = false;  // a product of bytes (dot4_u8s8 steps)
    // The product goes to a buffer the kernel allocates (its local
    // accumulator, read by the epilogue), indexed (batch.., i, j) as the loops.
    std::string local_out;
};

/// Whether `b`'s update takes dot4_u8s8 steps (an integer product).
bool takes_dot4(const tir::Block* b) {
    bool found = false;
    tir::post_order_visit(b->body, [&](const tir::Object* o) {
        if (o->node_type == tir::NodeType::Call &&
            static_cast<const tir::Call*>(o)->op == tir::kDot4U8S8)
            found = true;
    });
    return found;
}

std::optional<Geometry> geometry(const Schedule& s, const std::string& block) {
    Geometry g;
    g.loops = s.get_loops(block);
    const tir::Block* b = find_block(s.func(), block);
    const size_t n = g.loops.size();
    if (n < 3 || !b) return std::nullopt;
    g.ei = loop_extent(s.func(), g.loops[n - 3]);
    g.ej = loop_extent(s.func(), g.loops[n - 2]);
    g.ek = loop_extent(s.func(), g.loops[n - 1]);
    if (g.ei < 1 || g.ej < 1 || g.ek < 1) return std::nullopt;
    for (const std::string& l : g.loops) g.work *= std::max<int64_t>(loop_extent(s.func(), l), 1);
    const auto& iv = b->iter_vars;
    // (batch.., i, j, k): a rank-2 B read without the batch variables is
    // one matrix for every batch (a dense layer on [batch.., rows, K]).
    if (iv.size() == n && iv[n - 1].kind == tir::IterKind::Reduce) {
        std::tie(g.b, g.bdim) = find_operand(s.func(), b, n - 2, n - 1);
        std::tie(g.a, g.adim) = find_operand(s.func(), b, n - 3, n - 1);
    }
    g.integer = takes_dot4(b);
    const tir::BufferStore* st = b->body.as<tir::BufferStore>();
    if (st && !schedule::detail::is_param(s.func(), st->buffer) && st->indices.size() == n - 1 &&
        iv.size() == n) {
        bool plain = true;
        for (size_t d = 0; d + 1 < n; ++d) plain &= is_var(st->indices[d], iv[d].var);
        if (plain) g.local_out = st->buffer->name;
    }
    return g;
}

/// Cache blocking applies to a plain GEMM and to a batched product whose B
/// is one matrix for every batch (packed once, the batch loops outermost).
/// Transformer FFN, [1, 128, 1024] x [1024, 256] + bias + residual, 1 thread:
/// 1.56 -> 1.11 ms (43 -> 60 GFLOP/s) against the small rule, which reads
/// B's rows N floats apart for every register tile.
bool can_block(const Geometry& g) { return g.loops.size() == 3 || !g.b.empty(); }

/// A matrix-vector product: one row of A, the plain (i, j, k) nest.
bool is_gemv(const Geometry& g) { return g.ei == 1 && g.loops.size() == 3; }

/// The rule's decisions for one block: register tile, cache blocks, packing.
struct Plan {
    int64_t mr = 1, nr = 1;          // register tile (rows unrolled, columns vectorized)
    bool blocked = false;            // MC / KC (/ NC) cache blocking
    int64_t kc = 1, mc = 1, nc = 0;  // cache blocks (nc 0: all of N)
    // 0: (NC,) MC, KC, NR panel, MR tile; 1: BLIS NC, KC, MC, NR panel, MR
    // tile; 2: (NC,) MC, NR panel, KC, MR tile.
    int order = 0;
    bool pack_a = false, pack_b = false;
    bool parallel = false;
    // GEMV: software prefetch of B this many k iterations ahead (0: none;
    // default none: with B packed the hardware prefetchers keep up, 8-64
    // measured 0-7 % slower on mlp_b1 and within the noise from DRAM).
    int64_t prefetch = 0;
    // Order 2 over a B larger than L2: each KC block of an NR panel prefetches
    // the next (the next panel's first after the last) while its MR tiles
    // pass over it, so the panel's first tile does not wait on memory for
    // every block. BERT-base at sequence 128, 1 thread: 8.35-8.48 -> 7.85-7.97 ms.
    bool prefetch_next_block = false;
    // Vectors along the rows (i) instead of the columns: `nr` lanes of i,
    // `mr` columns unrolled (see rows_vectorized).
    bool rows_vectorized = false;
};

/// This core's L2 cache in bytes (1 MiB when the system does not say).
int64_t l2_bytes() {
    static const int64_t bytes = [] {
        const long v = sysconf(_SC_LEVEL2_CACHE_SIZE);
        return v > 0 ? int64_t(v) : int64_t(1) << 20;
    }();
    return bytes;
}

/// This core's L1 data cache in bytes (32 KiB when the system does not say).
int64_t l1_bytes() {
    static const int64_t bytes = [] {
        const long v = sysconf(_SC_LEVEL1_DCACHE_SIZE);
        return v > 0 ? int64_t(v) : int64_t(32) << 10;
    }();
    return bytes;
}

int lanes_of(const CpuScheduleOptions& o) { return std::max(o.vector_lanes, 4); }
int64_t default_mr(const CpuScheduleOptions& o) { return lanes_of(o) >= 16 ? 8 : 6; }

// The default choices (no knobs set).
Plan default_plan(const Geometry& g, const CpuScheduleOptions& o) {
    Plan p;
    const int lanes = lanes_of(o);
    // Register tile: MR rows x NR = 2 vectors; accumulators 2 MR of 32 (AVX-512) / 16 registers.
    const int64_t mr_full = default_mr(o);
    p.mr = mr_full;
    p.nr = 2 * lanes;
    p.pack_b = !g.b.empty() && g.ei >= 4 * mr_full && g.ej >= 2 * lanes &&
               g.ek * g.ej * 4 >= kPackMinBytes;
    p.blocked = p.pack_b;
    // GEMV (one row, unblocked): B in NR-wide panels too, each a contiguous
    // K x NR strip instead of K rows N apart (constant B is packed at compile
    // time). 1 thread: mlp_b1 (784x512, 512x512, B from L3) 0.095 -> 0.066
    // ms; ResNet-18's 512x1000 fc (from DRAM) 0.196 -> 0.159 ms;
    // MobileNetV2's 1280x1000 within the noise (0.27 ms).
    if (is_gemv(g) && !g.b.empty() && g.ej >= 2 * lanes && g.ek * g.ej * 4 >= kPackMinBytes)
        p.pack_b = true;
    // Few rows against a B far beyond L2 (a CTC classifier: 24 x 1024 by
    // 1024 x 8210, 34 MB of weights): B streams from memory once either way,
    // and in NR-wide panels the stream is sequential instead of K rows 33 KB
    // apart (a page each).
    if (!p.pack_b && !g.b.empty() && g.ej >= 2 * lanes && g.ek * g.ej * 4 >= kStreamedBBytes)
        p.pack_b = true;
    p.mc = kMcRows;
    p.nc = 0;
    p.pack_a = false;
    p.parallel = o.threads != 1 && g.work >= kMinParallelWork;
    // One thread: order 2, a KC x NR panel in 2/3 of L1 (KC 256 on 48 KiB).
    const int64_t kcmax = p.parallel ? kPanelBytes / (p.nr * 4)
                                     : std::max<int64_t>(l1_bytes() * 2 / 3 / (p.nr * 4), 8);
    p.kc = pick_factor(g.ek, kcmax / 2, kcmax);
    p.order = p.parallel ? 0 : 2;
    const int64_t team =
        o.threads > 0 ? o.threads : std::max<int64_t>(std::thread::hardware_concurrency(), 1);
    // Threads that split the rows each read all of B and their share of A;
    // split the columns, all of A and their share of B: the rows when A is
    // the larger and B stays in this core's L2 between MC blocks (an integer
    // conv's weights [OC, K] against a small plane's windows).
    const bool rows_read_less = g.ei > g.ej && g.ek * g.ej * 4 <= l2_bytes();
    if (p.blocked && p.parallel && ((g.ej + p.nr - 1) / p.nr < 2 * team || rows_read_less)) {
        // Fewer column panels than two per thread (a conv's 7x7 = 49 output
        // columns as a GEMM: 32 + 17), or A larger: the threads split the
        // rows (MC blocks) instead, every thread the same amount of work.
        // [512, 1152] x [1152, 49] words, 2 threads: 0.36 -> 0.2 ms. MC
        // blocks of up to kMcRows rows, as many per thread (512 rows on 2
        // threads: 8 blocks of 66, not 9 of 60 split 5 : 4).
        p.order = 0;
        const int64_t tiles = (g.ei + p.mr - 1) / p.mr;
        const int64_t blocks =
            team * std::max<int64_t>((g.ei + team * kMcRows - 1) / (team * kMcRows), 1);
        p.mc = (tiles + blocks - 1) / blocks * p.mr;
    } else if (p.blocked && p.parallel) {
        // Threads share nothing but A: BLIS order with one NC block of
        // columns per thread, each thread's KC x NC block of B in its own L2
        // (measured 5-35 % faster at 2 threads than splitting the MC blocks
        // of the one-thread order; slower on one thread, where the
        // KC x N panel sweep over an L2-resident block of A wins).
        const int64_t panels = (g.ej + p.nr - 1) / p.nr;
        p.order = 1;
        p.nc = (panels + team - 1) / team * p.nr;
        // KC x NC of B in half of this core's L2 (2048^3 on 2 threads:
        // KC 256 instead of 512, 0.88 -> 0.93 of OpenBLAS).
        const int64_t kc_l2 = l2_bytes() / 2 / (std::min(p.nc, g.ej) * 4);
        if (kc_l2 < p.kc)
            p.kc = pick_factor(g.ek, std::max<int64_t>(kc_l2 / 2, 1), std::max<int64_t>(kc_l2, 1));
        if (p.nc >= g.ej) p.nc = 0;
    }
    // A B too large for L2 comes from L3 or memory once per MC block: with
    // at most kOneBlockRows rows, one block of all of them (order 2, the
    // epilogue per NR panel) streams it once; threads split the panels.
    // Per kernel, ms, before -> after (1 thread | 2 threads): BERT-base FFN
    // at seq 128, [128, 768] x [768, 3072] + GELU: 12.9 -> 10.5 | 8.2 -> 5.1;
    // [128, 3072] x [3072, 768] 12.5 -> 9.5 | 6.3 -> 4.9; at seq 512
    // 46.9 -> 35.2 (1 thread); the small encoder's 1 MiB B within the noise.
    if (g.ei <= kOneBlockRows && g.ek * g.ej * 4 > l2_bytes()) {
        p.mc = (g.ei + p.mr - 1) / p.mr * p.mr;
        p.order = 2;
        p.nc = 0;
        p.prefetch_next_block = !g.b.empty();
        const int64_t kc_l1 = std::max<int64_t>(l1_bytes() * 2 / 3 / (p.nr * 4), 8);
        p.kc = pick_factor(g.ek, kc_l1 / 2, kc_l1);
    }
    return p;
}

/// Columns per register tile when the vectors run along the rows: 4 with 4
/// vectors (16 accumulators), else the largest divisor of the column count
/// from 8 down to 4 (4 when none divides it).
int64_t row_tile_columns(int64_t ej, int64_t vectors) {
    if (vectors >= 4) return 4;
    for (int64_t d = 8; d >= 4; --d)
        if (ej % d == 0) return d;
    return 4;
}

/// Whether the vectors can run along the rows (i) of the product: a plain
/// GEMM whose A can be packed into panels of rows and whose accumulator is
/// the kernel's own (its layout can change).
bool can_vectorize_rows(const Geometry& g, int lanes) {
    return g.loops.size() == 3 && !g.a.empty() && !g.local_out.empty() && g.ei >= lanes;
}

/// The default number of vectors along the rows, 0 for vectors along the
/// columns. An integer product with a long reduction whose few columns are
/// not a whole number of vectors (a 3 x 3 conv's 7 x 7 = 49 output pixels:
/// 32 + 16 lanes and a column of dot products a lane at a time) and whose
/// rows (output channels) are: vectors of rows, 4 columns unrolled, each
/// column's 4 bytes broadcast. ResNet-18's four int8 convs to 7 x 7 (K 2304
/// and 4608), 1 thread, caches warm: 1.22-1.39 -> 1.04-1.07 ms. Not for
/// short reductions (MobileNetV2's 1 x 1 convs to 7 x 7: the model 1.72 ->
/// 1.81-1.88 ms) nor wider planes (ResNet-18's 14 x 14 = 196 columns, 12
/// whole vectors of 13: 0.85-0.86 -> 0.87-0.91 ms for its four convs). With
/// AVX-512 only (32 vector registers).
int64_t default_row_vectors(const Geometry& g, int lanes) {
    if (!g.integer || lanes < 16 || !can_vectorize_rows(g, lanes) || g.ej % lanes == 0 ||
        g.ej >= 4 * lanes || g.ek < 512)
        return 0;
    for (int64_t v : {4, 3, 2})
        if (g.ei % (v * lanes) == 0) return v;
    return 0;
}

Plan make_plan(const Geometry& g, const CpuScheduleOptions& o) {
    Plan p = default_plan(g, o);
    const int lanes = lanes_of(o);
    p.mr = o.knob("matmul.mr", p.mr);
    p.nr = o.knob("matmul.nr_vectors", p.nr / lanes) * lanes;
    p.blocked = can_block(g) && o.knob("matmul.blocked", p.blocked) != 0;
    p.pack_b = !g.b.empty() && o.knob("matmul.pack_b", p.pack_b) != 0;
    p.pack_a = !g.a.empty() && p.blocked && o.knob("matmul.pack_a", p.pack_a) != 0;
    p.kc = o.knob("matmul.kc", p.kc);
    p.mc = o.knob("matmul.mc", p.mc);
    p.nc = o.knob("matmul.nc", p.nc);
    p.order = int(o.knob("matmul.order", p.order));
    p.parallel = p.parallel && o.knob("matmul.parallel", 1) != 0;
    p.prefetch = is_gemv(g) ? std::max<int64_t>(o.knob("matmul.prefetch", p.prefetch), 0) : 0;
    p.prefetch_next_block = p.blocked && p.order == 2 && !g.b.empty() &&
                            o.knob("matmul.prefetch_block", p.prefetch_next_block) != 0;
    // Clamp to the shapes (every knob combination schedules).
    p.mr = std::clamp<int64_t>(p.mr, 1, g.ei);
    p.nr = std::clamp<int64_t>(p.nr, 1, g.ej);
    // A tile of a whole number of vectors: a narrow product (N = 29, a
    // transformer head of 29) as one 29-lane vector ran at 8 GFLOP/s.
    if (p.nr > lanes && p.nr % lanes != 0) p.nr = p.nr / lanes * lanes;
    p.kc = std::clamp<int64_t>(p.kc, 1, g.ek);
    p.mc = std::max(p.mc, p.mr);
    if (p.nc >= g.ej) p.nc = 0;
    if (p.nc > 0) p.nc = std::max(p.nc, p.nr);
    const int64_t row_vectors =
        can_vectorize_rows(g, lanes)
            ? std::max<int64_t>(o.knob("matmul.vector_rows", default_row_vectors(g, lanes)), 0)
            : 0;
    if (row_vectors > 0) {
        // mr columns unrolled x nr rows in vectors, unblocked, A in panels of nr rows.
        p.rows_vectorized = true;
        p.blocked = p.pack_a = p.pack_b = false;
        p.nr = std::min(row_vectors * lanes, g.ei / lanes * lanes);
        p.mr =
            std::clamp<int64_t>(o.knob("matmul.mr", row_tile_columns(g.ej, row_vectors)), 1, g.ej);
        p.kc = std::clamp<int64_t>(o.knob("matmul.kc", g.ek), 1, g.ek);
    }
    return p;
}

void schedule_blocked(Schedule& s, const std::string& block, const Geometry& g, const Plan& p,
                      const CpuScheduleOptions& o, std::vector<PackSpec>* packs,
                      std::vector<std::string>* epilogues);

/// Vectorizes the register tile's column loop `loop` (extent nr). A width of
/// a whole but not power-of-two number of vectors (3 x 16 lanes) becomes an
/// unrolled loop of single vectors: LLVM scalarizes <48 x float> operations
/// (3.8 GFLOP/s at 2048^3 instead of 140).
void vectorize_columns(Schedule& s, const std::string& loop, int64_t nr, int lanes) {
    const int64_t vectors = nr / lanes;
    if (nr % lanes == 0 && vectors > 1 && (vectors & (vectors - 1)) != 0) {
        Names v = s.split(loop, {vectors, lanes});
        s.unroll(v[0]);
        s.vectorize(v[1]);
    } else {
        s.vectorize(loop);
    }
}

void schedule_small(Schedule& s, const std::string& block, const Geometry& g, const Plan& p,
                    const CpuScheduleOptions& o, std::vector<std::string>* epilogues);

}  // namespace

// Computes the elementwise consumers of `block` at `loop` (after the
// reduction of the tile is complete), innermost loop vectorized. A consumer
// that cannot move keeps its own loops (the generic rules schedule it).
// `rows_innermost` (a rows-vectorized product): a rank-2 consumer's rows
// innermost in vectors, contiguous in the transposed accumulator, stored a
// column at a time; with its columns innermost it read the accumulator
// across its vectors (ResNet-18's four int8 convs to 7 x 7, caches warm,
// 1.13-1.19 -> 1.04-1.07 ms).
void place_epilogues(Schedule& s, const std::string& block, const std::string& loop, int lanes,
                     std::vector<std::string>* placed, bool rows_innermost = false) {
    for (const std::string& c : s.get_consumers(block)) {
        const tir::Block* cb = find_block(s.func(), c);
        if (!cb || cb->iter_vars.empty()) continue;
        bool reduces = false;
        for (const tir::IterVar& iv : cb->iter_vars) reduces |= iv.kind != tir::IterKind::Spatial;
        if (reduces) continue;
        Schedule before = s;
        try {
            s.reverse_compute_at(c, loop);
            Names cl = s.get_loops(c);
            const std::string inner = cl.back();
            const int64_t e = loop_extent(s.func(), inner);
            if (rows_innermost && cb->iter_vars.size() == 2 && cl.size() >= 2 &&
                cl[cl.size() - 2] != loop) {
                const std::string rows = cl[cl.size() - 2];
                s.reorder({inner, rows});
                s.vectorize(s.split(rows, {-1, lanes})[1]);
            } else if (inner != loop && e > 1) {
                Names parts = s.split(inner, {-1, std::min<int64_t>(e, 2 * lanes)});
                s.vectorize(parts[1]);
            }
            if (placed) placed->push_back(c);
        } catch (const schedule::ScheduleError&) {
            s = before;
        }
    }
}

namespace {

void schedule_blocked(Schedule& s, const std::string& block, const Geometry& g, const Plan& p,
                      const CpuScheduleOptions& o, std::vector<PackSpec>* packs,
                      std::vector<std::string>* epilogues) {
    const int lanes = lanes_of(o);
    const size_t n = g.loops.size();
    const std::string i = g.loops[n - 3], j = g.loops[n - 2], k = g.loops[n - 1];
    const Names batch(g.loops.begin(), g.loops.end() - 3);
    const int64_t mc_tiles = std::clamp<int64_t>(p.mc / p.mr, 1, (g.ei + p.mr - 1) / p.mr);
    const int64_t panels = (g.ej + p.nr - 1) / p.nr;
    const int64_t nc_panels = p.nc > 0 ? std::clamp<int64_t>(p.nc / p.nr, 1, panels) : panels;
    Names is = s.split(i, {-1, mc_tiles, p.mr});
    Names ks = s.split(k, {-1, p.kc});
    Names order;
    std::string jtile, jvec, outer;
    Names par_candidates;
    if (p.order == 1) {
        // BLIS: NC columns, KC, MC rows; a KC x NC block of B stays in L2
        // while every MC block of A passes over it, the KC x NR micro-panel
        // in L1 while the MR-row tiles of one MC block pass over it.
        Names js = s.split(j, {-1, nc_panels, p.nr});
        order = {js[0], ks[0], is[0], js[1], is[1], ks[1], is[2], js[2]};
        jtile = js[1];
        jvec = js[2];
        outer = js[0];
        par_candidates = {js[0], is[0]};
    } else if (nc_panels < panels) {
        // NC blocks of columns outermost, then (MC, KC) or (MC, NR panel, KC).
        Names js = s.split(j, {-1, nc_panels, p.nr});
        if (p.order == 2)
            order = {js[0], is[0], js[1], ks[0], is[1], ks[1], is[2], js[2]};
        else
            order = {js[0], is[0], ks[0], js[1], is[1], ks[1], is[2], js[2]};
        jtile = js[1];
        jvec = js[2];
        // Order 2 completes an MC x NR block per panel: its epilogue runs
        // there, while the block is in cache.
        outer = p.order == 2 ? js[1] : js[0];
        par_candidates = {js[0], is[0]};
    } else {
        Names js = s.split(j, {-1, p.nr});
        if (p.order == 2)
            order = {is[0], js[0], ks[0], is[1], ks[1], is[2], js[1]};
        else
            order = {is[0], ks[0], js[0], is[1], ks[1], is[2], js[1]};
        jtile = js[0];
        jvec = js[1];
        outer = p.order == 2 ? js[0] : is[0];
        par_candidates = {is[0]};
    }
    // Batch loops stay outermost: each batch is one GEMM over the packed B.
    order.insert(order.begin(), batch.begin(), batch.end());
    par_candidates.insert(par_candidates.begin(), batch.begin(), batch.end());
    s.reorder(order);
    std::string init = s.decompose_reduction(block, ks[0]);
    Names init_loops = s.get_loops(init);
    if (init_loops.size() >= 2) {
        const std::string& l = init_loops.back();
        vectorize_columns(s, l, loop_extent(s.func(), l), lanes_of(o));
    }
    if (p.parallel) {
        // The outermost loop with work for every thread: MC blocks share B.
        std::string par = jtile;
        for (const std::string& l : par_candidates)
            if (loop_extent(s.func(), l) >= 2) {
                par = l;
                break;
            }
        s.parallel(par);
    }
    if (p.mr > 1) s.unroll(is[2]);
    vectorize_columns(s, jvec, p.nr, lanes);
    if (p.prefetch_next_block && p.order == 2) {
        // B's panels (packed after this schedule) or B itself, one KC block
        // ahead: an unknown buffer name is ignored by inject_prefetch.
        s.annotate(ks[0], tir::kPrefetchAnnotation, g.b + ":1," + g.b + "_packed:1");
    }
    place_epilogues(s, block, outer, lanes, epilogues);
    if (!packs) return;
    // The packing nests (1-3 % of the work) run in parallel only when they
    // are large: a second fork/join costs more than a small copy, the more
    // so when the other core is busy.
    if (p.pack_b) {
        const bool par_pack = p.parallel && g.ek * g.ej >= kParallelPackElements;
        packs->push_back(PackSpec{block, g.b, g.bdim, p.nr, par_pack, lanes});
    }
    if (p.pack_a) {
        // A in MR-row panels (BLIS): the micro-kernel's broadcasts walk one
        // contiguous strip instead of MR rows K apart.
        const bool par_pack = p.parallel && g.ek * g.ei >= kParallelPackElements;
        packs->push_back(PackSpec{block, g.a, g.adim, p.mr, par_pack, 0});
    }
}

/// Makes the outermost of `loops` with more than one iteration parallel.
void parallel_first(Schedule& s, const Names& loops) {
    for (const std::string& l : loops)
        if (loop_extent(s.func(), l) >= 2) {
            s.parallel(l);
            return;
        }
}

/// Moves the init of the reduction `block` above `loop`, its innermost loop vectorized.
void decompose_vectorized(Schedule& s, const std::string& block, const std::string& loop,
                          int lanes) {
    Names init_loops = s.get_loops(s.decompose_reduction(block, loop));
    if (init_loops.size() >= 2) {
        const std::string& l = init_loops.back();
        vectorize_columns(s, l, loop_extent(s.func(), l), lanes);
    }
}

void schedule_small(Schedule& s, const std::string& block, const Geometry& g, const Plan& p,
                    const CpuScheduleOptions& o, std::vector<std::string>* epilogues) {
    const size_t n = g.loops.size();
    const std::string i = g.loops[n - 3], j = g.loops[n - 2], k = g.loops[n - 1];
    Names is = s.split(i, {-1, p.mr});
    Names js = s.split(j, {-1, p.nr});
    Names order(g.loops.begin(), g.loops.end() - 3);
    // jo outside io: consecutive tiles reuse one K x NR panel of B from cache.
    order.insert(order.end(), {js[0], is[0], k, is[1], js[1]});
    s.reorder(order);
    Names outer(g.loops.begin(), g.loops.end() - 3);
    outer.insert(outer.end(), {js[0], is[0]});
    // Never fused: separate loops keep the tile indices linear for LLVM, and
    // let region inference give an epilogue placed at io exactly one tile (a
    // fused loop made it recompute whole rows per tile). Parallel: the
    // outermost loop with more than one iteration.
    if (p.parallel) parallel_first(s, outer);
    decompose_vectorized(s, block, k, lanes_of(o));
    if (p.mr > 1) s.unroll(is[1]);
    vectorize_columns(s, js[1], p.nr, lanes_of(o));
    if (p.prefetch > 0 && !g.b.empty()) {
        // B's panels (packed after this schedule) or B itself: an unknown
        // buffer name is ignored by inject_prefetch.
        const std::string d = std::to_string(p.prefetch);
        s.annotate(k, tir::kPrefetchAnnotation, g.b + ":" + d + "," + g.b + "_packed:" + d);
    }
    place_epilogues(s, block, is[0], lanes_of(o), epilogues);
}

/// Vectors along the rows (Plan::rows_vectorized): loops (io, jo, k, ji
/// unrolled, ii vectorized), A read from panels of nr rows (packed at
/// compile time when constant), the columns' 4-byte words broadcast, the
/// accumulator (the kernel's own buffer) transposed so that a vector of rows
/// is contiguous in it; the epilogue per tile, its rows in vectors too.
void schedule_rows_vectorized(Schedule& s, const std::string& block, const Geometry& g,
                              const Plan& p, const CpuScheduleOptions& o,
                              std::vector<PackSpec>* packs, std::vector<std::string>* epilogues) {
    const std::string i = g.loops[0], j = g.loops[1], k = g.loops[2];
    s.transform_layout(g.local_out, {1, 0});
    Names is = s.split(i, {-1, p.nr});
    Names js = s.split(j, {-1, p.mr});
    const bool kblocks = p.kc < g.ek;
    Names ks = kblocks ? s.split(k, {-1, p.kc}) : Names{k};
    if (kblocks)
        s.reorder({is[0], ks[0], js[0], ks[1], js[1], is[1]});
    else
        s.reorder({is[0], js[0], k, js[1], is[1]});
    if (p.parallel) parallel_first(s, {is[0], js[0]});
    decompose_vectorized(s, block, ks[0], lanes_of(o));
    if (p.mr > 1) s.unroll(js[1]);
    vectorize_columns(s, is[1], p.nr, lanes_of(o));
    place_epilogues(s, block, kblocks ? is[0] : js[0], lanes_of(o), epilogues, true);
    if (packs) packs->push_back(PackSpec{block, g.a, g.adim, p.nr, false, lanes_of(o)});
}

/// The first reduction block of `f` (the matmul of a fused group).
std::string matmul_block(const Schedule& s) {
    for (const std::string& name : s.blocks())
        if (const tir::Block* b = find_block(s.func(), name))
            if (!b->iter_vars.empty() && schedule::is_reduction(b)) return name;
    return "";
}

/// `dflt` first, then the other candidates (in order, without repeats).
std::vector<int64_t> choices(int64_t dflt, const std::vector<int64_t>& others) {
    std::vector<int64_t> out{dflt};
    for (int64_t v : others)
        if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
    return out;
}

}  // namespace

namespace {

void schedule_matmul_core(Schedule& s, const std::string& block, const CpuScheduleOptions& o,
                          std::vector<PackSpec>* packs, std::vector<std::string>* epilogues) {
    std::optional<Geometry> g = geometry(s, block);
    if (!g) return;
    const Plan p = make_plan(*g, o);
    if (p.rows_vectorized) return schedule_rows_vectorized(s, block, *g, p, o, packs, epilogues);
    if (p.blocked)
        schedule_blocked(s, block, *g, p, o, p.pack_a || p.pack_b ? packs : nullptr, epilogues);
    else
        schedule_small(s, block, *g, p, o, epilogues);
    if (!p.blocked && p.pack_b && packs)
        packs->push_back(PackSpec{block, g->b, g->bdim, p.nr, false, lanes_of(o)});
}

}  // namespace

void schedule_matmul_block(Schedule& s, const std::string& block, const CpuScheduleOptions& o,
                           std::vector<PackSpec>* packs, std::vector<std::string>* epilogues) {
    // With an epilogue, the product goes to a "local" buffer that
    // compact_local_buffers shrinks to the block the epilogue is placed at,
    // instead of a full-size intermediate written to and read back from
    // memory (and allocated on every call: 12.6 MB for BERT's attention
    // scores at sequence 512; that kernel 11 -> 6.5 ms, BERT-base's FFN at
    // sequence 128 10.5 -> 8.6 ms, 1 thread). Only when every consumer is
    // placed inside the product's loops (else the schedule is made again
    // without). Knob "matmul.local" (1: on).
    if (o.knob("matmul.local", 1) != 0) {
        const Schedule start = s;
        const size_t npacks = packs ? packs->size() : 0;
        const std::vector<std::string> consumers = s.get_consumers(block);
        bool local = !consumers.empty();
        if (local) {
            try {
                s.compute_inline(s.cache_write(block, 0, "local"));
            } catch (const schedule::ScheduleError&) {
                s = start;
                local = false;
            }
        }
        std::vector<std::string> placed;
        schedule_matmul_core(s, block, o, packs, &placed);
        bool all = true;
        for (const std::string& c : consumers)
            all &= std::find(placed.begin(), placed.end(), c) != placed.end();
        if (!local || all) {
            if (epilogues) epilogues->insert(epilogues->end(), placed.begin(), placed.end());
            return;
        }
        s = start;
        if (packs) packs->resize(npacks);
    }
    schedule_matmul_core(s, block, o, packs, epilogues);
}

void apply_packs(Schedule& s, const std::vector<PackSpec>& packs) {
    for (const PackSpec& p : packs) {
        try {
            s.pack_operand(p.block, p.buffer, p.tiled_dim, p.factor, p.parallel, p.vector_lanes);
        } catch (const schedule::ScheduleError&) {
            // Not packable here (the operand is computed in the kernel): read in place.
        }
    }
}

std::vector<CpuKnob> matmul_knobs(const tir::PrimFunc& f, const graph::Node& n,
                                  const CpuScheduleOptions& options) {
    (void)n;
    Schedule s(f);
    const std::string block = matmul_block(s);
    if (block.empty()) return {};
    std::optional<Geometry> g = geometry(s, block);
    if (!g) return {};
    const Plan d = default_plan(*g, options);
    const int lanes = lanes_of(options);
    auto upto = [](std::vector<int64_t> v, int64_t hi) {
        v.erase(std::remove_if(v.begin(), v.end(), [&](int64_t x) { return x > hi; }), v.end());
        return v;
    };
    std::vector<CpuKnob> out;
    // Register tile (rows unrolled x vectors of columns).
    out.push_back(
        {"matmul.mr", choices(std::min(d.mr, g->ei), upto({1, 2, 4, 6, 8, 12, 16}, g->ei))});
    const int64_t max_vectors = (g->ej + lanes - 1) / lanes;
    out.push_back({"matmul.nr_vectors",
                   choices(std::min(d.nr / lanes, max_vectors), upto({1, 2, 3, 4}, max_vectors))});
    if (can_block(*g)) {
        out.push_back({"matmul.blocked", choices(d.blocked, {0, 1})});
        if (!g->b.empty()) out.push_back({"matmul.pack_b", choices(d.pack_b, {0, 1})});
        if (!g->a.empty()) out.push_back({"matmul.pack_a", choices(d.pack_a, {0, 1})});
        // KC blocks that divide K: another leaves a tail guard inside the k
        // loop of every register tile (BERT's K = 768 at KC 512: 0.44 ms
        // against 0.18 at 384), a trial the tuner cannot win.
        std::vector<int64_t> kcs = upto({32, 64, 128, 256, 384, 512, 768, 1024}, g->ek);
        kcs.erase(std::remove_if(kcs.begin(), kcs.end(), [&](int64_t v) { return g->ek % v != 0; }),
                  kcs.end());
        out.push_back({"matmul.kc", choices(std::min(d.kc, g->ek), kcs)});
        out.push_back({"matmul.mc", choices(d.mc, upto({16, 32, 64, 96, 128, 192, 256, 512},
                                                       std::max<int64_t>(g->ei, 16)))});
        std::vector<int64_t> nc = {0};
        for (int64_t v : {128, 256, 512, 1024, 2048})
            if (v < g->ej) nc.push_back(v);
        out.push_back({"matmul.nc", choices(d.nc, nc)});
        out.push_back({"matmul.order", choices(d.order, {0, 1, 2})});
    }
    if (d.parallel) out.push_back({"matmul.parallel", {1, 0}});
    if (can_vectorize_rows(*g, lanes))
        out.push_back({"matmul.vector_rows",
                       choices(default_row_vectors(*g, lanes),
                               upto({0, 1, 2, 3, 4}, std::max<int64_t>(g->ei / lanes, 0)))});
    if (!s.get_consumers(block).empty()) out.push_back({"matmul.local", {1, 0}});
    if (is_gemv(*g) && !g->b.empty())
        out.push_back({"matmul.prefetch", choices(d.prefetch, upto({0, 16, 32}, g->ek - 1))});
    if (can_block(*g) && !g->b.empty())
        out.push_back({"matmul.prefetch_block", choices(d.prefetch_next_block, {0, 1})});
    return out;
}

}  // namespace tessera::topi
