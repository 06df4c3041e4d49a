// The autotuner's GPU sketch without a GPU: random samples on a GEMM, a
// padded convolution (ONNX node case) and a GEMM with an epilogue each pass
// the CUDA verifier, compile with NVRTC, and compute what the unscheduled
// kernel computes under the loop-IR interpreter.
#include <gtest/gtest.h>

#include "engine/autotune/space_gpu.h"
#include "engine/codegen/cuda/cuda_codegen.h"
#include "engine/te/tensor.h"
#include "tests/engine/codegen/cuda/cuda_test_kernels.h"
#include "tests/engine/codegen/cuda/cuda_test_util.h"

namespace tessera::autotune {
namespace {

using namespace tessera::tir;

void expect_samples_compile_and_match(const PrimFunc& f, size_t num_inputs, int samples) {
    std::mt19937_64 rng(42);
    codegen::CudaOptions o;
    o.arch = "compute_90";
    std::vector<runtime::NDArray> args = test::random_args(f, num_inputs, 3);
    std::vector<runtime::NDArray> want = test::interpret_copy(f, args);
    for (int i = 0; i < samples; ++i) {
        GpuSketch c = sample_gpu(f, rng);
        EXPECT_EQ(GpuSketch::from_json(c.to_json()), c);
        PrimFunc g = generate_gpu(f, c).func();
        // Padding inlined, the epilogue at the thread loop: one kernel.
        std::optional<codegen::CompiledCuda> compiled =
            test::compile_one_kernel_or_fail(g, o, f->name + " sample " + c.to_json());
        if (!compiled) continue;
        const codegen::CompiledCuda& cc = *compiled;
        if (std::getenv("TESSERA_PRINT_SKETCH")) std::cout << c.to_json() << "\n" << cc.source;
        std::vector<runtime::NDArray> got = test::interpret_copy(g, args);
        for (size_t p = num_inputs; p < args.size(); ++p)
            EXPECT_TRUE(runtime::allclose(got[p], want[p], 1e-4, 1e-5))
                << f->name << " sample " << c.to_json();
    }
}

TEST(GpuSketch, GemmSamplesCompileAndMatch) {
    TESSERA_SKIP_WITHOUT_NVRTC();
    expect_samples_compile_and_match(test::gemm_func(64, 48, 40), 2, 6);
}

TEST(GpuSketch, GemmWithEpilogueSamplesCompileAndMatch) {
    TESSERA_SKIP_WITHOUT_NVRTC();
    expect_samples_compile_and_match(test::gemm_func(32, 64, 24, "gemm_relu", /*relu=*/true), 2, 4);
}

TEST(GpuSketch, PaddedConvolutionSamplesCompileAndMatch) {
    TESSERA_SKIP_WITHOUT_NVRTC();
    graph::Graph g = test::load_node_case("test_conv_with_strides_padding");
    PrimFunc f = topi::lower_node(g, 0);
    EXPECT_FALSE(gpu_sketch_block(f).empty());
    expect_samples_compile_and_match(f, g.nodes[0].inputs.size(), 4);
}

TEST(GpuSketch, KernelsWithoutAReductionAreRefused) {
    te::Tensor a = te::placeholder({8}, DataType::float32(), "A");
    te::Tensor b = te::compute(
        {8}, [&](const std::vector<Var>& i) { return a(i[0]) + Expr(1.0f); }, "B");
    PrimFunc f = te::create_prim_func({a, b}, "add");
    EXPECT_TRUE(gpu_sketch_block(f).empty());
    std::mt19937_64 rng(1);
    EXPECT_THROW(sample_gpu(f, rng), UserError);
}

}  // namespace
}  // namespace tessera::autotune
