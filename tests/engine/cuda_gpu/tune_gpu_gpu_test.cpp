// GPU tuning on the device (label `gpu`): a short tune of a GEMM records one
// "cuda" trial per candidate, the good ones timed and checked against the
// interpreter. Skips without a driver.
#include <gtest/gtest.h>

#include "engine/autotune/task.h"
#include "engine/driver/driver.h"
#include "engine/driver/tune_gpu.h"
#include "engine/runtime/cuda_driver.h"

namespace tessera {
namespace {

TEST(TuneGpuDevice, ShortGemmTuneRecordsTimedCudaTrials) {
    if (!runtime::cuda::available()) GTEST_SKIP() << runtime::cuda::unavailable_reason();
    driver::BuildOptions bo;
    auto tasks = autotune::extract_tasks(
        driver::optimize(autotune::gemm_graph(128, 96, 64), bo), "cuda", 1);
    autotune::Database db;
    driver::GpuTuneOptions o;
    o.trials = 6;
    o.repeat = 3;
    driver::GpuTuneResult r = driver::tune_gpu(tasks, db, o);
    EXPECT_EQ(r.measured, 6);
    ASSERT_EQ(r.tasks.size(), 1u);
    EXPECT_LT(r.tasks[0].errors, 6);
    EXPECT_GT(r.tasks[0].best_ms, 0);
    ASSERT_EQ(db.records().size(), 6u);
    for (const auto& rec : db.records()) {
        EXPECT_EQ(rec.target, "cuda");
        if (rec.ok()) {
            EXPECT_EQ(rec.times_ms.size(), 3u);
        }
    }
    EXPECT_NE(db.best(tasks[0].key, "cuda"), nullptr);
}

}  // namespace
}  // namespace tessera
