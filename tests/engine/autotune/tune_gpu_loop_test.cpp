// The multi-task GPU tuning loop without a device (a synthetic measure
// callback): the shared task scheduler gives more trials to the task with
// the bigger weight or gain; the end-of-run confirmation records the default
// and the finalists, and a confirmed record wins over a faster unconfirmed
// one when records apply; "cuda" records are keyed to their GPU (another
// GPU's are not applied, older ones naming none are, with a note).
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <map>
#include <random>

#include "engine/autotune/search_gpu.h"
#include "engine/autotune/task.h"
#include "engine/autotune/task_scheduler.h"
#include "engine/driver/cuda_model.h"
#include "engine/driver/driver.h"
#include "engine/driver/tune_gpu.h"
#include "engine/tir/printer.h"
#include "engine/topi/gpu/schedule_gpu.h"
#include "tests/engine/codegen/cuda/gpu_tune_util.h"
#include "tests/engine/codegen/cuda/cuda_test_util.h"

namespace tessera {
namespace {

autotune::TuneTask gemm_task(int64_t m, int64_t n, int64_t k) {
    auto tasks =
        autotune::extract_tasks(test::optimized_for_cuda(autotune::gemm_graph(m, n, k)), "cuda");
    EXPECT_EQ(tasks.size(), 1u);
    return tasks.at(0);
}

// A deterministic pseudo-time in [1, 2) ms of a scheduled function.
double hashed_ms(const tir::PrimFunc& f) {
    return 1.0 + double(std::hash<std::string>{}(tir::print(f)) % 1000) / 1000.0;
}

autotune::GpuTuneLoopOptions small_loop(int trials) {
    autotune::GpuTuneLoopOptions o;
    o.trials = trials;
    o.search.batch = 4;
    o.search.population = 12;
    o.search.generations = 1;
    return o;
}

int trials_of(const autotune::Database& db, const std::string& key) {
    int n = 0;
    for (const auto& r : db.records())
        n += r.workload == key && r.target == "cuda" && !r.baseline && !r.confirmed;
    return n;
}

TEST(TuneGpuLoop, SchedulerPrefersTheHeavierTask) {
    autotune::TuneTask light = gemm_task(32, 32, 32), heavy = gemm_task(32, 32, 16);
    heavy.weight = 8;  // occurs 8 times in the model
    // Every measurement of a task a little faster than the last: equal gains.
    std::map<size_t, int> calls;
    auto measure = [&](size_t task, const tir::PrimFunc&) {
        return autotune::GpuTrial{{1.0 / (1.0 + 0.1 * calls[task]++)}, ""};
    };
    autotune::Database db;
    autotune::GpuTuneLoopOptions o = small_loop(40);
    o.confirm_top = 0;  // no confirmation here
    autotune::GpuTuneLoopResult r = autotune::tune_gpu_tasks({&light, &heavy}, db, o, measure);
    EXPECT_EQ(r.measured, 40);
    ASSERT_EQ(r.tasks.size(), 2u);
    EXPECT_EQ(r.tasks[0].trials + r.tasks[1].trials, 40);
    EXPECT_GE(r.tasks[0].trials, 4);  // every task gets a first round
    EXPECT_GT(r.tasks[1].trials, 2 * r.tasks[0].trials)
        << r.tasks[1].trials << " vs " << r.tasks[0].trials;
    EXPECT_EQ(trials_of(db, heavy.key), r.tasks[1].trials);
    EXPECT_EQ(r.tasks[1].weight, 8);
    for (const auto& t : r.tasks) EXPECT_GT(t.default_ms, 0);  // the baselines
    int baselines = 0;
    for (const auto& rec : db.records()) baselines += rec.baseline;
    EXPECT_EQ(baselines, 2);
}

TEST(TuneGpuLoop, SchedulerPrefersTheTaskThatKeepsGaining) {
    autotune::TuneTask flat = gemm_task(32, 32, 32), gaining = gemm_task(32, 32, 16);
    std::map<size_t, int> calls;
    auto measure = [&](size_t task, const tir::PrimFunc&) {
        const int n = calls[task]++;
        // Task 0 stays at 0.3 ms; task 1 starts slower and keeps improving.
        return autotune::GpuTrial{{task == 0 ? 0.3 : 1.0 / (1.0 + 0.2 * n)}, ""};
    };
    autotune::Database db;
    autotune::GpuTuneLoopOptions o = small_loop(40);
    o.confirm_top = 0;
    autotune::GpuTuneLoopResult r = autotune::tune_gpu_tasks({&flat, &gaining}, db, o, measure);
    EXPECT_EQ(r.tasks[0].trials + r.tasks[1].trials, 40);
    EXPECT_GT(r.tasks[1].trials, 2 * r.tasks[0].trials)
        << r.tasks[1].trials << " vs " << r.tasks[0].trials;
    // The shared scheduler itself: same facts, the bigger gain wins.
    EXPECT_EQ(autotune::pick_task({{1, 8, 1.0, 1.0, 0.0}, {1, 8, 1.0, 1.0, 0.5}}), 1);
    EXPECT_EQ(autotune::pick_task({{4, 8, 1.0, 1.0, 0.1}, {1, 8, 1.0, 1.0, 0.1}}), 0);
    EXPECT_EQ(autotune::pick_task({{4, 8, 1.0, 1.0, 0.1}, {1, 0, 0, 0, 1}}), 1);  // no trial yet
    EXPECT_EQ(autotune::pick_task({{4, 8, 1.0, 1.0, -1}, {1, 8, 1.0, 1.0, 0.0}}), 1);  // exhausted
    EXPECT_DOUBLE_EQ(autotune::round_gain(2.0, 1.5), 0.25);
    EXPECT_DOUBLE_EQ(autotune::round_gain(0, 1.5), 1.0);
}

TEST(TuneGpuLoop, ConfirmedRecordsAreWrittenAndWinOverAFasterUnconfirmedOne) {
    autotune::TuneTask t = gemm_task(64, 64, 32);
    const std::string dflt = tir::print(topi::schedule_gpu_default(t.func));
    std::map<std::string, int> runs;  // per scheduled function: confirmation runs are repeats
    auto measure = [&](size_t, const tir::PrimFunc& f) {
        const std::string p = tir::print(f);
        runs[p]++;
        const double ms = p == dflt ? 3.0 : hashed_ms(f);
        return autotune::GpuTrial{{ms, ms + 0.01, ms + 0.02}, ""};
    };
    autotune::Database db;
    autotune::GpuTuneLoopOptions o = small_loop(16);
    o.search.device = "Test GPU/sm_90";
    autotune::GpuTuneLoopResult r = autotune::tune_gpu_tasks({&t}, db, o, measure);
    ASSERT_EQ(r.tasks.size(), 1u);
    EXPECT_EQ(r.tasks[0].trials, 16);
    EXPECT_TRUE(r.tasks[0].confirmed);
    std::vector<const autotune::TuningRecord*> confirmed;
    for (const auto& rec : db.records()) {
        EXPECT_EQ(rec.device, "Test GPU/sm_90");
        if (rec.confirmed) confirmed.push_back(&rec);
    }
    ASSERT_EQ(confirmed.size(), 4u);  // the default and the 3 fastest sketches
    EXPECT_EQ(confirmed[0]->decisions, "");  // the default first
    EXPECT_EQ(runs[dflt], 1 + 3);            // its baseline, then 3 rounds
    double fastest = 1e300;
    std::string winner;
    for (const auto* c : confirmed) {
        EXPECT_EQ(c->times_ms.size(), 3u);  // one median per round
        if (c->median_ms() < fastest) fastest = c->median_ms(), winner = c->decisions;
    }
    EXPECT_NE(winner, "");  // the default (3 ms) is slower than every sketch
    EXPECT_DOUBLE_EQ(r.tasks[0].best_ms, fastest);
    EXPECT_EQ(r.tasks[0].best, winner);

    // A faster unconfirmed trial (a lucky run) does not displace the confirmed winner.
    std::mt19937_64 rng(5);
    autotune::GpuSketch lucky;
    do lucky = autotune::sample_gpu(t.func, rng);
    while (lucky.to_json() == winner);
    autotune::TuningRecord fast = *confirmed[1];
    fast.confirmed = false;
    fast.decisions = lucky.to_json();
    fast.trace = autotune::generate_gpu(t.func, lucky).trace();
    fast.times_ms = {0.001};
    db.append(fast);
    const std::string device = "Test GPU/sm_90";
    const autotune::TuningRecord* best = autotune::best_gpu_record(db, t.key, device);
    ASSERT_NE(best, nullptr);
    EXPECT_TRUE(best->confirmed);
    EXPECT_EQ(best->decisions, winner);
    tir::PrimFunc applied = autotune::apply_best_gpu(t.func, db, &device);
    ASSERT_TRUE(applied.defined());
    EXPECT_EQ(tir::print(applied),
              tir::print(autotune::generate_gpu(t.func, autotune::GpuSketch::from_json(winner)).func()));
}

TEST(TuneGpuLoop, AConfirmedDefaultKeepsTheDefaultSchedule) {
    TESSERA_SKIP_WITHOUT_NVRTC();
    graph::Graph og = test::optimized_for_cuda(autotune::gemm_graph(64, 64, 32));
    std::vector<autotune::TuneTask> tasks = autotune::extract_tasks(og, "cuda");
    ASSERT_EQ(tasks.size(), 1u);
    const autotune::TuneTask& t = tasks[0];
    const std::string dflt = tir::print(topi::schedule_gpu_default(t.func));
    // Sketches look fast once (trials), the default is steadily faster.
    std::map<std::string, int> runs;
    auto measure = [&](size_t, const tir::PrimFunc& f) {
        const std::string p = tir::print(f);
        const int n = runs[p]++;
        const double ms = p == dflt ? 0.9 : (n == 0 ? 0.5 : 2.0);
        return autotune::GpuTrial{{ms}, ""};
    };
    const std::string path =
        (std::filesystem::temp_directory_path() / "tessera_tune_gpu_loop_default.jsonl").string();
    std::filesystem::remove(path);
    const std::string device = "Test GPU/sm_90";
    {
        autotune::Database db(path);
        autotune::GpuTuneLoopOptions o = small_loop(8);
        o.search.device = device;
        autotune::GpuTuneLoopResult r = autotune::tune_gpu_tasks({&t}, db, o, measure);
        EXPECT_TRUE(r.tasks[0].confirmed);
        EXPECT_EQ(r.tasks[0].best, "");  // the default won
        EXPECT_DOUBLE_EQ(r.tasks[0].best_ms, 0.9);
    }
    autotune::Database db(path, /*read_only=*/true);  // round trip through the file
    const autotune::TuningRecord* best = autotune::best_gpu_record(db, t.key, device);
    ASSERT_NE(best, nullptr);
    EXPECT_TRUE(best->confirmed);
    EXPECT_EQ(best->device, device);
    driver::GpuRecordsUse use;
    std::shared_ptr<driver::CudaModel> m = driver::build_cuda_with_records(og, db, &use, &device);
    EXPECT_EQ(use.tuned, 0);
    EXPECT_EQ(m->compiled.source, driver::build_cuda(og)->compiled.source);
    // Resuming on another GPU starts afresh; on the same one it has nothing to do.
    autotune::Database again(path);
    autotune::GpuTuneLoopOptions o = small_loop(8);
    o.search.device = "Other GPU/sm_80";
    o.confirm_top = 0;
    autotune::GpuTuneLoopResult other = autotune::tune_gpu_tasks({&t}, again, o, measure);
    EXPECT_EQ(other.tasks[0].resumed, 0);
    EXPECT_EQ(other.measured, 8);
    o.search.device = device;
    autotune::GpuTuneLoopResult same = autotune::tune_gpu_tasks({&t}, again, o, measure);
    EXPECT_EQ(same.tasks[0].resumed, 8);
    EXPECT_EQ(same.measured, 0);
    std::filesystem::remove(path);
}

TEST(TuneGpuLoop, RecordsOfAnotherGpuAreNotApplied) {
    TESSERA_SKIP_WITHOUT_NVRTC();
    graph::Graph og = test::optimized_for_cuda(autotune::gemm_graph(64, 96, 48));
    std::vector<autotune::TuneTask> tasks = autotune::extract_tasks(og, "cuda");
    ASSERT_EQ(tasks.size(), 1u);
    const autotune::TuneTask& t = tasks[0];
    std::mt19937_64 rng(9);
    const autotune::GpuSketch s = autotune::sample_gpu(t.func, rng);
    autotune::GpuSketch older;
    do older = autotune::sample_gpu(t.func, rng);
    while (older == s);
    auto record = [&](const autotune::GpuSketch& sk, const std::string& device, double ms) {
        autotune::TuningRecord r = test::gpu_record(t, sk, ms);
        r.machine = "aarch64, some other host; 64 cores";  // the host does not matter
        r.device = device;
        return r;
    };
    const std::string path =
        (std::filesystem::temp_directory_path() / "tessera_tune_gpu_loop_device.jsonl").string();
    std::filesystem::remove(path);
    {
        autotune::Database db(path);
        db.append(record(s, "NVIDIA A100-SXM4-80GB/sm_80", 1.0));
    }
    const std::string h100 = "NVIDIA H100 80GB HBM3/sm_90", a100 = "NVIDIA A100-SXM4-80GB/sm_80";
    const std::string dflt_source = driver::build_cuda(og)->compiled.source;
    {
        autotune::Database db(path, /*read_only=*/true);
        ASSERT_EQ(db.records().at(0).device, a100);  // written and read back
        EXPECT_EQ(db.foreign_records(), 0);  // keyed to the GPU, not to the host
        driver::GpuRecordsUse use;
        std::shared_ptr<driver::CudaModel> m = driver::build_cuda_with_records(og, db, &use, &h100);
        EXPECT_EQ(use.tuned, 0);
        EXPECT_EQ(m->compiled.source, dflt_source);
        const std::string note = driver::gpu_records_note(db, use);
        EXPECT_NE(note.find("1 of 1 \"cuda\" records were measured on another GPU (" + a100 +
                            ") and are not applied; this GPU is " + h100),
                  std::string::npos)
            << note;
        // On the GPU it was measured on it applies.
        m = driver::build_cuda_with_records(og, db, &use, &a100);
        EXPECT_EQ(use.tuned, 1);
        EXPECT_NE(m->compiled.source, dflt_source);
        EXPECT_EQ(driver::gpu_records_note(db, use).find("another GPU"), std::string::npos);
        // Without a device to check against, it applies with a note.
        const std::string none;
        m = driver::build_cuda_with_records(og, db, &use, &none);
        EXPECT_EQ(use.tuned, 1);
        EXPECT_NE(driver::gpu_records_note(db, use).find("no CUDA device here"), std::string::npos);
    }
    // An older record naming no GPU (measured on this host) applies on the H100, with a
    // note; a record naming the H100 itself is preferred over it even when slower.
    autotune::Database db;
    autotune::TuningRecord old = record(older, "", 0.5);
    old.machine = autotune::machine_fingerprint();
    db.append(old);
    db.append(record(s, a100, 0.1));
    driver::GpuRecordsUse use;
    driver::build_cuda_with_records(og, db, &use, &h100);
    EXPECT_EQ(use.tuned, 1);
    EXPECT_NE(driver::gpu_records_note(db, use).find("1 \"cuda\" records name no GPU"),
              std::string::npos)
        << driver::gpu_records_note(db, use);
    EXPECT_EQ(autotune::best_gpu_record(db, t.key, h100)->decisions, older.to_json());
    db.append(record(s, h100, 0.8));
    EXPECT_EQ(autotune::best_gpu_record(db, t.key, h100)->decisions, s.to_json());
    autotune::TuningRecord foreign_old = record(older, "", 0.01);  // another host, no GPU named
    db.append(foreign_old);
    EXPECT_EQ(autotune::best_gpu_record(db, t.key, a100)->decisions, s.to_json());
    std::filesystem::remove(path);
}

}  // namespace
}  // namespace tessera
