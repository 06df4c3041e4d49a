// GPU execution of the tiled default schedules (CTest label `gpu`): the
// shared-memory SGEMM against naive C++ loops, implicit-GEMM conv and block
// reductions against the loop-IR interpreter. Skips without a CUDA device.
#include <gtest/gtest.h>

#include <cmath>

#include "engine/codegen/cuda/cuda_codegen.h"
#include "engine/runtime/cuda_driver.h"
#include "engine/te/tensor.h"
#include "engine/tir/op.h"
#include "tests/engine/cuda/cuda_test_util.h"

namespace tessera::codegen {
namespace {

using namespace tessera::tir;

#define TS_REQUIRE_GPU() \
    if (!runtime::cuda::available()) GTEST_SKIP() << runtime::cuda::unavailable_reason()

std::vector<runtime::NDArray> launch_all(const PrimFunc& f,
                                         const std::vector<runtime::NDArray>& args) {
    CompiledCuda c = compile_cuda({f});
    runtime::cuda::Module m(c.ptx);
    std::vector<runtime::cuda::DeviceBuffer> bufs;
    for (const auto& a : args) {
        bufs.emplace_back(a.num_bytes());
        bufs.back().copy_from_host(a.raw(), a.num_bytes());
    }
    for (const Buffer& w : c.funcs[0].workspaces)
        bufs.emplace_back(size_t(w.num_elements() * w->dtype.bytes()));
    for (const CudaKernel& k : c.funcs[0].kernels) {
        std::vector<uint64_t> ptrs;
        for (int a : k.args) ptrs.push_back(bufs[size_t(a)].ptr());
        m.launch(k.name, k.grid, k.block, 0, ptrs);
    }
    runtime::cuda::synchronize();
    std::vector<runtime::NDArray> out;
    for (size_t i = 0; i < args.size(); ++i) {
        out.push_back(args[i].copy());
        bufs[i].copy_to_host(out.back().raw(), out.back().num_bytes());
    }
    return out;
}

PrimFunc matmul(int64_t M, int64_t N, int64_t K) {
    te::Tensor a = te::placeholder({M, K}, DataType::float32(), "A");
    te::Tensor b = te::placeholder({K, N}, DataType::float32(), "B");
    IterVar k = te::reduce_axis(K, "k");
    te::Tensor c = te::compute(
        {M, N},
        [&](const std::vector<Var>& i) { return te::sum(a(i[0], k.var) * b(k.var, i[1]), {k}); },
        "C");
    return te::create_prim_func({a, b, c}, "matmul");
}

TEST(GpuScheduleRules, TiledSgemmMatchesNaiveLoops) {
    TS_REQUIRE_GPU();
    for (auto [M, N, K] : {std::array<int64_t, 3>{512, 384, 200}, {130, 77, 45}, {64, 32, 8}}) {
        PrimFunc f = topi::schedule_gpu_default(matmul(M, N, K));
        auto args = test::random_args(f, 2, 3);
        auto got = launch_all(f, args);
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
            auto got = launch_all(gpu, args);
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
    auto got = launch_all(topi::schedule_gpu_default(plain), args);
    EXPECT_TRUE(runtime::allclose(got[1], want[1], 1e-4, 1e-4));
}

}  // namespace
}  // namespace tessera::codegen
