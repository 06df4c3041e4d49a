// GPU execution of the autotuner's GPU sketch with shared-memory staging
// (CTest label `gpu`): random staged samples of a GEMM and of a padded
// convolution with a bias + relu epilogue run on the device and match the
// loop-IR interpreter on the unscheduled kernel. Skips without a CUDA device.
#include <gtest/gtest.h>

#include "engine/autotune/space_gpu.h"
#include "tests/engine/codegen/cuda/cuda_test_kernels.h"
#include "tests/engine/codegen/cuda/cuda_test_util.h"
#include "tests/engine/codegen/cuda/gpu/device_run.h"

namespace tessera::autotune {
namespace {

using namespace tessera::tir;

void expect_device_matches(const PrimFunc& f, size_t num_inputs, int samples) {
    std::mt19937_64 rng(11);
    GpuSpaceOptions so;
    so.shared_probability = 1.0;
    std::vector<runtime::NDArray> args = test::random_args(f, num_inputs, 9);
    std::vector<runtime::NDArray> want = test::interpret_copy(f, args);
    for (int i = 0; i < samples; ++i) {
        GpuSketch c = sample_gpu(f, rng, so);
        EXPECT_TRUE(c.shared);
        std::vector<runtime::NDArray> got = test::run_on_device(generate_gpu(f, c).func(), args);
        for (size_t p = num_inputs; p < args.size(); ++p)
            EXPECT_TRUE(runtime::allclose(got[p], want[p], 1e-4, 1e-4))
                << f->name << " sample " << c.to_json();
    }
}

TEST(GpuSketchSharedDevice, StagedGemmSamplesMatchTheInterpreter) {
    TS_REQUIRE_GPU();
    expect_device_matches(test::gemm_func(96, 80, 72, "gemm_staged"), 2, 12);
}

TEST(GpuSketchSharedDevice, StagedConvBiasReluSamplesMatchTheInterpreter) {
    TS_REQUIRE_GPU();
    expect_device_matches(test::conv_bias_relu_func(1, 8, 12, 12, 16, "conv_bias_relu_staged"), 3,
                          10);
}

}  // namespace
}  // namespace tessera::autotune
