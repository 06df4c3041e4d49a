// The GPU-sketch search without a device: mutations keep perfect tile
// factorizations and pass the CUDA verifier; cost-model features see the
// thread-bound loops; evolution under the cost model
// beats the same number of random samples on a synthetic objective; a search
// resumes from the database without measuring a recorded sketch again.
#include "engine/autotune/search_gpu.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <random>
#include <set>

#include "engine/autotune/features.h"
#include "engine/autotune/task.h"
#include "engine/codegen/cuda/cuda_codegen.h"
#include "engine/driver/driver.h"
#include "engine/driver/tune_gpu.h"
#include "tests/engine/codegen/cuda/cuda_test_util.h"

namespace tessera {
namespace {

autotune::TuneTask gemm_task(int64_t m, int64_t n, int64_t k) {
    driver::BuildOptions bo;
    auto tasks =
        autotune::extract_tasks(driver::optimize(autotune::gemm_graph(m, n, k), bo), "cuda", 1);
    EXPECT_EQ(tasks.size(), 1u);
    return tasks.at(0);
}

int64_t product(const std::vector<int64_t>& v) {
    int64_t p = 1;
    for (int64_t x : v) p *= x;
    return p;
}

// A deterministic cost (ms) of a GEMM sketch, lowest at 128 threads, 4 x 4
// outputs per thread, a reduction step of 4, one vthread, unrolled.
double synthetic_ms(const autotune::GpuSketch& s) {
    double threads = 1, vthreads = 1, cost = 1;
    for (const auto& f : s.tiles) {
        if (f.size() == 5) {
            threads *= double(f[2]);
            vthreads *= double(f[1]);
            cost += std::pow(std::log2(double(f[3] * f[4])) - 2, 2);
            cost += 0.5 * std::log2(double(f[3]));  // S4 (innermost) over S3
        } else {
            cost += 0.5 * std::pow(std::log2(double(f[2])) - 2, 2);
        }
    }
    cost += std::pow(std::log2(threads) - 7, 2) + std::log2(vthreads) + (s.unroll ? 0 : 1);
    return cost;
}

TEST(SearchGpu, MutationsKeepFactorizationsAndPassTheVerifier) {
    TESSERA_SKIP_WITHOUT_NVRTC();
    autotune::TuneTask t = gemm_task(48, 64, 40);
    const size_t num_inputs = t.func->params.size() - size_t(t.num_outputs);
    std::vector<runtime::NDArray> args = test::random_args(t.func, num_inputs, 11);
    std::vector<runtime::NDArray> want = test::interpret_copy(t.func, args);
    std::mt19937_64 rng(5);
    autotune::GpuSketch s = autotune::sample_gpu(t.func, rng);
    std::vector<int64_t> extents;
    for (const auto& f : s.tiles) extents.push_back(product(f));
    const autotune::GpuSpaceOptions limits;
    int changed = 0, tiles_changed = 0, unroll_flips = 0;
    for (int i = 0; i < 120; ++i) {
        autotune::GpuSketch m = autotune::mutate_gpu(t.func, s, rng);
        changed += !(m == s);
        tiles_changed += m.tiles != s.tiles;
        unroll_flips += m.unroll != s.unroll;
        ASSERT_EQ(m.block, s.block);
        ASSERT_EQ(m.tiles.size(), extents.size());
        int64_t threads = 1, vthreads = 1, inner = 1;
        for (size_t l = 0; l < m.tiles.size(); ++l) {
            ASSERT_EQ(m.tiles[l].size(), s.tiles[l].size()) << m.to_json();
            EXPECT_EQ(product(m.tiles[l]), extents[l]) << m.to_json();
            for (int64_t f : m.tiles[l]) EXPECT_GE(f, 1) << m.to_json();
            if (m.tiles[l].size() == 5) {
                vthreads *= m.tiles[l][1];
                threads *= m.tiles[l][2];
                inner *= m.tiles[l][3] * m.tiles[l][4];
            } else {
                inner *= m.tiles[l][2];
            }
        }
        EXPECT_LE(threads, limits.max_threads);
        EXPECT_LE(vthreads, limits.max_vthreads);
        EXPECT_LE(inner, limits.max_inner);
        tir::PrimFunc f = autotune::generate_gpu(t.func, m).func();
        EXPECT_NO_THROW(driver::check_gpu_candidate(f)) << m.to_json();
        if (i % 30 == 0) {  // and they still compute the GEMM
            std::vector<runtime::NDArray> got = test::interpret_copy(f, args);
            EXPECT_TRUE(runtime::allclose(got.back(), want.back(), 1e-4, 1e-5)) << m.to_json();
        }
        s = m;  // a random walk
    }
    EXPECT_GT(changed, 100);
    EXPECT_GT(tiles_changed, 60);
    EXPECT_GT(unroll_flips, 5);
    // The last sketch of the walk builds to PTX (NVRTC).
    driver::GpuCandidate c = driver::build_gpu_candidate(t.func, s, "compute_90");
    EXPECT_NE(c.ptx.find(".entry " + c.kernels.at(0)), std::string::npos);
}

TEST(SearchGpu, FeaturesSeeThreadBoundLoops) {
    autotune::TuneTask t = gemm_task(64, 128, 32);
    std::mt19937_64 rng(8);
    for (int i = 0; i < 6; ++i) {
        autotune::GpuSketch s = autotune::sample_gpu(t.func, rng);
        tir::PrimFunc f = autotune::generate_gpu(t.func, s).func();
        int64_t grid_threads = 1;  // blockIdx x threadIdx extents: around every store
        for (const auto& l : s.tiles)
            if (l.size() == 5) grid_threads *= l[0] * l[2];
        ASSERT_GT(grid_threads, 1);
        // The thread-bound loops around the main store count as parallel ones.
        autotune::KernelStats st = autotune::kernel_stats(f);
        EXPECT_GE(st.parallel, grid_threads) << s.to_json();
        EXPECT_EQ(st.parallel % grid_threads, 0) << s.to_json();
        const auto& names = autotune::feature_names();
        const size_t par =
            size_t(std::find(names.begin(), names.end(), "parallel") - names.begin());
        ASSERT_LT(par, names.size());
        EXPECT_FLOAT_EQ(autotune::extract_features(f)[par],
                        float(std::log2(1.0 + double(st.parallel))));
    }
}

// Best synthetic cost found in `trials` trials by a search with `epsilon`.
double best_found(const autotune::TuneTask& t, double epsilon, uint64_t seed, int trials) {
    autotune::Database db;
    autotune::CostModel model;
    autotune::GpuSearchOptions o;
    o.epsilon = epsilon;
    o.population = 24;
    o.generations = 3;
    autotune::GpuSearch search(t, db, model, o, seed);
    std::set<std::string> measured;
    search.run(trials, [&](const autotune::GpuSketch& s, const tir::PrimFunc&) {
        EXPECT_TRUE(measured.insert(s.to_json()).second) << "measured twice: " << s.to_json();
        return autotune::GpuTrial{{synthetic_ms(s)}, ""};
    });
    EXPECT_EQ(search.state().trials, trials);
    EXPECT_EQ(int(db.records().size()), trials);
    double best = 1e300;
    for (const auto& r : db.records()) {
        EXPECT_EQ(r.target, "cuda");
        EXPECT_EQ(r.workload, t.key);
        best = std::min(best, r.median_ms());
    }
    EXPECT_DOUBLE_EQ(best, search.state().best_ms);
    return best;
}

TEST(SearchGpu, EvolutionWithTheCostModelBeatsRandomSamples) {
    autotune::TuneTask t = gemm_task(256, 256, 256);
    const int trials = 40, seeds = 4;
    double evolved = 0, random = 0;
    for (int seed = 1; seed <= seeds; ++seed) {
        evolved += best_found(t, 0.2, uint64_t(seed), trials) / seeds;
        random += best_found(t, 1.0, uint64_t(seed), trials) / seeds;
    }
    std::cout << "mean best synthetic cost over " << seeds << " seeds, " << trials
              << " trials: evolution " << evolved << ", random " << random << "\n";
    EXPECT_LT(evolved, random);
}

TEST(SearchGpu, ResumesFromTheDatabaseWithoutRemeasuring) {
    autotune::TuneTask t = gemm_task(64, 64, 64);
    const std::string path =
        (std::filesystem::temp_directory_path() / "tessera_search_gpu_resume.jsonl").string();
    std::filesystem::remove(path);
    std::map<std::string, int> measured;
    auto measure = [&](const autotune::GpuSketch& s, const tir::PrimFunc&) {
        measured[s.to_json()]++;
        if (s.unroll && s.tiles[0][2] == 1) throw UserError("a deliberately broken candidate");
        return autotune::GpuTrial{{synthetic_ms(s), synthetic_ms(s) + 0.1}, ""};
    };
    autotune::GpuSearchOptions o;
    o.population = 16;
    {
        autotune::Database db(path);
        autotune::CostModel model;
        autotune::GpuSearch search(t, db, model, o, 1);
        EXPECT_EQ(search.state().resumed, 0);
        search.run(12, measure);
        EXPECT_EQ(search.state().trials, 12);
    }
    autotune::Database db(path);
    ASSERT_EQ(db.records().size(), 12u);
    int errors = 0;
    for (const auto& r : db.records()) errors += !r.ok();
    autotune::CostModel model;
    autotune::GpuSearch search(t, db, model, o, 2);
    EXPECT_EQ(search.state().resumed, 12);
    EXPECT_EQ(search.state().trials, 12);
    EXPECT_EQ(search.state().errors, errors);
    EXPECT_TRUE(model.trained());  // from the recorded trials
    search.run(12, measure);       // the budget is reached: nothing to do
    EXPECT_EQ(search.state().measured, 0);
    search.run(20, measure);
    EXPECT_EQ(search.state().trials, 20);
    EXPECT_EQ(search.state().measured, 8);
    EXPECT_EQ(db.records().size(), 20u);
    for (const auto& [sketch, n] : measured) EXPECT_EQ(n, 1) << "measured twice: " << sketch;
    EXPECT_EQ(measured.size(), 20u);
    const autotune::TuningRecord* best = db.best(t.key, "cuda");
    ASSERT_NE(best, nullptr);
    EXPECT_DOUBLE_EQ(best->median_ms(), search.state().best_ms);
    std::filesystem::remove(path);
}

}  // namespace
}  // namespace tessera
