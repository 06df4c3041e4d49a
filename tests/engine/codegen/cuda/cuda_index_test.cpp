// 32-bit index arithmetic in the generated CUDA C: int for loop, thread and
// index variables where every buffer has fewer than 2^31 elements, long long
// where one has more; 64-bit data (ArgMax's int64 output, Gather's int64
// indices) stays 64-bit. Checked on the emitted source and with NVRTC.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>

#include "engine/codegen/cuda/cuda_codegen.h"
#include "engine/te/tensor.h"
#include "tests/engine/codegen/cuda/cuda_test_util.h"

namespace tessera::codegen {
namespace {

using namespace tessera::tir;
using testing::HasSubstr;
using testing::Not;

CudaOptions compute90() {
    CudaOptions o;
    o.arch = "compute_90";
    return o;
}

// B = A + 1 over n elements with the default GPU schedule.
PrimFunc add_one(int64_t n) {
    te::Tensor a = te::placeholder({n}, DataType::float32(), "A");
    te::Tensor b = te::compute(
        {n}, [&](const std::vector<Var>& i) { return a(i[0]) + Expr(1.0f); }, "B");
    return topi::schedule_gpu_default(te::create_prim_func({a, b}, "add_one"));
}

TEST(CudaIndexTypes, SmallBuffersUse32BitIndices) {
    TESSERA_SKIP_WITHOUT_NVRTC();
    CompiledCuda c = compile_cuda({add_one(1 << 20)}, compute90());
    EXPECT_THAT(c.source, HasSubstr("const int i0_fused_0 = ((int)blockIdx.x);"));
    EXPECT_THAT(c.source, HasSubstr("const int i0_fused_1 = ((int)threadIdx.x);"));
    EXPECT_THAT(c.source, Not(HasSubstr("long long")));
}

TEST(CudaIndexTypes, ABufferOf2To31ElementsKeeps64BitIndices) {
    TESSERA_SKIP_WITHOUT_NVRTC();
    const int64_t n = (int64_t(1) << 31) + 100;
    CompiledCuda c = compile_cuda({add_one(n)}, compute90());
    EXPECT_THAT(c.source, HasSubstr("const long long i0_fused_0 = ((long long)blockIdx.x);"));
    EXPECT_THAT(c.source, HasSubstr("2147483748"));  // the guard against n
    CudaOptions wide = compute90();
    wide.int32_indices = false;
    EXPECT_THAT(emit_cuda_source({add_one(1 << 20)}, wide), HasSubstr("long long i0_fused_0"));
}

TEST(CudaIndexTypes, SixtyFourBitDataStaysSixtyFourBit) {
    TESSERA_SKIP_WITHOUT_NVRTC();
    for (const char* name : {"test_argmax_default_axis_example", "test_gather_0"}) {
        graph::Graph g = test::load_node_case(name);
        PrimFunc f = topi::lower_node_gpu(g, 0);
        CompiledCuda c = compile_cuda({test::renamed(f, "k")}, compute90());
        // Index variables are int; int64 buffers are still long long pointers.
        EXPECT_TRUE(
            std::regex_search(c.source, std::regex("const int [A-Za-z0-9_]+ = \\(\\(int\\)")))
            << name << "\n"
            << c.source;
        EXPECT_THAT(c.source, HasSubstr("long long* __restrict__")) << name;
        EXPECT_FALSE(c.ptx.empty());
    }
    // ArgMax stores an index into int64 data: widened explicitly.
    graph::Graph g = test::load_node_case("test_argmax_default_axis_example");
    std::string src = emit_cuda_source({topi::lower_node_gpu(g, 0)}, compute90());
    EXPECT_THAT(src, HasSubstr("(long long)")) << src;
}

}  // namespace
}  // namespace tessera::codegen
