// GPU tuning on the device (label `gpu`): a short tune of a GEMM records one
// "cuda" trial per candidate (keyed to this GPU), the good ones timed and
// checked against the interpreter, a baseline and confirmed finalists; a
// second tune resumes, and the confirmed best applies to the CUDA build and
// runs correctly. Skips without a driver.
#include <gtest/gtest.h>

#include <set>

#include "engine/autotune/search_gpu.h"
#include "engine/autotune/task.h"
#include "engine/driver/cuda_model.h"
#include "engine/driver/driver.h"
#include "engine/driver/tune_gpu.h"
#include "engine/runtime/cuda_driver.h"

namespace tessera {
namespace {

TEST(TuneGpuDevice, ShortGemmTuneRecordsTimedCudaTrials) {
    if (!runtime::cuda::available()) GTEST_SKIP() << runtime::cuda::unavailable_reason();
    driver::BuildOptions bo;
    auto tasks =
        autotune::extract_tasks(driver::optimize(autotune::gemm_graph(128, 96, 64), bo), "cuda", 1);
    autotune::Database db;
    driver::GpuTuneOptions o;
    o.trials = 6;
    o.repeat = 3;
    driver::GpuTuneResult r = driver::tune_gpu(tasks, db, o);
    EXPECT_EQ(r.measured, 6);
    ASSERT_EQ(r.tasks.size(), 1u);
    EXPECT_LT(r.tasks[0].errors, 6);
    EXPECT_GT(r.tasks[0].best_ms, 0);
    // The trials, the default schedule's baseline, then the confirmed finalists.
    int trials = 0, baselines = 0, confirmed = 0;
    for (const auto& rec : db.records()) {
        EXPECT_EQ(rec.target, "cuda");
        EXPECT_EQ(rec.device, autotune::gpu_fingerprint());  // keyed to this GPU
        trials += !rec.baseline && !rec.confirmed;
        baselines += rec.baseline;
        confirmed += rec.confirmed;
        if (rec.ok()) {
            // repeat 3 (confirmed: 3 rounds); a sample whose first run took
            // over 4x the best so far is timed once.
            EXPECT_GE(rec.times_ms.size(), 1u);
            EXPECT_LE(rec.times_ms.size(), 3u);
            if (rec.times_ms.size() < 3u) {
                EXPECT_GT(rec.times_ms[0], 4 * r.tasks[0].best_ms);
            }
        }
    }
    EXPECT_EQ(trials, 6);
    EXPECT_EQ(baselines, 1);
    EXPECT_GE(confirmed, 2);  // the default and at least one sketch
    EXPECT_TRUE(r.tasks[0].confirmed);
    EXPECT_GT(r.tasks[0].default_ms, 0);
    EXPECT_NE(autotune::best_gpu_record(db, tasks[0].key, autotune::gpu_fingerprint()), nullptr);
}

TEST(TuneGpuDevice, TunedRecordsResumeApplyAndRunCorrectly) {
    if (!runtime::cuda::available()) GTEST_SKIP() << runtime::cuda::unavailable_reason();
    driver::BuildOptions bo;
    bo.passes = driver::cuda_pass_pipeline({}, bo.opt_level);
    graph::Graph g = autotune::gemm_graph(128, 96, 64);
    graph::Graph og = driver::optimize(g, bo);
    auto tasks = autotune::extract_tasks(og, "cuda", 1);
    autotune::Database db;
    driver::GpuTuneOptions o;
    o.trials = 8;
    o.repeat = 3;
    EXPECT_EQ(driver::tune_gpu(tasks, db, o).measured, 8);
    o.trials = 12;  // resumed: 8 recorded, 4 more
    driver::GpuTuneResult r = driver::tune_gpu(tasks, db, o);
    EXPECT_EQ(r.measured, 4);
    ASSERT_EQ(r.tasks.size(), 1u);
    EXPECT_EQ(r.tasks[0].resumed, 8);
    EXPECT_EQ(r.tasks[0].trials, 12);
    std::set<std::string> sketches;
    for (const auto& rec : db.records())
        if (!rec.baseline && !rec.confirmed) EXPECT_TRUE(sketches.insert(rec.decisions).second);
    driver::GpuRecordsUse use;
    auto model = driver::build_cuda_with_records(og, db, &use);
    // The confirmed winner applies: a sketch, or the default GPU schedule when it won.
    const autotune::TuningRecord* best =
        autotune::best_gpu_record(db, tasks[0].key, autotune::gpu_fingerprint());
    ASSERT_NE(best, nullptr);
    EXPECT_TRUE(best->confirmed);
    EXPECT_EQ(use.tuned, best->decisions == "[]" || best->decisions.empty() ? 0 : 1);
    auto ex = model->make_executor();
    std::vector<runtime::NDArray> inputs;
    for (size_t i = 0; i < og.inputs.size(); ++i)
        inputs.push_back(runtime::random_ndarray(og.values[size_t(og.inputs[i])].type, 40 + i));
    for (size_t i = 0; i < inputs.size(); ++i) ex->set_input(i, inputs[i]);
    ex->run();
    std::vector<runtime::NDArray> want = driver::interpret_graph(g, inputs);
    EXPECT_TRUE(runtime::allclose(ex->get_output(0), want.at(0), 1e-3, 1e-4));
}

}  // namespace
}  // namespace tessera
