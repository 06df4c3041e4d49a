// GPU execution (CTest label `gpu`): kernels compiled by NVRTC run through
// the driver API and must match the CPU reference (the loop-IR interpreter
// and ONNX's expected outputs). Every test skips, with the reason, where no
// CUDA driver or device is present.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/driver/cuda_model.h"
#include "engine/driver/target.h"
#include "engine/tir/op.h"
#include "tests/engine/codegen/cuda/cuda_test_util.h"
#include "tests/engine/codegen/cuda/gpu/device_run.h"

namespace tessera::codegen {
namespace {

using driver::build_cuda;
using driver::CudaModel;

using namespace tessera::tir;

class GpuNodeCase : public testing::TestWithParam<const char*> {};

// Whole ONNX node models on the GPU against ONNX's expected outputs and
// against the interpreter.
TEST_P(GpuNodeCase, MatchesOnnxExpectedOutputs) {
    TS_REQUIRE_GPU();
    std::string dir = test::node_case_dir(GetParam());
    graph::Graph g = test::load_node_case(GetParam());
    auto given = driver::read_test_data(dir + "/test_data_set_0", "input");
    auto inputs = driver::match_test_inputs(g, given);
    auto expected = driver::read_test_data(dir + "/test_data_set_0", "output");
    std::shared_ptr<CudaModel> model = build_cuda(g);
    auto ex = model->make_executor();
    for (size_t i = 0; i < inputs.size(); ++i) ex->set_input(i, inputs[i]);
    ex->run();
    auto reference = driver::interpret_graph(g, inputs);
    ASSERT_EQ(expected.size(), ex->num_outputs());
    for (size_t i = 0; i < ex->num_outputs(); ++i) {
        runtime::NDArray out = ex->get_output(i);
        EXPECT_TRUE(runtime::allclose(out, expected[i], 1e-3, 1e-5)) << "output " << i;
        EXPECT_TRUE(runtime::allclose(out, reference[i], 1e-3, 1e-5)) << "output " << i;
    }
    std::vector<double> ms = ex->time_runs(3);
    ASSERT_EQ(ms.size(), 3u);
    for (double t : ms) EXPECT_GT(t, 0.0);
}

INSTANTIATE_TEST_SUITE_P(
    SkeletonOps, GpuNodeCase,
    testing::Values("test_conv_with_strides_padding", "test_matmul_2d", "test_gemm_all_attributes",
                    "test_add_bcast", "test_relu", "test_maxpool_2d_pads", "test_globalaveragepool",
                    "test_softmax_axis_1", "test_softmax_large_number", "test_flatten_axis1",
                    "test_reshape_negative_dim"),
    [](const testing::TestParamInfo<const char*>& info) { return std::string(info.param); });

TEST(GpuKernels, SharedMemoryExchangeWithBarrierMatchesTheInterpreter) {
    TS_REQUIRE_GPU();
    const int64_t threads = 256, blocks = 8;
    Buffer a("A", DataType::float32(), {Expr(threads * blocks)});
    Buffer b("B", DataType::float32(), {Expr(threads * blocks)});
    Buffer s("S", DataType::float32(), {Expr(threads)}, "shared");
    Var bx("bx"), tx("tx"), tx2("tx2");
    auto bind = [](const Var& v, int64_t n, const char* tag, Stmt body) {
        return For::make(v, Expr(0), Expr(n), ForKind::ThreadBinding, body, tag);
    };
    Stmt write = bind(tx, threads, "threadIdx.x",
                      BufferStore::make(s, BufferLoad::make(a, {bx * Expr(threads) + tx}), {tx}));
    Stmt read = bind(tx2, threads, "threadIdx.x",
                     BufferStore::make(b, BufferLoad::make(s, {Expr(threads - 1) - tx2}) * Expr(3.0f),
                                       {bx * Expr(threads) + tx2}));
    PrimFunc f("reverse", {a, b},
               bind(bx, blocks, "blockIdx.x", Allocate::make(s, SeqStmt::make({write, read}))));
    auto args = test::random_args(f, 1, 21);
    auto want = test::interpret_copy(f, args);
    auto got = test::run_on_device(f, args);
    EXPECT_TRUE(runtime::allclose(got[1], want[1], 0, 0));
}

TEST(GpuKernels, Float4VectorLoopMatchesTheInterpreter) {
    TS_REQUIRE_GPU();
    Buffer a("A", DataType::float32(), {Expr(4096)});
    Buffer b("B", DataType::float32(), {Expr(4096)});
    Var bx("bx"), tx("tx"), v("v");
    Expr idx = bx * Expr(1024) + tx * Expr(4) + v;
    Stmt body = For::make(v, Expr(0), Expr(4), ForKind::Vectorized,
                          BufferStore::make(b, tir::exp(BufferLoad::make(a, {idx})) - Expr(1.0f), {idx}));
    body = For::make(tx, Expr(0), Expr(256), ForKind::ThreadBinding, body, "threadIdx.x");
    body = For::make(bx, Expr(0), Expr(4), ForKind::ThreadBinding, body, "blockIdx.x");
    PrimFunc f("expm1", {a, b}, body);
    auto args = test::random_args(f, 1, 4);
    auto want = test::interpret_copy(f, args);
    auto got = test::run_on_device(f, args);
    EXPECT_TRUE(runtime::allclose(got[1], want[1], 1e-5, 1e-6));
}

// Random schedules of the default kind (different block sizes) on a matmul.
TEST(GpuKernels, DefaultScheduleWithRandomBlockSizesMatchesTheInterpreter) {
    TS_REQUIRE_GPU();
    graph::Graph g = test::load_node_case("test_matmul_2d");
    PrimFunc plain = topi::lower_node(g, 0);
    auto args = test::random_args(plain, 2, 8);
    auto want = test::interpret_copy(plain, args);
    for (int64_t threads : {1, 7, 32, 100, 1024}) {
        topi::GpuScheduleOptions o;
        o.threads_per_block = threads;
        auto got = test::run_on_device(topi::schedule_gpu_default(plain, o), args);
        EXPECT_TRUE(runtime::allclose(got[2], want[2], 1e-4, 1e-5)) << threads << " threads";
    }
}

}  // namespace
}  // namespace tessera::codegen
