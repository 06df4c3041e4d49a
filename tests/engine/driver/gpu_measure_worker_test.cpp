// The GPU measure worker without a GPU (runs everywhere): the program
// tessera-gpu-worker is found and started, the protocol carries a task and a
// candidate to it and its error back,
// and a worker that dies is reported with how it ended, not as a crash of
// the tuner.
#include "engine/driver/gpu_measure_worker.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include "engine/runtime/cuda_driver.h"

namespace tessera::driver {
namespace {

using testing::HasSubstr;

GpuTaskArrays small_task() {
    GpuTaskArrays a;
    a.host.push_back(runtime::random_ndarray({graph::DType::Float32, {4, 3}}, 1));
    a.host.push_back(runtime::NDArray::empty({graph::DType::Float32, {4}}));
    a.first_output = 1;
    return a;
}

GpuLaunchPlan some_plan() {
    return GpuLaunchPlan{"// not loaded", {"k"}, {{1, 1, 1}}, {{32, 1, 1}}, {0}, {{0, 1, 2}}, {64}};
}

TEST(GpuMeasureWorker, WithoutADeviceTheWorkerAnswersWithTheReason) {
    if (runtime::cuda::available()) GTEST_SKIP() << "a GPU is present: the gpu tests measure";
    std::unique_ptr<GpuMeasureWorker> w = GpuMeasureWorker::start();
    ASSERT_TRUE(w);
    for (int i = 0; i < 2; ++i) {  // the task's arrays go once; the worker stays
        GpuMeasureWorker::Result r = w->measure(0, small_task(), some_plan(), "k", 3, 1e9);
        EXPECT_FALSE(r.worker_died);
        EXPECT_THAT(r.error, HasSubstr("no CUDA device is available"));
        EXPECT_TRUE(w->alive());
    }
}

TEST(GpuMeasureWorker, TheWorkerIsTheProgramBesideTheBuildsPrograms) {
    // Test programs live in build/tests, the worker in build/bin.
    EXPECT_THAT(gpu_worker_program(), testing::EndsWith("/bin/tessera-gpu-worker"));
}

TEST(GpuMeasureWorker, AWorkerKilledByASignalIsAFailedMeasurement) {
    std::unique_ptr<GpuMeasureWorker> w = GpuMeasureWorker::start();
    ASSERT_TRUE(w);
    kill(w->pid(), SIGKILL);
    GpuMeasureWorker::Result r = w->measure(0, small_task(), some_plan(), "k", 3, 1e9);
    EXPECT_TRUE(r.worker_died);
    EXPECT_THAT(r.error, HasSubstr("ended by signal 9"));
    EXPECT_FALSE(w->alive());
}

}  // namespace
}  // namespace tessera::driver
