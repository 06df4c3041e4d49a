// GPU execution of the tiled default schedules (CTest label `gpu`): the
// shared-memory SGEMM against naive C++ loops, implicit-GEMM conv and block
// reductions against the loop-IR interpreter. Skips without a CUDA device.
#include <gtest/gtest.h>

#include <cmath>

#include "engine/te/tensor.h"
#include "engine/tir/op.h"
#include "tests/engine/codegen/cuda/cuda_test_kernels.h"
#include "tests/engine/codegen/cuda/cuda_test_util.h"
#include "tests/engine/codegen/cuda/gpu/device_run.h"

namespace tessera::codegen {
namespace {

using namespace tessera::tir;

TEST(GpuScheduleRules, TiledSgemmMatchesNaiveLoops) {
    TS_REQUIRE_GPU();
    for (auto [M, N, K] : {std::array<int64_t, 3>{512, 384, 200}, {130, 77, 45}, {64, 32, 8}}) {
        PrimFunc f = topi::schedule_gpu_default(test::gemm_func(M, N, K, "matmul"));
        auto args = test::random_args(f, 2, 3);
        auto got = test::run_on_device(f, args);
        const float* a = args[0].data<float>();
        const float* b = args[1].data<float>();
        const float* c = got[2].data<float>();
        for (int64_t i = 0; i < M; ++i)
            for (int64_t j = 0; j < N; ++j) {
                double want = 0;
                for (int64_t k = 0; k < K; ++k) want += double(a[i * K + k]) * b[k * N + j];
                ASSERT_NEAR(c[i * N + j], want, 1e-3 * (1 + std::fabs(want))) << i << ", " << j;
            }
    }
}

TEST(GpuScheduleRules, ConvAndReductionNodeCasesMatchTheInterpreter) {
    TS_REQUIRE_GPU();
    for (const char* name : {"test_softmax_large_number", "test_layer_normalization_2d_axis1",
                             "test_conv_with_strides_padding", "test_gemm_all_attributes"}) {
        graph::Graph g = test::load_node_case(name);
        for (int n = 0; n < int(g.nodes.size()); ++n) {
            PrimFunc plain = topi::lower_node(g, n);
            PrimFunc gpu = topi::schedule_gpu_default(plain);
            size_t ni = g.nodes[size_t(n)].inputs.size();
            auto args = test::random_args(plain, ni, 5);
            auto want = test::interpret_copy(plain, args);
            auto got = test::run_on_device(gpu, args);
            for (size_t i = ni; i < args.size(); ++i)
                EXPECT_TRUE(runtime::allclose(got[i], want[i], 1e-4, 1e-5)) << name;
        }
    }
    // Long rows: one thread block per row.
    te::Tensor a = te::placeholder({7, 3000}, DataType::float32(), "A");
    IterVar k = te::reduce_axis(3000, "k");
    te::Tensor s = te::compute(
        {7}, [&](const std::vector<Var>& i) { return te::sum(a(i[0], k.var), {k}); }, "S");
    PrimFunc plain = te::create_prim_func({a, s}, "rowsum");
    auto args = test::random_args(plain, 1, 9);
    auto want = test::interpret_copy(plain, args);
    auto got = test::run_on_device(topi::schedule_gpu_default(plain), args);
    EXPECT_TRUE(runtime::allclose(got[1], want[1], 1e-4, 1e-4));
}

}  // namespace
}  // namespace tessera::codegen
