// CUDA C generation and NVRTC compilation (no GPU needed): the seeds'
// split/bind example as golden text, launch dimensions, barriers, float4
// accesses and the limit checks.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "engine/codegen/cuda/cuda_codegen.h"
#include "engine/core/error.h"
#include "engine/schedule/schedule.h"
#include "engine/te/tensor.h"
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

// The seeds' running example (seeds/002): B = A + 1 over 8 elements, split
// [2, 2, 2], reordered (i0_0, i0_2, i0_1), i0_0 -> blockIdx.x, i0_2 -> threadIdx.x.
PrimFunc seed_split_bind() {
    te::Tensor a = te::placeholder({8}, DataType::float32(), "A");
    te::Tensor b = te::compute(
        {8}, [&](const std::vector<Var>& i) { return a(i[0]) + Expr(1.0f); }, "B");
    PrimFunc f = te::create_prim_func({a, b}, "main");
    const Block* root = f->body.as<BlockRealize>()->block_node();
    const For* loop = root->body.as<For>();
    const BlockRealize* br = loop->body.as<BlockRealize>();
    Var i0_0("i0_0"), i0_1("i0_1"), i0_2("i0_2");
    Stmt s = BlockRealize::make({i0_0 * Expr(4) + i0_1 * Expr(2) + i0_2}, br->predicate, br->block);
    s = For::make(i0_1, Expr(0), Expr(2), ForKind::Serial, s);
    s = For::make(i0_2, Expr(0), Expr(2), ForKind::ThreadBinding, s, "threadIdx.x");
    s = For::make(i0_0, Expr(0), Expr(2), ForKind::ThreadBinding, s, "blockIdx.x");
    Stmt new_root = Block::make("root", {}, {}, {}, Stmt(), s, root->alloc_buffers);
    return f.with_body(BlockRealize::make({}, IntImm::make(DataType::boolean(), 1), new_root));
}

void expect_golden(const std::string& actual, const std::string& name) {
    std::string path = std::string(TESSERA_SOURCE_DIR) + "/tests/engine/codegen/cuda/golden/" + name;
    std::ifstream in(path);
    std::stringstream expected;
    expected << in.rdbuf();
    if (actual != expected.str()) {
        std::ofstream(path + ".actual") << actual;
        ADD_FAILURE() << "CUDA source differs from " << path << "; wrote " << path
                      << ".actual; see: diff -u " << path << " " << path << ".actual\n"
                      << actual;
    }
}

TEST(CudaCodegen, SeedSplitBindMatchesGoldenSource) {
    TESSERA_SKIP_WITHOUT_NVRTC();
    CompiledCuda c = compile_cuda({seed_split_bind()}, compute90());
    expect_golden(c.source, "seed_split_bind.cu");
    ASSERT_EQ(c.funcs.size(), 1u);
    ASSERT_EQ(c.funcs[0].kernels.size(), 1u);
    const CudaKernel& k = c.funcs[0].kernels[0];
    EXPECT_EQ(k.name, "main_kernel");
    EXPECT_EQ(k.grid, (std::array<int64_t, 3>{2, 1, 1}));
    EXPECT_EQ(k.block, (std::array<int64_t, 3>{2, 1, 1}));
    EXPECT_EQ(k.args, (std::vector<int>{0, 1}));
    EXPECT_THAT(c.ptx, HasSubstr(".entry main_kernel"));
    EXPECT_THAT(c.ptx, HasSubstr("%ctaid.x"));
    EXPECT_THAT(c.ptx, HasSubstr("%tid.x"));
}

// The same example written with the Schedule API, as in the seed.
TEST(CudaCodegen, SeedScheduleThroughTheScheduleApiMatchesGoldenSource) {
    TESSERA_SKIP_WITHOUT_NVRTC();
    te::Tensor a = te::placeholder({8}, DataType::float32(), "A");
    te::Tensor b = te::compute(
        {8}, [&](const std::vector<Var>& i) { return a(i[0]) + Expr(1.0f); }, "B");
    schedule::Schedule sch(te::create_prim_func({a, b}, "main"));
    std::vector<std::string> loops = sch.get_loops("B");
    ASSERT_EQ(loops.size(), 1u);
    std::vector<std::string> s = sch.split(loops[0], {2, 2, 2});
    sch.reorder({s[0], s[2], s[1]});
    sch.bind(s[0], "blockIdx.x");
    sch.bind(s[2], "threadIdx.x");
    expect_golden(compile_cuda({sch.func()}, compute90()).source, "seed_split_bind.cu");
}

