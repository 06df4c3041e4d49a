// GPU trials in a worker process (CTest label `gpu`): a candidate that
// faults on the device ends its worker (tessera-gpu-worker) and comes back
// as a failed measurement; a fresh worker measures the next candidate
// correctly. In this process, a fault is a DeviceFault and later work is
// refused with that reason. Skips without a CUDA device.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/codegen/cuda/cuda_codegen.h"
#include "engine/driver/gpu_measure_worker.h"
#include "engine/runtime/cuda_driver.h"
#include "engine/topi/gpu/schedule_gpu.h"
#include "tests/engine/codegen/cuda/cuda_test_kernels.h"
#include "tests/engine/codegen/cuda/cuda_test_util.h"
#include "tests/engine/codegen/cuda/gpu/device_run.h"

namespace tessera::driver {
namespace {

using testing::HasSubstr;

// Writes 1 TiB below its argument: an unmapped address.
constexpr const char* kWildStore = R"(
extern "C" __global__ void wild_store(float* p) { *(volatile float*)(p - (1ll << 38)) = 1.0f; }
)";

GpuLaunchPlan wild_plan() {
    return GpuLaunchPlan{codegen::nvrtc_compile(kWildStore, codegen::default_cuda_arch(), false),
                         {"wild_store"},
                         {{1, 1, 1}},
                         {{1, 1, 1}},
                         {0},
                         {{2}},
                         {}};
}

struct GemmTask {
    GpuLaunchPlan plan;
    GpuTaskArrays arrays;
};

GemmTask gemm_task() {
    tir::PrimFunc f = test::gemm_func(70, 90, 33, "worker_gemm");
    codegen::CompiledCuda cc = codegen::compile_cuda({topi::schedule_gpu_default(f)});
    GemmTask t;
    t.plan.ptx = cc.ptx;
    for (const codegen::CudaKernel& k : cc.funcs[0].kernels) {
        t.plan.kernels.push_back(k.name);
        t.plan.grids.push_back(k.grid);
        t.plan.blocks.push_back(k.block);
        t.plan.shared_bytes.push_back(k.shared_bytes);
        t.plan.args.push_back(k.args);
    }
    t.arrays.host = test::random_args(f, 2, 7);
    t.arrays.expected = test::interpret_copy(f, t.arrays.host);
    t.arrays.first_output = 2;
    return t;
}

TEST(GpuMeasureWorkerDevice, AFaultingCandidateEndsItsWorkerAndTheNextWorkerMeasures) {
    TS_REQUIRE_GPU();
    TESSERA_SKIP_WITHOUT_NVRTC();
    GemmTask t = gemm_task();
    std::unique_ptr<GpuMeasureWorker> w = GpuMeasureWorker::start();
    ASSERT_TRUE(w);
    GpuMeasureWorker::Result good = w->measure(0, t.arrays, t.plan, "gemm", 3, 1e9);
    EXPECT_EQ(good.error, "");
    EXPECT_EQ(good.times.size(), 3u);
    GpuMeasureWorker::Result bad = w->measure(0, t.arrays, wild_plan(), "wild", 3, 1e9);
    EXPECT_TRUE(bad.worker_died);
    EXPECT_THAT(bad.error, HasSubstr("the kernel faulted on the GPU"));
    EXPECT_TRUE(bad.times.empty());
    EXPECT_FALSE(w->alive());
    std::unique_ptr<GpuMeasureWorker> next = GpuMeasureWorker::start();
    ASSERT_TRUE(next);
    GpuMeasureWorker::Result again = next->measure(0, t.arrays, t.plan, "gemm", 3, 1e9);
    EXPECT_EQ(again.error, "");  // outputs checked against the interpreter in the worker
    EXPECT_EQ(again.times.size(), 3u);
    // A first timed run above the cut-off is the only one.
    EXPECT_EQ(next->measure(0, t.arrays, t.plan, "gemm", 3, 0.0).times.size(), 1u);
}

TEST(GpuMeasureWorkerDevice, AFaultInThisProcessIsADeviceFaultAndLaterWorkIsRefused) {
    TS_REQUIRE_GPU();
    TESSERA_SKIP_WITHOUT_NVRTC();
    GemmTask t = gemm_task();
    GpuTaskBuffers buffers(t.arrays);
    EXPECT_EQ(measure_launch_plan(t.plan, "gemm", t.arrays, buffers, 2, 1e9).size(), 2u);
    EXPECT_THROW(measure_launch_plan(wild_plan(), "wild", t.arrays, buffers, 2, 1e9),
                 runtime::cuda::DeviceFault);
    EXPECT_TRUE(runtime::cuda::faulted());
    try {
        runtime::cuda::DeviceBuffer more(16);
        FAIL() << "the dead context gave memory";
    } catch (const runtime::cuda::DeviceFault& e) {
        EXPECT_THAT(std::string(e.what()), HasSubstr("unusable after a kernel fault"));
    }
}

}  // namespace
}  // namespace tessera::driver
