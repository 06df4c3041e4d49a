// GPU tuning without a GPU: candidates of the GPU sketch build to PTX and
// compute what the unscheduled kernel computes (interpreter); tuning itself
// refuses clearly when no device is present.
#include <gtest/gtest.h>

#include <random>

#include "engine/autotune/task.h"
#include "engine/core/error.h"
#include "engine/driver/driver.h"
#include "engine/driver/tune_gpu.h"
#include "engine/runtime/cuda_driver.h"
#include "tests/engine/codegen/cuda/cuda_test_util.h"

namespace tessera {
namespace {

std::vector<autotune::TuneTask> gemm_tasks(int64_t m, int64_t n, int64_t k) {
    driver::BuildOptions bo;
    return autotune::extract_tasks(driver::optimize(autotune::gemm_graph(m, n, k), bo), "cuda", 1);
}

TEST(TuneGpu, CandidatesBuildToPtxAndMatchTheInterpreter) {
    TESSERA_SKIP_WITHOUT_NVRTC();
    std::vector<autotune::TuneTask> tasks = gemm_tasks(48, 64, 40);
    ASSERT_EQ(tasks.size(), 1u);
    const tir::PrimFunc& f = tasks[0].func;
    ASSERT_FALSE(autotune::gpu_sketch_block(f).empty());
    const size_t num_inputs = f->params.size() - size_t(tasks[0].num_outputs);
    std::vector<runtime::NDArray> args = test::random_args(f, num_inputs, 5);
    std::vector<runtime::NDArray> want = test::interpret_copy(f, args);
    std::mt19937_64 rng(3);
    for (int i = 0; i < 3; ++i) {
        autotune::GpuSketch s = autotune::sample_gpu(f, rng);
        driver::GpuCandidate c = driver::build_gpu_candidate(f, s, "compute_90");
        EXPECT_NE(c.ptx.find(".entry " + c.kernels.at(0) + "("), std::string::npos);
        ASSERT_EQ(c.kernels.size(), c.grids.size());
        ASSERT_EQ(c.kernels.size(), c.args.size());
        EXPECT_LE(c.blocks[0][0] * c.blocks[0][1] * c.blocks[0][2], 1024);
        std::vector<runtime::NDArray> got = test::interpret_copy(c.func, args);
        for (size_t p = num_inputs; p < args.size(); ++p)
            EXPECT_TRUE(runtime::allclose(got[p], want[p], 1e-4, 1e-5)) << s.to_json();
    }
}

TEST(TuneGpu, WithoutADeviceTuningSaysSoAndRecordsNothing) {
    if (runtime::cuda::available()) GTEST_SKIP() << "a CUDA device is present (the gpu tests tune)";
    std::vector<autotune::TuneTask> tasks = gemm_tasks(32, 32, 32);
    autotune::Database db;
    try {
        driver::tune_gpu(tasks, db, {});
        FAIL() << "tuned without a device";
    } catch (const UserError& e) {
        EXPECT_NE(std::string(e.what()).find(
                      "no CUDA device is available: GPU tuning measures on the device"),
                  std::string::npos)
            << e.what();
    }
    EXPECT_TRUE(db.records().empty());
}

}  // namespace
}  // namespace tessera