TEST(CudaCodegen, SeedScheduleComputesTheSameAsTheDefault) {
    te::Tensor a = te::placeholder({8}, DataType::float32(), "A");
    te::Tensor b = te::compute(
        {8}, [&](const std::vector<Var>& i) { return a(i[0]) + Expr(1.0f); }, "B");
    PrimFunc plain = te::create_prim_func({a, b}, "main");
    auto args = test::random_args(plain, 1, 3);
    auto want = test::interpret_copy(plain, args);
    auto got = test::interpret_copy(seed_split_bind(), args);
    EXPECT_TRUE(runtime::allclose(got[1], want[1], 0, 0));
}

// C[i, j] = sum_k A[i, k] * B[k, j] with the default GPU schedule: one
// thread per output, blocks of 256 threads, a guard for the remainder.
TEST(CudaCodegen, DefaultScheduleBindsOneThreadPerOutput) {
    TESSERA_SKIP_WITHOUT_NVRTC();
    te::Tensor a = te::placeholder({30, 20}, DataType::float32(), "A");
    te::Tensor b = te::placeholder({20, 10}, DataType::float32(), "B");
    IterVar k = te::reduce_axis(20, "k");
    te::Tensor c = te::compute(
        {30, 10}, [&](const std::vector<Var>& i) { return te::sum(a(i[0], k.var) * b(k.var, i[1]), {k}); },
        "C");
    PrimFunc f = te::create_prim_func({a, b, c}, "matmul");
    PrimFunc g = topi::schedule_gpu_default(f);
    CompiledCuda cc = compile_cuda({g}, compute90());
    ASSERT_EQ(cc.funcs[0].kernels.size(), 1u);
    EXPECT_EQ(cc.funcs[0].kernels[0].grid[0], 2);    // ceil(300 / 256)
    EXPECT_EQ(cc.funcs[0].kernels[0].block[0], 256);
    EXPECT_THAT(cc.source, HasSubstr("const float* __restrict__ A"));
    EXPECT_THAT(cc.source, HasSubstr("float* __restrict__ C"));
    EXPECT_THAT(cc.source, HasSubstr("< 300"));
    auto args = test::random_args(f, 2, 11);
    auto want = test::interpret_copy(f, args);
    auto got = test::interpret_copy(g, args);
    EXPECT_TRUE(runtime::allclose(got[2], want[2], 1e-6, 1e-6));
}

// Softmax has four stages: four kernels, the intermediates are workspaces.
TEST(CudaCodegen, StagesBecomeKernelsAndIntermediatesWorkspaces) {
    TESSERA_SKIP_WITHOUT_NVRTC();
    graph::Graph g = test::load_node_case("test_softmax_axis_1");
    PrimFunc f = topi::lower_node_gpu(g, 0);
    CompiledCuda cc = compile_cuda({f}, compute90());
    const CudaFunction& fn = cc.funcs[0];
    // max, sum of exp, normalize: the exp stage is inlined into its two readers.
    EXPECT_EQ(fn.kernels.size(), 3u);
    EXPECT_EQ(fn.workspaces.size(), 2u);
    for (const CudaKernel& k : fn.kernels) EXPECT_THAT(cc.ptx, HasSubstr(".entry " + k.name));
    // The last kernel reads the input and the max and sum workspaces and writes the output.
    EXPECT_EQ(fn.kernels.back().args.size(), 4u);
    EXPECT_THAT(cc.source, HasSubstr("__expf("));
    CudaOptions precise = compute90();
    precise.fast_math = false;
    EXPECT_THAT(emit_cuda_source({f}, precise), HasSubstr("expf("));
    EXPECT_THAT(emit_cuda_source({f}, precise), testing::Not(HasSubstr("__expf(")));
}

Stmt thread_loop(const Var& v, int64_t extent, const std::string& tag, Stmt body) {
    return For::make(v, Expr(0), Expr(extent), ForKind::ThreadBinding, std::move(body), tag);
}

