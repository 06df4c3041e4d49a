// The tiled default GPU schedules (shared-memory SGEMM, implicit-GEMM conv,
// block-wide reductions): their loop IR computes what the unscheduled
// function computes (interpreter, random data, shapes with tails), their
// CUDA C compiles with NVRTC for compute_90 and passes the limits verifier.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>

#include "engine/codegen/cuda/cuda_codegen.h"
#include "engine/core/error.h"
#include "engine/te/tensor.h"
#include "engine/tir/functor.h"
#include "engine/tir/op.h"
#include "tests/engine/codegen/cuda/cuda_test_util.h"

namespace tessera::codegen {
namespace {

using namespace tessera::tir;
using testing::HasSubstr;

CudaOptions compute90() {
    CudaOptions o;
    o.arch = "compute_90";
    return o;
}

PrimFunc matmul(int64_t M, int64_t N, int64_t K, bool trans_b = false, int64_t batch = 0) {
    std::vector<int64_t> as = {M, K},
                         bs = trans_b ? std::vector<int64_t>{N, K} : std::vector<int64_t>{K, N};
    std::vector<int64_t> cs = {M, N};
    if (batch)
        as.insert(as.begin(), batch), bs.insert(bs.begin(), batch), cs.insert(cs.begin(), batch);
    te::Tensor a = te::placeholder(as, DataType::float32(), "A");
    te::Tensor b = te::placeholder(bs, DataType::float32(), "B");
    IterVar k = te::reduce_axis(K, "k");
    te::Tensor c = te::compute(
        cs,
        [&](const std::vector<Var>& i) {
            size_t o = batch ? 1 : 0;
            std::vector<Expr> ia, ib;
            if (batch) ia.push_back(i[0]), ib.push_back(i[0]);
            ia.push_back(i[o]), ia.push_back(k.var);
            if (trans_b)
                ib.push_back(i[o + 1]), ib.push_back(k.var);
            else
                ib.push_back(k.var), ib.push_back(i[o + 1]);
            return te::sum(a(ia) * b(ib), {k});
        },
        "C");
    return te::create_prim_func({a, b, c}, "matmul");
}

// NCHW conv, stride 1, no padding: out[n, co, y, x] = sum X[n, ci, y+r, x+s] W[co, ci, r, s].
PrimFunc conv(int64_t N, int64_t CI, int64_t H, int64_t CO, int64_t R) {
    int64_t OH = H - R + 1;
    te::Tensor x = te::placeholder({N, CI, H, H}, DataType::float32(), "X");
    te::Tensor w = te::placeholder({CO, CI, R, R}, DataType::float32(), "W");
    IterVar rc = te::reduce_axis(CI, "rc"), rr = te::reduce_axis(R, "rr"),
            rs = te::reduce_axis(R, "rs");
    te::Tensor y = te::compute(
        {N, CO, OH, OH},
        [&](const std::vector<Var>& i) {
            return te::sum(
                x(i[0], rc.var, i[2] + rr.var, i[3] + rs.var) * w(i[1], rc.var, rr.var, rs.var),
                {rc, rr, rs});
        },
        "Y");
    return te::create_prim_func({x, w, y}, "conv");
}

PrimFunc row_reduce(int64_t rows, int64_t cols, const std::string& kind) {
    te::Tensor a = te::placeholder({rows, cols}, DataType::float32(), "A");
    IterVar k = te::reduce_axis(cols, "k");
    te::Tensor r = te::compute(
        {rows},
        [&](const std::vector<Var>& i) {
            Expr v = a(i[0], k.var);
            return kind == "max"   ? te::max(v, {k})
                   : kind == "min" ? te::min(v, {k})
                                   : te::sum(v * v, {k});
        },
        "R");
    return te::create_prim_func({a, r}, "reduce_" + kind);
}

bool has_tag(const PrimFunc& f, const std::string& tag) {
    bool found = false;
    post_order_visit(f->body, [&](const Object* n) {
        if (n->node_type == NodeType::For && static_cast<const For*>(n)->thread_tag == tag)
            found = true;
    });
    return found;
}

// Scheduled vs unscheduled under the interpreter; returns the scheduled function.
PrimFunc check_same(const PrimFunc& plain, size_t num_inputs, double rtol = 1e-4,
                    const topi::GpuScheduleOptions& options = {}) {
    PrimFunc gpu = topi::schedule_gpu_default(plain, options);
    auto args = test::random_args(plain, num_inputs, 23);
    auto want = test::interpret_copy(plain, args);
    auto got = test::interpret_copy(gpu, args);
    for (size_t i = num_inputs; i < args.size(); ++i)
        EXPECT_TRUE(runtime::allclose(got[i], want[i], rtol, 1e-5))
            << plain->name << " output " << i;
    return gpu;
}

const CudaKernel& only_kernel(const CompiledCuda& c) {
    EXPECT_EQ(c.funcs.size(), 1u);
    EXPECT_EQ(c.funcs[0].kernels.size(), 1u);
    return c.funcs[0].kernels[0];
}

// The largest tiles (a grid of any size allowed: gemm_min_blocks 1).
topi::GpuScheduleOptions largest_tiles() {
    topi::GpuScheduleOptions o;
    o.gemm_min_blocks = 1;
    return o;
}

TEST(GpuScheduleRules, GemmTiles128x128InSharedMemoryWith8x8RegisterTiles) {
    TESSERA_SKIP_WITHOUT_NVRTC();
    PrimFunc gpu = check_same(matmul(128, 256, 24), 2, 1e-4, largest_tiles());
    CompiledCuda c = compile_cuda({gpu}, compute90());
    const CudaKernel& k = only_kernel(c);
    EXPECT_EQ(k.grid, (std::array<int64_t, 3>{2, 1, 1}));
    EXPECT_EQ(k.block, (std::array<int64_t, 3>{256, 1, 1}));
    EXPECT_EQ(k.shared_bytes, (8 * 132 + 8 * 128) * 4);  // A's tile rows padded by 4
    // Per thread: accumulators, two fragments and the next k tile's prefetch.
    EXPECT_EQ(k.local_bytes, (64 + 8 + 8 + 4 + 4) * 4);
    // Fragments read from shared memory as float4s (4 rows / columns per run).
    EXPECT_THAT(c.source, HasSubstr("const float4 v0 = *(const float4*)(C_a_shared + "));
    EXPECT_THAT(c.source, HasSubstr("__shared__ __align__(16) float C_a_shared[1056];"));
    EXPECT_THAT(c.source, HasSubstr("float C_acc_local[64];"));
    EXPECT_THAT(c.source, HasSubstr("__syncthreads();"));
    EXPECT_THAT(c.ptx, HasSubstr("bar.sync"));
    if (getenv("TESSERA_PRINT_CUDA")) std::cout << c.source;
}

TEST(GpuScheduleRules, GemmWithTailsInEveryDimensionMatches) {
    TESSERA_SKIP_WITHOUT_NVRTC();
    for (const topi::GpuScheduleOptions& o : {topi::GpuScheduleOptions{}, largest_tiles()})
        for (auto [m, n, k] : {std::array<int64_t, 3>{37, 45, 13}, {130, 70, 9}, {64, 200, 31}}) {
            PrimFunc gpu = check_same(matmul(m, n, k), 2, 1e-4, o);
            EXPECT_TRUE(has_tag(gpu, "blockIdx.y"));
            compile_cuda({gpu}, compute90());
        }
}

// Small grids take smaller tiles: the larger side halves while fewer than
// gemm_min_blocks (128) blocks, down to 32 x 32.
TEST(GpuScheduleRules, SmallGemmGridsTakeSmallerTilesToFillTheGpu) {
    TESSERA_SKIP_WITHOUT_NVRTC();
    // 64 x 128 tiles would make 4 blocks; 32 x 32 tiles make 32.
    PrimFunc small = check_same(matmul(100, 256, 16), 2);
    CompiledCuda c = compile_cuda({small}, compute90());
    EXPECT_EQ(only_kernel(c).grid, (std::array<int64_t, 3>{8, 4, 1}));
    EXPECT_THAT(c.source, HasSubstr("float C_acc_local[4];"));  // 2 x 2 per thread
    // ResNet-18's last stage at batch 16 (M 784, N 512, K 4608): 128 x 128
    // tiles make 28 blocks, 64 x 64 make 104, 32 x 64 make 200.
    CompiledCuda last = lower_cuda({topi::schedule_gpu_default(matmul(784, 512, 4608))}, compute90());
    EXPECT_EQ(last.funcs[0].kernels[0].grid, (std::array<int64_t, 3>{8, 25, 1}));
}

TEST(GpuScheduleRules, TransposedAndBatchedGemmMatch) {
    TESSERA_SKIP_WITHOUT_NVRTC();
    PrimFunc t = check_same(matmul(40, 72, 17, true), 2);
    PrimFunc b = check_same(matmul(33, 48, 20, false, 3), 2);
    EXPECT_TRUE(has_tag(b, "blockIdx.z"));
    CompiledCuda c = compile_cuda({t, test::renamed(b, "bmm")}, compute90());
    EXPECT_EQ(c.funcs[1].kernels[0].grid, (std::array<int64_t, 3>{2, 2, 3}));  // 32x32 tiles
}

TEST(GpuScheduleRules, ConvolutionRunsAsImplicitGemm) {
    TESSERA_SKIP_WITHOUT_NVRTC();
    // M = N * OH * OW = 2 * 8 * 8, N = CO = 40, K = CI * 3 * 3 = 45.
    PrimFunc gpu = check_same(conv(2, 5, 10, 40, 3), 2, 1e-4, largest_tiles());
    CompiledCuda c = compile_cuda({gpu}, compute90());
    const CudaKernel& k = only_kernel(c);
    EXPECT_EQ(k.grid, (std::array<int64_t, 3>{2, 1, 1}));  // 128 x 32 tiles
    EXPECT_GT(k.shared_bytes, 0);
}

// A one-node graph of `op` (float32 inputs and output).
graph::Graph one_node(const std::string& op, const std::vector<std::vector<int64_t>>& ins,
                      const std::vector<int64_t>& out,
                      std::map<std::string, graph::AttrValue> attrs) {
    graph::Graph g;
    g.name = "test";
    graph::Node n;
    n.op = op;
    n.name = "n0";
    n.attrs = std::move(attrs);
    for (size_t i = 0; i < ins.size(); ++i) {
        graph::Value v;
        v.name = "in" + std::to_string(i);
        v.type = {graph::DType::Float32, ins[i]};
        int id = g.add_value(v);
        g.inputs.push_back(id);
        n.inputs.push_back(id);
    }
    graph::Value o;
    o.name = "out";
    o.type = {graph::DType::Float32, out};
    int id = g.add_value(o);
    n.outputs.push_back(id);
    g.add_node(n);
    g.outputs.push_back(id);
    return g;
}

// topi's nn.conv2d (padding, stride, bias; grouped): the reduction stage is
// the implicit GEMM, the whole function still matches.
TEST(GpuScheduleRules, TopiConv2dStagesMatch) {
    TESSERA_SKIP_WITHOUT_NVRTC();
    struct Case {
        std::vector<int64_t> x, w, out, strides, pad;
        int64_t groups;
    };
    for (const Case& c :
         {Case{{2, 6, 9, 9}, {32, 6, 3, 3}, {2, 32, 5, 5}, {2, 2}, {1, 1, 1, 1}, 1},
          Case{{1, 4, 8, 8}, {40, 2, 3, 3}, {1, 40, 8, 8}, {1, 1}, {1, 1, 1, 1}, 2}}) {
        graph::Graph g = one_node("nn.conv2d", {c.x, c.w, {c.w[0]}}, c.out,
                                  {{"strides", c.strides},
                                   {"padding", c.pad},
                                   {"dilation", std::vector<int64_t>{1, 1}},
                                   {"groups", c.groups}});
        PrimFunc gpu = check_same(topi::lower_node(g, 0), 3);
        CompiledCuda cc = compile_cuda({gpu}, compute90());
        int64_t shared = 0;
        for (const CudaKernel& k : cc.funcs[0].kernels) shared = std::max(shared, k.shared_bytes);
        if (c.groups == 1) {
            EXPECT_GT(shared, 0) << "the conv stage is not tiled";
        }
    }
}

TEST(GpuScheduleRules, SmallGemmKeepsTheOneThreadPerOutputRule) {
    TESSERA_SKIP_WITHOUT_NVRTC();
    PrimFunc gpu = check_same(matmul(4, 8, 16), 2);
    CompiledCuda c = compile_cuda({gpu}, compute90());
    EXPECT_EQ(only_kernel(c).shared_bytes, 0);
}

TEST(GpuScheduleRules, RowReductionsUseOneThreadBlockPerRow) {
    TESSERA_SKIP_WITHOUT_NVRTC();
    for (const char* kind : {"sum", "max", "min"}) {
        for (int64_t cols : {64, 100, 1000}) {
            PrimFunc gpu = check_same(row_reduce(5, cols, kind), 1);
            CompiledCuda c = compile_cuda({gpu}, compute90());
            const CudaKernel& k = only_kernel(c);
            EXPECT_EQ(k.grid[0], 5) << kind << " " << cols;
            EXPECT_EQ(k.block[0], cols >= 256 ? 256 : cols > 64 ? 128 : 64) << kind << " " << cols;
            EXPECT_EQ(k.shared_bytes, k.block[0] * 4);
        }
    }
}

TEST(GpuScheduleRules, ShortReductionsStaySerialPerThread) {
    TESSERA_SKIP_WITHOUT_NVRTC();
    PrimFunc gpu = check_same(row_reduce(300, 16, "sum"), 1);
    CompiledCuda c = compile_cuda({gpu}, compute90());
    EXPECT_EQ(only_kernel(c).shared_bytes, 0);
}

// Softmax and layer norm from ONNX cases with a long axis: every reduction
// stage becomes a block reduction, the whole function still matches.
TEST(GpuScheduleRules, SoftmaxAndLayerNormStagesMatch) {
    TESSERA_SKIP_WITHOUT_NVRTC();
    for (const char* name : {"test_softmax_large_number", "test_softmax_axis_1",
                             "test_layer_normalization_2d_axis1"}) {
        graph::Graph g = test::load_node_case(name);
        for (int n = 0; n < int(g.nodes.size()); ++n) {
            PrimFunc plain = topi::lower_node(g, n);
            PrimFunc gpu = check_same(plain, g.nodes[size_t(n)].inputs.size());
            compile_cuda({gpu}, compute90());
        }
    }
    // A long row: the reductions are block-wide.
    te::Tensor a = te::placeholder({3, 500}, DataType::float32(), "A");
    IterVar k = te::reduce_axis(500, "k");
    te::Tensor mx = te::compute(
        {3}, [&](const std::vector<Var>& i) { return te::max(a(i[0], k.var), {k}); }, "M");
    te::Tensor e = te::compute(
        {3, 500}, [&](const std::vector<Var>& i) { return exp(a(i[0], i[1]) - mx(i[0])); }, "E");
    IterVar k2 = te::reduce_axis(500, "k2");
    te::Tensor s = te::compute(
        {3}, [&](const std::vector<Var>& i) { return te::sum(e(i[0], k2.var), {k2}); }, "S");
    te::Tensor y = te::compute(
        {3, 500}, [&](const std::vector<Var>& i) { return e(i[0], i[1]) / s(i[0]); }, "Y");
    PrimFunc gpu = check_same(te::create_prim_func({a, y}, "softmax"), 1);
    CompiledCuda c = compile_cuda({gpu}, compute90());
    // M, S (with E inlined), Y (with E inlined).
    ASSERT_EQ(c.funcs[0].kernels.size(), 3u);
    EXPECT_EQ(c.funcs[0].kernels[0].grid[0], 3);
    EXPECT_EQ(c.funcs[0].kernels[0].block[0], 256);
    EXPECT_EQ(c.funcs[0].kernels[1].shared_bytes, 256 * 4);
}

TEST(GpuScheduleRules, SharedTilesStayWithinTheVerifierLimits) {
    CudaOptions tight = compute90();
    tight.limits.max_shared_bytes = 4096;  // the 128x128x8 tiles need 8 KiB
    EXPECT_THROW(compile_cuda({topi::schedule_gpu_default(matmul(128, 128, 8), largest_tiles())}, tight),
                 tessera::UserError);
    // Large shapes: grid sizes and registers are what the verifier checks.
    CompiledCuda c =
        lower_cuda({topi::schedule_gpu_default(matmul(4096, 4096, 4096))}, compute90());
    EXPECT_EQ(c.funcs[0].kernels[0].grid, (std::array<int64_t, 3>{32, 32, 1}));
}

}  // namespace
}  // namespace tessera::codegen
