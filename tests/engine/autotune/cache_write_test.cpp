// The cache_write rule of the CPU sketch: sampled GEMM (odd shapes, with and
// without a bias epilogue) and conv2d candidates that accumulate in a local
// tile buffer replay from their JSON traces and match the unscheduled
// function under the interpreter and the LLVM JIT; the local buffer is
// compacted to the tile (tir::compact_local_buffers).
#include <gtest/gtest.h>

#include "engine/autotune/space.h"
#include "engine/te/tensor.h"
#include "engine/tir/functor.h"
#include "engine/tir/passes/compact_local_buffers.h"
#include "engine/tir/passes/lower_blocks.h"
#include "engine/tir/passes/pass_manager.h"
#include "tests/engine/schedule/random_schedule.h"

namespace tessera::autotune {
namespace {

using schedule::test::max_rel_diff;
using schedule::test::run_interpreted;
using schedule::test::run_jit;
const tir::DataType f32 = tir::DataType::float32();

tir::PrimFunc gemm(int64_t m, int64_t n, int64_t k, bool bias) {
    te::Tensor A = te::placeholder({m, k}, f32, "A");
    te::Tensor B = te::placeholder({k, n}, f32, "B");
    tir::IterVar r = te::reduce_axis(k, "k");
    te::Tensor C = te::compute(
        {m, n}, [&](auto i) { return te::sum(A(i[0], r.var) * B(r.var, i[1]), {r}); }, "C");
    if (!bias) return te::create_prim_func({A, B, C}, "gemm");
    te::Tensor b = te::placeholder({n}, f32, "bias");
    te::Tensor D = te::compute({m, n}, [&](auto i) { return C(i[0], i[1]) + b(i[1]); }, "D");
    return te::create_prim_func({A, B, b, D}, "gemm_bias");
}

// A valid (unpadded) NCHW conv2d, batch 1.
tir::PrimFunc conv(int64_t c, int64_t h, int64_t w, int64_t k, int64_t r) {
    te::Tensor X = te::placeholder({1, c, h, w}, f32, "X");
    te::Tensor W = te::placeholder({k, c, r, r}, f32, "W");
    tir::IterVar rc = te::reduce_axis(c, "rc"), rh = te::reduce_axis(r, "rh"),
                 rw = te::reduce_axis(r, "rw");
    te::Tensor Y = te::compute(
        {1, k, h - r + 1, w - r + 1},
        [&](auto i) {
            return te::sum(X(i[0], rc.var, i[2] + rh.var, i[3] + rw.var) *
                               W(i[1], rc.var, rh.var, rw.var),
                           {rc, rh, rw});
        },
        "Y");
    return te::create_prim_func({X, W, Y}, "conv");
}

bool uses_cache_write(const Candidate& c) {
    for (const BlockDecision& d : c.blocks)
        if (d.cache_write) return true;
    return false;
}

// Elements of the largest "local" allocation in the lowered function (0: none).
int64_t largest_local(const tir::PrimFunc& f) {
    int64_t n = 0;
    tir::post_order_visit(tir::lower_for_codegen(f)->body, [&](const tir::Object* o) {
        if (o->node_type != tir::NodeType::Allocate) return;
        const tir::Buffer& b = static_cast<const tir::Allocate*>(o)->buffer;
        if (b->scope == "local") n = std::max(n, b.num_elements());
    });
    return n;
}

TEST(CacheWrite, SampledCandidatesReplayAndMatchInterpreterAndJit) {
    struct W {
        std::string name;
        tir::PrimFunc func;
        int64_t out_elements = 0;
    };
    std::vector<W> ws = {
        {"gemm 23x37x19", gemm(23, 37, 19, false)},
        {"gemm 30x21x13 + bias", gemm(30, 21, 13, true)},
        {"conv 3x9x9 -> 5, 3x3", conv(3, 9, 9, 5, 3)},
        {"conv2d (padded)", schedule::test::workloads()[2].func},
    };
    for (W& w : ws) w.out_elements = w.func->params.back().num_elements();
    std::mt19937_64 rng(5);
    int compacted = 0, checked = 0;
    for (int threads : {1, 0}) {
        SpaceOptions o;
        o.threads = threads;
        for (const W& w : ws) {
            const auto want = run_interpreted(w.func, 9);
            int found = 0;
            for (int draw = 0; draw < 200 && found < 3; ++draw) {
                Candidate c = sample(w.func, o, rng);
                if (!uses_cache_write(c)) c = mutate(w.func, c, o, rng);
                if (!uses_cache_write(c)) continue;
                ++found;
                schedule::Schedule s = generate(w.func, c, o);
                bool step = false;
                for (const schedule::Step& st : s.trace().steps)
                    step |= st.op == "cache_write" && st.key == "local";
                EXPECT_TRUE(step) << w.name << " " << c.to_json();
                EXPECT_EQ(Candidate::from_json(c.to_json()), c);
                // The trace through JSON, replayed on a fresh function.
                schedule::Trace t = schedule::Trace::from_json(s.trace().to_json(), w.name);
                tir::PrimFunc replayed = t.apply(w.func).func();
                EXPECT_LE(max_rel_diff(run_interpreted(replayed, 9), want), 1e-4)
                    << w.name << " candidate " << c.to_json();
                EXPECT_LE(max_rel_diff(run_jit(replayed, 9), want), 1e-4)
                    << w.name << " (JIT) candidate " << c.to_json();
                const int64_t local = largest_local(replayed);
                EXPECT_GT(local, 0) << w.name;
                EXPECT_LE(local, w.out_elements) << w.name;
                compacted += local < w.out_elements;
                ++checked;
            }
            EXPECT_EQ(found, 3) << w.name << " threads " << threads;
        }
    }
    EXPECT_EQ(checked, 24);
    EXPECT_GE(compacted, 12);  // most tilings leave a tile smaller than the output
}

TEST(CacheWrite, DecisionIsOffInOlderRecordsAndRoundTrips) {
    const std::string old =
        R"([{"block":"C","rule":1,"tiles":[[1,2,3,4],[1,1,1,8],[4,4]],"par":0,)"
        R"("unroll_s":true,"unroll_r":false,"order":0,"vec":true}])";
    Candidate c = Candidate::from_json(old);
    ASSERT_EQ(c.blocks.size(), 1u);
    EXPECT_FALSE(c.blocks[0].cache_write);
    Candidate w = c;
    w.blocks[0].cache_write = true;
    EXPECT_NE(w.to_json(), c.to_json());
    EXPECT_EQ(Candidate::from_json(w.to_json()), w);
    EXPECT_EQ(Candidate::from_json(c.to_json()), c);
    // It generates: a cache_write step and the write-back at the S1 tiles.
    tir::PrimFunc f = gemm(24, 8, 16, false);
    schedule::Schedule s = generate(f, w, {});
    EXPECT_EQ(s.trace().steps.front().op, "cache_write");
    int at = 0;
    for (const schedule::Step& st : s.trace().steps) at += st.op == "reverse_compute_at";
    EXPECT_EQ(at, 1);
    // S2 x S3 tiles of the 24x8 output: (3*4) x (1*8) accumulators.
    EXPECT_EQ(largest_local(s.func()), 12 * 8);
    EXPECT_LE(max_rel_diff(run_jit(s.func(), 2), run_interpreted(f, 2)), 1e-4);
}

TEST(CompactLocalBuffers, TileBufferShrinksOnlyWhereIterationsAreIndependent) {
    tir::PrimFunc f = gemm(64, 48, 32, false);
    // The write cache computed at a tile loop: one 8x16 tile per iteration.
    schedule::Schedule s(f);
    std::string wb = s.cache_write("C", 0, "local");
    auto loops = s.get_loops("C");
    auto i = s.split(loops[0], {-1, 8});
    auto j = s.split(loops[1], {-1, 16});
    s.reorder({i[0], j[0], loops[2], i[1], j[1]});
    s.reverse_compute_at(wb, j[0]);
    tir::PrimFunc lowered = tir::lower_blocks(s.func());
    tir::PrimFunc compact = tir::compact_local_buffers(lowered);
    int64_t n = 0;
    tir::post_order_visit(compact->body, [&](const tir::Object* o) {
        if (o->node_type == tir::NodeType::Allocate)
            n = static_cast<const tir::Allocate*>(o)->buffer.num_elements();
    });
    EXPECT_EQ(n, 8 * 16);
    EXPECT_LE(max_rel_diff(run_jit(s.func(), 4), run_interpreted(f, 4)), 1e-4);
    // Without compute_at the cache is filled by one nest and read by another:
    // it must stay whole.
    schedule::Schedule whole(f);
    whole.cache_write("C", 0, "local");
    EXPECT_EQ(largest_local(whole.func()), 64 * 48);
    // Nor when the cached block's nest runs the reduction outermost (every k
    // iteration reads what the previous one accumulated).
    schedule::Schedule red(f);
    std::string wb2 = red.cache_write("C", 0, "local");
    auto l2 = red.get_loops("C");
    auto k = red.split(l2[2], {-1, 8});
    red.reorder({k[0], l2[0], l2[1], k[1]});
    EXPECT_EQ(largest_local(red.func()), 64 * 48);
    EXPECT_LE(max_rel_diff(run_jit(red.func(), 4), run_interpreted(f, 4)), 1e-4);
    (void)wb2;
}

}  // namespace
}  // namespace tessera::autotune