// A block-wide exchange through shared memory: each thread writes one
// element and reads its mirror, so a barrier must separate the two.
PrimFunc shared_reverse(int64_t threads, int64_t shared_elems) {
    Buffer a("A", DataType::float32(), {Expr(threads * 4)});
    Buffer b("B", DataType::float32(), {Expr(threads * 4)});
    Buffer s("S", DataType::float32(), {Expr(shared_elems)}, "shared");
    Var bx("bx"), tx("tx"), tx2("tx2");
    Stmt write = thread_loop(tx, threads, "threadIdx.x",
                             BufferStore::make(s, BufferLoad::make(a, {bx * Expr(threads) + tx}), {tx}));
    Stmt read = thread_loop(
        tx2, threads, "threadIdx.x",
        BufferStore::make(b, BufferLoad::make(s, {Expr(threads - 1) - tx2}), {bx * Expr(threads) + tx2}));
    Stmt body = thread_loop(bx, 4, "blockIdx.x", Allocate::make(s, SeqStmt::make({write, read})));
    return PrimFunc("reverse", {a, b}, body);
}

TEST(CudaCodegen, BarrierSeparatesSharedWriteAndRead) {
    TESSERA_SKIP_WITHOUT_NVRTC();
    CompiledCuda c = compile_cuda({shared_reverse(128, 128)}, compute90());
    std::string src = c.source;
    size_t store = src.find("S[tx] =");
    size_t sync = src.find("__syncthreads();");
    size_t load = src.find("= S[");
    ASSERT_NE(sync, std::string::npos) << src;
    EXPECT_LT(store, sync);
    EXPECT_LT(sync, load);
    EXPECT_THAT(src, HasSubstr("__shared__ __align__(16) float S[128];"));
    EXPECT_EQ(c.funcs[0].kernels[0].shared_bytes, 128 * 4);
    EXPECT_THAT(c.ptx, HasSubstr("bar.sync"));
    // Same result as the reference, which runs the thread loops one by one.
    auto args = test::random_args(shared_reverse(128, 128), 1, 5);
    auto got = test::interpret_copy(shared_reverse(128, 128), args);
    const float* a = args[0].data<float>();
    const float* b = got[1].data<float>();
    for (int i = 0; i < 512; ++i) ASSERT_EQ(b[i], a[(i / 128) * 128 + 127 - i % 128]);
}

TEST(CudaCodegen, LoopReadingAndWritingSharedEndsWithBarrier) {
    TESSERA_SKIP_WITHOUT_NVRTC();
    Buffer a("A", DataType::float32(), {Expr(64 * 8)});
    Buffer b("B", DataType::float32(), {Expr(64)});
    Buffer s("S", DataType::float32(), {Expr(64)}, "shared");
    Var tx("tx"), k("k");
    Stmt fetch = BufferStore::make(s, BufferLoad::make(a, {k * Expr(64) + tx}), {tx});
    Stmt use = BufferStore::make(b, BufferLoad::make(b, {tx}) + BufferLoad::make(s, {Expr(63) - tx}), {tx});
    Stmt body = thread_loop(tx, 64, "threadIdx.x",
                            For::make(k, Expr(0), Expr(8), ForKind::Serial, SeqStmt::make({fetch, use})));
    body = Allocate::make(s, body);
    std::string src = compile_cuda({PrimFunc("acc", {a, b}, body)}, compute90()).source;
    size_t first = src.find("__syncthreads();");
    ASSERT_NE(first, std::string::npos) << src;
    EXPECT_NE(src.find("__syncthreads();", first + 1), std::string::npos) << src;
}

TEST(CudaCodegen, VectorizedLoopOfFourUsesFloat4) {
    TESSERA_SKIP_WITHOUT_NVRTC();
    Buffer a("A", DataType::float32(), {Expr(1024)});
    Buffer b("B", DataType::float32(), {Expr(1024)});
    Var bx("bx"), tx("tx"), v("v");
    Expr idx = bx * Expr(512) + tx * Expr(4) + v;
    Stmt store = BufferStore::make(b, BufferLoad::make(a, {idx}) * Expr(2.0f) + Expr(1.0f), {idx});
    Stmt body = For::make(v, Expr(0), Expr(4), ForKind::Vectorized, store);
    body = thread_loop(bx, 2, "blockIdx.x", thread_loop(tx, 128, "threadIdx.x", body));
    PrimFunc f("scale", {a, b}, body);
    CompiledCuda c = compile_cuda({f}, compute90());
    EXPECT_THAT(c.source, HasSubstr("*(const float4*)(A + "));
    EXPECT_THAT(c.source, HasSubstr("*(float4*)(B + "));
    EXPECT_THAT(c.ptx, HasSubstr("ld.global.nc.v4.f32"));
    auto args = test::random_args(f, 1, 9);
    auto got = test::interpret_copy(f, args);
    for (int i = 0; i < 1024; ++i)
        ASSERT_FLOAT_EQ(got[1].data<float>()[i], args[0].data<float>()[i] * 2 + 1);
}

