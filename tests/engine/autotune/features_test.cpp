// Cost-model features of the newer rules on known loop nests: a cache_write
// candidate's compacted local tile buffer, a GPU sketch with shared-memory
// staging (the features describe the reduction, not the cooperative copy, and
// the staged tiles' shared bytes), software prefetches (not loads).
#include "engine/autotune/features.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "engine/autotune/space.h"
#include "engine/autotune/space_gpu.h"
#include "engine/te/tensor.h"
#include "engine/tir/functor.h"
#include "engine/tir/passes/flatten_buffers.h"
#include "engine/tir/passes/inject_prefetch.h"
#include "engine/tir/passes/lower_blocks.h"
#include "tests/engine/autotune/autotune_test_util.h"

namespace tessera::autotune {
namespace {

using test::matmul;

float feature(const std::vector<float>& x, const std::string& name) {
    const auto& names = feature_names();
    auto it = std::find(names.begin(), names.end(), name);
    EXPECT_NE(it, names.end()) << name;
    return it == names.end() ? NAN : x.at(size_t(it - names.begin()));
}

float lg(double v) { return float(std::log2(1.0 + v)); }

TEST(Features, NamesAreUniqueAndTheVectorHasTheirLength) {
    const auto& names = feature_names();
    std::vector<std::string> sorted = names;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end());
    EXPECT_EQ(names.size(), 50u);  // the layout of kFeatureVersion 2
    EXPECT_EQ(kFeatureVersion, 2);
    EXPECT_EQ(extract_features(matmul(8, 8, 8)).size(), names.size());
}

// Tiles {S0, S1, S2, S3} per spatial loop, {R0, R1} for k: the local buffer
// holds the S2 x S3 tile of each spatial loop (what one S1 iteration writes).
TEST(Features, CacheWriteLocalBufferSizeAppears) {
    const tir::PrimFunc f = matmul(64, 64, 32);
    struct Case {
        std::vector<int64_t> ti, tj, tk;
    };
    for (const Case& c :
         {Case{{2, 4, 2, 4}, {2, 2, 4, 4}, {4, 8}}, Case{{1, 8, 4, 2}, {4, 1, 2, 8}, {2, 16}},
          Case{{4, 2, 1, 8}, {1, 4, 1, 16}, {32, 1}}}) {
        Candidate cand;
        BlockDecision d;
        d.block = "C";
        d.rule = BlockDecision::Tile;
        d.tiles = {c.ti, c.tj, c.tk};
        d.cache_write = true;
        cand.blocks = {d};
        const tir::PrimFunc g = generate(f, cand, {}).func();
        const KernelStats st = kernel_stats(g);
        const int64_t tile = c.ti[2] * c.ti[3] * c.tj[2] * c.tj[3];
        EXPECT_EQ(st.alloc_local_bytes, 4.0 * double(tile));
        EXPECT_EQ(st.alloc_shared_bytes, 0);
        EXPECT_EQ(st.alloc_global_bytes, 0);
        EXPECT_EQ(st.alloc_bytes, 4.0 * double(tile));
        // The main statement is the accumulation into the local buffer.
        EXPECT_TRUE(st.reduction);
        EXPECT_EQ(st.main_buffer, "C_local");
        EXPECT_EQ(st.iterations, 64 * 64 * 32);
        EXPECT_EQ(st.local_accesses, 2);  // its store and its load
        EXPECT_EQ(st.stores, 3);          // init, update, write-back
        const std::vector<float> x = extract_features(g);
        EXPECT_FLOAT_EQ(feature(x, "alloc_local_bytes"), lg(4.0 * double(tile)));
        EXPECT_FLOAT_EQ(feature(x, "alloc_shared_bytes"), 0.f);
        EXPECT_FLOAT_EQ(feature(x, "reduction"), 1.f);
        EXPECT_FLOAT_EQ(feature(x, "local_accesses"), 2.f);
        // Without the rule: no local buffer, the output accumulates in place.
        cand.blocks[0].cache_write = false;
        const KernelStats plain = kernel_stats(generate(f, cand, {}).func());
        EXPECT_EQ(plain.alloc_local_bytes, 0);
        EXPECT_EQ(plain.main_buffer, "C");
        EXPECT_EQ(plain.iterations, st.iterations);
        EXPECT_EQ(plain.local_accesses, 0);
    }
}

// GPU sketches of a 64x64x32 GEMM with and without shared-memory staging:
// the staged kernel's copy loops (nested threadIdx loops of the cooperative
// fetch) run more "iterations" than the reduction if counted naively; the
// features must still describe the reduction, exactly as without staging.
TEST(Features, StagedGpuSketchDescribesTheReductionNotTheCopy) {
    const int64_t m = 64, n = 64, k = 32;
    const tir::PrimFunc f = matmul(m, n, k);
    struct Case {
        std::vector<std::vector<int64_t>> tiles;
        int64_t fetch_vector;
    };
    for (const Case& c : {Case{{{2, 1, 8, 2, 2}, {2, 1, 8, 2, 2}, {4, 2, 4}}, 1},
                          Case{{{1, 1, 16, 2, 2}, {1, 2, 16, 1, 2}, {4, 2, 4}}, 1},
                          Case{{{2, 2, 4, 2, 2}, {1, 1, 32, 2, 1}, {2, 4, 4}}, 2}}) {
        GpuSketch s;
        s.block = gpu_sketch_block(f);
        ASSERT_EQ(s.block, "C");
        s.tiles = c.tiles;
        const tir::PrimFunc plain_f = generate_gpu(f, s).func();
        s.shared = true;
        s.fetch_vector = c.fetch_vector;
        const tir::PrimFunc staged_f = generate_gpu(f, s).func();
        const KernelStats staged = kernel_stats(staged_f), plain = kernel_stats(plain_f);
        const auto& ti = c.tiles[0];
        const auto& tj = c.tiles[1];
        const auto& tk = c.tiles[2];
        const int64_t grid = ti[0] * ti[1] * ti[2] * tj[0] * tj[1] * tj[2];
        for (const KernelStats* st : {&staged, &plain}) {
            EXPECT_EQ(st->main_buffer, "C") << s.to_json();
            EXPECT_TRUE(st->reduction);
            EXPECT_EQ(st->iterations, double(m * n * k));
            // blockIdx, vthread, threadIdx, R0, R1, S3 i, S3 j, R2, S4 i, S4 j
            EXPECT_EQ(st->depth, 10);
            EXPECT_EQ(st->parallel, grid);
            EXPECT_EQ(st->innermost_extent, tj[4]);
            EXPECT_EQ(st->accesses, 4);  // C store, C, A, B loads
            EXPECT_EQ(st->float_mul, double(m * n * k));
            EXPECT_EQ(st->float_add, double(m * n * k));
        }
        // The staged reduction reads A and B from shared memory: the tiles of
        // one R0 step of one (block, vthread) iteration (every case fetches at
        // least one element per thread, so no fetch loop over-covers a tile).
        EXPECT_EQ(staged.shared_accesses, 2);
        EXPECT_EQ(plain.shared_accesses, 0);
        const int64_t rows = ti[2] * ti[3] * ti[4], cols = tj[2] * tj[3] * tj[4];
        const int64_t step = tk[1] * tk[2];
        EXPECT_EQ(staged.alloc_shared_bytes, 4.0 * double(rows * step + step * cols));
        EXPECT_EQ(plain.alloc_shared_bytes, 0);
        EXPECT_EQ(staged.stores, plain.stores + 2);  // the two copies
        // The feature vectors agree but for what staging adds.
        const std::vector<float> xs = extract_features(staged_f), xp = extract_features(plain_f);
        const auto& names = feature_names();
        for (size_t i = 0; i < names.size(); ++i) {
            const std::string& nm = names[i];
            // Staging adds the copies and the shared tiles, whose footprint is smaller.
            if (nm == "alloc_bytes" || nm == "alloc_shared_bytes" || nm == "allocs" ||
                nm == "stores" || nm == "shared_accesses" || nm == "kind_vectorized" ||
                nm == "int_ops" || nm == "int_per_float" || nm == "footprint_bytes" ||
                nm == "l1_reuse_iters" || nm == "l2_reuse_iters")
                continue;
            EXPECT_FLOAT_EQ(xs[i], xp[i]) << nm << " " << s.to_json();
        }
        EXPECT_FLOAT_EQ(feature(xs, "alloc_shared_bytes"),
                        lg(4.0 * double(rows * step + step * cols)));
        EXPECT_FLOAT_EQ(feature(xs, "shared_accesses"), 2.f);
        EXPECT_FLOAT_EQ(feature(xs, "iterations"), lg(double(m * n * k)));
        EXPECT_FLOAT_EQ(feature(xs, "inner0"), lg(double(tj[4])));
        EXPECT_FLOAT_EQ(feature(xs, "inner0_kind"), 0.f);
        EXPECT_FLOAT_EQ(feature(xs, "outer_extent_0"), lg(double(ti[0] * tj[0])));
        EXPECT_FLOAT_EQ(feature(xs, "parallel"), lg(double(grid)));
    }
}

// Software prefetches (inject_prefetch) add tir.prefetch statements whose
// addresses are loads: they are counted as prefetches, never as accesses.
TEST(Features, PrefetchesDoNotChangeLoadCounts) {
    const tir::PrimFunc f = matmul(16, 24, 32);
    schedule::Schedule s(f);
    const auto loops = s.get_loops("C");
    s.annotate(loops[0], tir::kPrefetchAnnotation, "A:1");
    const tir::PrimFunc flat = tir::flatten_buffers(tir::lower_blocks(s.func()));
    const tir::PrimFunc injected = tir::inject_prefetch(flat);
    int calls = 0;
    tir::post_order_visit(injected->body, [&](const tir::Object* o) {
        if (o->node_type != tir::NodeType::Call) return;
        calls += static_cast<const tir::Call*>(o)->op == tir::kPrefetchIntrinsic;
    });
    ASSERT_EQ(calls, 1);  // A[i + 1, k] at the start of the k loop's body
    const KernelStats a = kernel_stats(flat), b = kernel_stats(injected);
    EXPECT_EQ(a.prefetches, 1);  // the annotation's one buffer
    EXPECT_EQ(b.prefetches, a.prefetches + calls);
    EXPECT_EQ(b.accesses, a.accesses);
    EXPECT_EQ(b.accesses, 4);  // C store, C, A, B loads
    EXPECT_EQ(b.stride0, a.stride0);
    EXPECT_EQ(b.stride1, a.stride1);
    EXPECT_EQ(b.strided, a.strided);
    EXPECT_EQ(b.footprint_bytes, a.footprint_bytes);
    EXPECT_EQ(b.int_ops, a.int_ops);
    EXPECT_EQ(b.math_calls, a.math_calls);
    EXPECT_EQ(b.stores, a.stores);
    EXPECT_EQ(b.iterations, 16 * 24 * 32);
    const std::vector<float> xa = extract_features(flat), xb = extract_features(injected);
    const auto& names = feature_names();
    for (size_t i = 0; i < names.size(); ++i) {
        if (names[i] != "prefetches") {
            EXPECT_FLOAT_EQ(xa[i], xb[i]) << names[i];
        }
    }
    EXPECT_FLOAT_EQ(feature(xb, "prefetches"), 2.f);
    // An unannotated schedule has none.
    EXPECT_EQ(kernel_stats(f).prefetches, 0);
}

}  // namespace
}  // namespace tessera::autotune
