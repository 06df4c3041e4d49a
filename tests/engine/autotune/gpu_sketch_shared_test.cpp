// Shared-memory staging in the autotuner's GPU sketch, without a GPU: random
// staged samples of a GEMM and of a padded convolution with a bias + relu
// epilogue pass the CUDA verifier, stage their inputs in __shared__ tiles
// behind __syncthreads, compile with NVRTC for compute_90, and compute what
// the unscheduled kernel computes under the loop-IR interpreter (scheduled
// IR, and the lowered IR with its shared tiles compacted). Oversized tiles
// are refused by the verifier's shared-memory limit.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/autotune/space_gpu.h"
#include "engine/codegen/cuda/cuda_codegen.h"
#include "engine/te/tensor.h"
#include "engine/tir/op.h"
#include "engine/tir/passes/compact_shared.h"
#include "engine/tir/passes/lower_blocks.h"
#include "tests/engine/codegen/cuda/cuda_test_kernels.h"
#include "tests/engine/codegen/cuda/cuda_test_util.h"

namespace tessera::autotune {
namespace {

using namespace tessera::tir;
using ::testing::HasSubstr;

void expect_staged_samples_work(const PrimFunc& f, size_t num_inputs, int samples,
                                bool expect_vectorized = true) {
    std::mt19937_64 rng(7);
    GpuSpaceOptions so;
    so.shared_probability = 1.0;
    codegen::CudaOptions o;
    o.arch = "compute_90";
    std::vector<runtime::NDArray> args = test::random_args(f, num_inputs, 5);
    std::vector<runtime::NDArray> want = test::interpret_copy(f, args);
    int vectorized = 0;
    for (int i = 0; i < samples; ++i) {
        GpuSketch c = sample_gpu(f, rng, so);
        ASSERT_TRUE(c.shared) << c.to_json();
        EXPECT_EQ(GpuSketch::from_json(c.to_json()), c);
        vectorized += c.fetch_vector > 1;
        PrimFunc g = generate_gpu(f, c).func();
        std::optional<codegen::CompiledCuda> compiled =
            test::compile_one_kernel_or_fail(g, o, f->name + " sample " + c.to_json());
        if (!compiled) continue;
        const codegen::CompiledCuda& cc = *compiled;
        const codegen::CudaKernel& k = cc.funcs[0].kernels[0];
        EXPECT_GT(k.shared_bytes, 0);
        EXPECT_LE(k.shared_bytes, so.max_shared_bytes);
        EXPECT_EQ(k.shared_bytes, gpu_shared_bytes(g)) << c.to_json();
        EXPECT_THAT(cc.source, HasSubstr("__shared__")) << c.to_json();
        EXPECT_THAT(cc.source, HasSubstr("__syncthreads()")) << c.to_json();
        if (std::getenv("TESSERA_PRINT_SKETCH")) std::cout << c.to_json() << "\n" << cc.source;
        std::vector<runtime::NDArray> got = test::interpret_copy(g, args);
        // The lowered form with compacted tiles: every thread of a block
        // fetches the same tile (the interpreter runs threads one by one).
        std::vector<runtime::NDArray> got_compact =
            test::interpret_copy(compact_shared_buffers(lower_blocks(g)), args);
        for (size_t p = num_inputs; p < args.size(); ++p) {
            EXPECT_TRUE(runtime::allclose(got[p], want[p], 1e-4, 1e-5))
                << f->name << " sample " << c.to_json();
            EXPECT_TRUE(runtime::allclose(got_compact[p], want[p], 1e-4, 1e-5))
                << f->name << " compacted sample " << c.to_json();
        }
    }
    if (expect_vectorized) EXPECT_GT(vectorized, 0) << "no sample vectorized its fetch";
}

TEST(GpuSketchShared, GemmStagedSamplesCompileAndMatch) {
    TESSERA_SKIP_WITHOUT_NVRTC();
    expect_staged_samples_work(test::gemm_func(32, 48, 24), 2, 12);
}

TEST(GpuSketchShared, PaddedConvBiasReluStagedSamplesCompileAndMatch) {
    TESSERA_SKIP_WITHOUT_NVRTC();
    PrimFunc f = test::conv_bias_relu_func(1, 4, 8, 8, 8);
    EXPECT_EQ(gpu_sketch_block(f), "Conv");
    expect_staged_samples_work(f, 3, 10);
}

TEST(GpuSketchShared, OnnxConvolutionStagedSamplesCompileAndMatch) {
    TESSERA_SKIP_WITHOUT_NVRTC();
    graph::Graph g = test::load_node_case("test_conv_with_strides_padding");
    expect_staged_samples_work(topi::lower_node(g, 0), g.nodes[0].inputs.size(), 4, false);
}

TEST(GpuSketchShared, StagedTilesAreOneReductionStepPerBlock) {
    // 64x64 outputs in 4 blocks of 32x32, 16 threads x 2 vthreads, k steps of 8.
    PrimFunc f = test::gemm_func(64, 64, 64);
    GpuSketch c;
    c.block = gpu_sketch_block(f);
    c.tiles = {{2, 2, 4, 2, 2}, {2, 1, 4, 4, 2}, {8, 2, 4}};
    c.shared = true;
    PrimFunc g = generate_gpu(f, c).func();
    // Per vthread: A 16 rows x 8 k, B 8 k x 32 columns.
    EXPECT_EQ(gpu_shared_bytes(g), (16 * 8 + 8 * 32) * 4);
    codegen::CudaOptions o;
    o.arch = "compute_90";
    codegen::CompiledCuda cc = codegen::lower_cuda({g}, o);
    EXPECT_EQ(cc.funcs[0].kernels[0].shared_bytes, (16 * 8 + 8 * 32) * 4);
    EXPECT_EQ(cc.funcs[0].kernels[0].block[0], 16);
    EXPECT_EQ(cc.funcs[0].kernels[0].grid[0], 4);
    // 48 threads fetch the 6 x 12 tile of B (72 elements) in two predicated
    // rounds: the compacted tile covers the 96 elements the rounds address
    // (8 rows of 12), still far from B's 24 x 48.
    PrimFunc f2 = test::gemm_func(32, 48, 24);
    c.tiles = {{2, 1, 4, 2, 2}, {2, 2, 12, 1, 1}, {4, 2, 3}};
    EXPECT_EQ(gpu_shared_bytes(generate_gpu(f2, c).func()), (16 * 6 + 8 * 12) * 4);
}

TEST(GpuSketchShared, VerifierRefusesOversizedTiles) {
    // One block of the whole 128x128 output, k not split: A and B tiles of
    // 128x128 floats each (128 KiB) exceed the 48 KiB default.
    PrimFunc f = test::gemm_func(128, 128, 128);
    GpuSketch c;
    c.block = gpu_sketch_block(f);
    c.tiles = {{1, 1, 16, 2, 4}, {1, 1, 16, 2, 4}, {1, 128, 1}};
    c.shared = true;
    PrimFunc g = generate_gpu(f, c).func();
    EXPECT_EQ(gpu_shared_bytes(g), 2 * 128 * 128 * 4);
    codegen::CudaOptions o;
    o.arch = "compute_90";
    try {
        codegen::lower_cuda({g}, o);
        FAIL() << "expected the shared-memory limit to refuse the kernel";
    } catch (const UserError& e) {
        EXPECT_THAT(e.what(), HasSubstr("131072 bytes of shared memory per block exceed the "
                                        "limit of 49152 bytes (48 KiB)"));
    }
    // The sampler keeps staged samples within the limit.
    std::mt19937_64 rng(3);
    GpuSpaceOptions so;
    so.shared_probability = 1.0;
    so.max_shared_bytes = 4096;
    for (int i = 0; i < 5; ++i) {
        GpuSketch s = sample_gpu(f, rng, so);
        if (s.shared) EXPECT_LE(gpu_shared_bytes(generate_gpu(f, s).func()), 4096);
    }
}

std::string lower_error(const PrimFunc& f) {
    try {
        codegen::lower_cuda({f});
    } catch (const UserError& e) {
        return e.what();
    }
    return "";
}

TEST(GpuSketchShared, VerifierChecksNestedThreadBindings) {
    // A cooperative fetch nested in the compute's thread loop: same extent,
    // no use of the outer loop -> one thread index; anything else is refused.
    Buffer a("A", DataType::float32(), {Expr(int64_t(64))});
    Buffer sh("S", DataType::float32(), {Expr(int64_t(64))}, "shared");
    Var tx("tx"), fx("fx"), fy("fy");
    auto nested = [&](int64_t inner_extent, const Var& index) {
        Stmt fetch = For::make(fx, Expr(int64_t(0)), Expr(inner_extent), ForKind::ThreadBinding,
                               BufferStore::make(sh, BufferLoad::make(a, {index}), {fx}),
                               "threadIdx.x");
        Stmt use = BufferStore::make(a, BufferLoad::make(sh, {Expr(int64_t(63)) - tx}), {tx});
        Stmt body = For::make(tx, Expr(int64_t(0)), Expr(int64_t(64)), ForKind::ThreadBinding,
                              SeqStmt::make({fetch, use}), "threadIdx.x");
        return PrimFunc("nested", {a}, Allocate::make(sh, body));
    };
    EXPECT_EQ(lower_error(nested(64, fx)), "");
    codegen::CompiledCuda cc = codegen::lower_cuda({nested(64, fx)});
    EXPECT_EQ(cc.funcs[0].kernels[0].block[0], 64);
    EXPECT_THAT(cc.source, HasSubstr("__syncthreads()"));
    EXPECT_THAT(lower_error(nested(32, fx)),
                HasSubstr("only a threadIdx loop with the same extent and start"));
    EXPECT_THAT(lower_error(nested(64, tx)), HasSubstr("uses the outer loop's variable"));
}

TEST(GpuSketchShared, JsonFieldsAreOptionalAndValidated) {
    GpuSketch old = GpuSketch::from_json(
        R"({"block":"C","tiles":[[1,1,4,1,1],[2,2,2]],"unroll":true})");
    EXPECT_FALSE(old.shared);
    EXPECT_EQ(old.fetch_vector, 1);
    GpuSketch s = old;
    s.shared = true;
    s.fetch_vector = 4;
    EXPECT_EQ(GpuSketch::from_json(s.to_json()), s);
    EXPECT_THROW(GpuSketch::from_json(
                     R"({"block":"C","tiles":[[4]],"shared":true,"fetch_vector":3})"),
                 UserError);
    EXPECT_THROW(GpuSketch::from_json(R"({"block":"C","tiles":[[4]],"fetch_vector":2})"),
                 UserError);
    EXPECT_THROW(GpuSketch::from_json(R"({"block":"C","tiles":[[4,0]]})"), UserError);
    EXPECT_THROW(GpuSketch::from_json(R"({"block":"C","tiles":[[4]],"shared":"yes"})"),
                 UserError);
}

}  // namespace
}  // namespace tessera::autotune