TEST(CudaCodegen, MisalignedVectorLoopStaysScalar) {
    TESSERA_SKIP_WITHOUT_NVRTC();
    Buffer a("A", DataType::float32(), {Expr(1024)});
    Buffer b("B", DataType::float32(), {Expr(1024)});
    Var tx("tx"), v("v");
    Expr idx = tx * Expr(3) + v;  // not a multiple of 4: float4 would fault
    Stmt body = For::make(v, Expr(0), Expr(4), ForKind::Vectorized,
                          BufferStore::make(b, BufferLoad::make(a, {idx}), {idx}));
    body = thread_loop(tx, 128, "threadIdx.x", body);
    CompiledCuda c = compile_cuda({PrimFunc("copy3", {a, b}, body)}, compute90());
    EXPECT_THAT(c.source, testing::Not(HasSubstr("float4")));
    EXPECT_THAT(c.source, HasSubstr("#pragma unroll"));
}

// ---- the verifier: limits give UserErrors naming the kernel and the fix.

std::string user_error(const PrimFunc& f) {
    try {
        compile_cuda({f}, compute90());
    } catch (const UserError& e) {
        return e.what();
    }
    return "no error";
}

TEST(CudaVerify, RejectsMoreThan1024ThreadsPerBlock) {
    std::string msg = user_error(shared_reverse(2048, 16));
    EXPECT_THAT(msg, HasSubstr("function 'reverse', kernel 'reverse_kernel'"));
    EXPECT_THAT(msg, HasSubstr("2048 threads per block"));
    EXPECT_THAT(msg, HasSubstr("limit of 1024"));
}

TEST(CudaVerify, RejectsMoreThan48KiBOfSharedMemory) {
    std::string msg = user_error(shared_reverse(128, 16 * 1024));
    EXPECT_THAT(msg, HasSubstr("65536 bytes of shared memory"));
    EXPECT_THAT(msg, HasSubstr("49152 bytes (48 KiB)"));
}

TEST(CudaVerify, RejectsLocalArraysBeyondTheRegisterFile) {
    Buffer a("A", DataType::float32(), {Expr(64)});
    Buffer l("L", DataType::float32(), {Expr(1024)}, "local");
    Var tx("tx"), i("i");
    Stmt fill = For::make(i, Expr(0), Expr(1024), ForKind::Serial,
                          BufferStore::make(l, Expr(1.0f), {i}));
    Stmt out = BufferStore::make(a, BufferLoad::make(l, {tx}), {tx});
    Stmt body = thread_loop(tx, 64, "threadIdx.x", Allocate::make(l, SeqStmt::make({fill, out})));
    std::string msg = user_error(PrimFunc("spill", {a}, body));
    EXPECT_THAT(msg, HasSubstr("1024 registers per thread"));
    EXPECT_THAT(msg, HasSubstr("limit of 255"));
}

TEST(CudaVerify, RejectsUnknownThreadAxisAndNestedRebinding) {
    Buffer a("A", DataType::float32(), {Expr(64)});
    Var x("x"), y("y");
    Stmt store = BufferStore::make(a, Expr(1.0f), {x});
    EXPECT_THAT(user_error(PrimFunc("f", {a}, thread_loop(x, 64, "warpIdx.x", store))),
                HasSubstr("unknown thread axis 'warpIdx.x'"));
    Stmt nested = thread_loop(y, 1, "threadIdx.x", thread_loop(x, 64, "threadIdx.x", store));
    EXPECT_THAT(user_error(PrimFunc("g", {a}, nested)),
                HasSubstr("inside another loop bound to the same axis"));
}

TEST(CudaCodegen, NvrtcErrorsAreUserErrorsWithTheLog) {
    TESSERA_SKIP_WITHOUT_NVRTC();
    try {
        nvrtc_compile("extern \"C\" __global__ void k() { undefined_thing(); }", "compute_90", true);
        FAIL() << "expected a UserError";
    } catch (const UserError& e) {
        EXPECT_THAT(std::string(e.what()), HasSubstr("undefined_thing"));
    }
}

}  // namespace
}  // namespace tessera::codegen
