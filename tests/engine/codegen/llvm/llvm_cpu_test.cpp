// CPU back-end features: OpenMP parallel loops (with tails, captured
// variables and per-thread scratch), explicit unroll, fast vector exp / tanh /
// erf / sigmoid accuracy, and object-file emission. Checked against the
// interpreter or the C library on random data; nothing is timed.
#include "tests/engine/codegen/llvm/codegen_test_util.h"

#include "engine/core/error.h"

namespace tessera::test {
namespace {

// C[i, j] = sum_k A[i, k] * 2 + i, with an outer serial loop, a parallel loop
// over a non-dividing extent, a Let-bound value captured by the region and a
// per-iteration local scratch buffer.
PrimFunc parallel_func(const std::string& name, ForKind inner_kind) {
    const int64_t O = 3, M = 37, K = 5;
    Buffer A = float_buffer("A", {O, M, K}), C = float_buffer("C", {O, M});
    Buffer tmp = float_buffer("tmp", {K}, "local");
    Var o("o"), i("i"), k("k"), k2("k2");
    Var scale("scale", DataType::float32());
    Stmt fill = For::make(k, Expr(0), Expr(K), inner_kind,
                          st(tmp, ld(A, {o, i, k}) * scale, {k}));
    Stmt sum = st(C, cast(DataType::float32(), i), {o, i});
    Stmt acc = For::make(k2, Expr(0), Expr(K), ForKind::Serial,
                         st(C, ld(C, {o, i}) + ld(tmp, {k2}), {o, i}));
    Stmt inner = Allocate::make(tmp, SeqStmt::make({fill, sum, acc}));
    Stmt par = For::make(i, Expr(0), Expr(M), ForKind::Parallel, inner);
    Stmt body = For::make(o, Expr(0), Expr(O), ForKind::Serial, LetStmt::make(scale, Expr(2.0f), par));
    return PrimFunc(name, {A, C}, body);
}

TEST(LlvmCpu, ParallelLoopMatchesInterpreter) {
    for (int threads : {0, 1, 2, 3}) {
        for (ForKind kind : {ForKind::Serial, ForKind::Vectorized, ForKind::Unrolled}) {
            PrimFunc f = parallel_func("par_" + std::to_string(threads), kind);
            auto a = random_floats(3 * 37 * 5, 40);
            std::vector<float> c(3 * 37, 0.f), want(3 * 37, 0.f);
            codegen::LlvmOptions options;
            options.threads = threads;
            auto module = codegen::jit_compile({f}, options);
            std::vector<void*> args = {a.data(), c.data()};
            module->lookup(f->name)(args.data());
            interpret(f, {a.data(), want.data()});
            expect_close(c, want, 1e-6, "threads " + std::to_string(threads));
        }
    }
}

TEST(LlvmCpu, NestedParallelLoopsRunEveryIteration) {
    const int64_t M = 9, N = 13;
    Buffer A = float_buffer("A", {M, N}), C = float_buffer("C", {M, N});
    Var i("i"), j("j");
    Stmt body = For::make(i, Expr(0), Expr(M), ForKind::Parallel,
                          For::make(j, Expr(0), Expr(N), ForKind::Parallel,
                                    st(C, ld(A, {i, j}) + cast(DataType::float32(), i * N + j), {i, j})));
    PrimFunc f("nested_par", {A, C}, body);
    auto a = random_floats(M * N, 41);
    std::vector<float> c(M * N, 0.f), want(M * N, 0.f);
    run_jit(f, {a.data(), c.data()});
    interpret(f, {a.data(), want.data()});
    expect_close(c, want, 0);
}

TEST(LlvmCpu, ParallelLoopIsOutlinedToOpenMP) {
    std::string ir = codegen::emit_llvm_ir({parallel_func("par_ir", ForKind::Serial)});
    EXPECT_NE(ir.find("GOMP_parallel"), std::string::npos);
    EXPECT_NE(ir.find("omp_get_thread_num"), std::string::npos);
}

TEST(LlvmCpu, UnrolledLoopIsUnrolledByCodegen) {
    const int64_t N = 6;
    Buffer A = float_buffer("A", {N}), C = float_buffer("C", {N});
    Var u("u");
    Stmt body = For::make(u, Expr(1), Expr(N - 1), ForKind::Unrolled,
                          st(C, ld(A, {u}) * ld(A, {u - 1}), {u}));
    PrimFunc f("unrolled", {A, C}, body);
    codegen::LlvmOptions o0;
    o0.opt_level = 0;
    std::string ir = codegen::emit_llvm_ir({f}, o0);
    EXPECT_EQ(ir.find("u.header"), std::string::npos) << "no loop left at -O0";
    auto a = random_floats(N, 42);
    std::vector<float> c(N, 5.f), want(N, 5.f);
    run_jit(f, {a.data(), c.data()}, 0);
    interpret(f, {a.data(), want.data()});
    expect_close(c, want, 0);
    EXPECT_FLOAT_EQ(c[0], 5.f);
}

// y = op(x) over a vectorized loop, with x spanning small, medium and large
// magnitudes; compared with the C library in double precision.
void check_fast_math(const std::string& op, float lo, float hi, double rtol, double atol) {
    const int64_t N = 4099;  // not a multiple of any vector width
    Buffer X = float_buffer("X", {N}), Y = float_buffer("Y", {N});
    Var i("i");
    Expr x = ld(X, {i});
    Expr y = op == "exp" ? exp(x) : op == "tanh" ? tanh(x) : op == "erf" ? erf(x) : sigmoid(x);
    PrimFunc f("fast_" + op, {X, Y},
               For::make(i, Expr(0), Expr(N), ForKind::Vectorized, st(Y, y, {i})));
    std::vector<float> xs(N);
    std::mt19937 rng(43);
    std::uniform_real_distribution<float> dist(lo, hi);
    for (float& v : xs) v = dist(rng);
    xs[0] = 0.f;
    xs[1] = 1e-6f;
    xs[2] = -3e-4f;
    std::vector<float> ys(N, 0.f);
    run_jit(f, {xs.data(), ys.data()});
    double worst = 0;
    for (int64_t k = 0; k < N; ++k) {
        double xv = xs[k];
        double want = op == "exp"    ? std::exp(xv)
                      : op == "tanh" ? std::tanh(xv)
                      : op == "erf"  ? std::erf(xv)
                                     : 1.0 / (1.0 + std::exp(-xv));
        double err = std::fabs(ys[k] - want);
        worst = std::max(worst, err / (std::fabs(want) + atol / rtol));
        ASSERT_LE(err, rtol * std::fabs(want) + atol) << op << "(" << xv << ") = " << ys[k];
    }
    ::testing::Test::RecordProperty(op + "_worst_rel", std::to_string(worst));
}

TEST(LlvmCpu, FastExpIsAccurate) { check_fast_math("exp", -87.f, 88.f, 2e-6, 1e-37); }
TEST(LlvmCpu, FastTanhIsAccurate) { check_fast_math("tanh", -12.f, 12.f, 2e-6, 1e-9); }
TEST(LlvmCpu, FastErfIsAccurate) { check_fast_math("erf", -6.f, 6.f, 2e-6, 1e-9); }
TEST(LlvmCpu, FastSigmoidIsAccurate) { check_fast_math("sigmoid", -30.f, 30.f, 2e-6, 1e-12); }

TEST(LlvmCpu, FastExpSaturates) {
    const int64_t N = 8;
    Buffer X = float_buffer("X", {N}), Y = float_buffer("Y", {N});
    Var i("i");
    PrimFunc f("exp_edges", {X, Y},
               For::make(i, Expr(0), Expr(N), ForKind::Vectorized, st(Y, exp(ld(X, {i})), {i})));
    std::vector<float> xs = {-1000.f, -105.f, -88.f, 88.5f, 89.f, 1000.f, 0.f, 1.f}, ys(N);
    run_jit(f, {xs.data(), ys.data()});
    EXPECT_EQ(ys[0], 0.f);
    EXPECT_EQ(ys[1], 0.f);
    EXPECT_NEAR(ys[2] / std::exp(-88.0), 1.0, 1e-5);  // denormal result
    EXPECT_NEAR(ys[3] / std::exp(88.5), 1.0, 2e-6);
    EXPECT_TRUE(std::isinf(ys[4]));
    EXPECT_TRUE(std::isinf(ys[5]));
    EXPECT_EQ(ys[6], 1.f);
    EXPECT_NEAR(ys[7], std::exp(1.0), 1e-6);
}

TEST(LlvmCpu, VectorizedLoopBecomesVectorCode) {
    const int64_t N = 1024;
    Buffer A = float_buffer("A", {N}), B = float_buffer("B", {N}), C = float_buffer("C", {N});
    Var i("i");
    PrimFunc f("vec_add", {A, B, C},
               For::make(i, Expr(0), Expr(N), ForKind::Vectorized,
                         st(C, ld(A, {i}) * ld(B, {i}) + ld(C, {i}), {i})));
    std::string ir = codegen::emit_llvm_ir({f});
    EXPECT_NE(ir.find("x float>"), std::string::npos) << ir;
}

TEST(LlvmCpu, EmitsAnElfObject) {
    std::string obj = codegen::emit_object({parallel_func("obj_kernel", ForKind::Serial)});
    ASSERT_GT(obj.size(), 64u);
    EXPECT_EQ(obj.substr(0, 4), std::string("\x7f" "ELF"));
    EXPECT_NE(obj.find("obj_kernel"), std::string::npos);
    EXPECT_NE(obj.find("GOMP_parallel"), std::string::npos);
}

TEST(LlvmCpu, HostVectorLanesFollowTheCpu) {
    int lanes = codegen::host_vector_lanes();
    std::string desc = codegen::host_target_description();
    EXPECT_EQ(lanes, desc.find("+avx512f") != std::string::npos ? 16
                     : desc.find("+avx") != std::string::npos   ? 8
                                                                : 4);
}

}  // namespace
}  // namespace tessera::test
