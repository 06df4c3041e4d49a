// JIT-compiled loop IR against naive C++ loops and the loop-IR interpreter.
#include <algorithm>
#include <limits>

#include "tests/engine/codegen/llvm/codegen_test_util.h"

namespace tessera::test {
namespace {

TEST(LlvmCodegen, ElementwiseAddWithBroadcast) {
    const int64_t M = 7, N = 13;
    Buffer A = float_buffer("A", {M, N}), B = float_buffer("B", {N}), C = float_buffer("C", {M, N});
    Stmt body = block_nest("C", {M, N}, {}, [&](const std::vector<Var>& v) {
        return st(C, ld(A, {v[0], v[1]}) + ld(B, {v[1]}), {v[0], v[1]});
    });
    PrimFunc f("add_bcast", {A, B, C}, root_block(body));
    auto a = random_floats(M * N, 1), b = random_floats(N, 2);
    std::vector<float> c(M * N, 0.f), want(M * N), interp(M * N, 0.f);
    run_jit(f, {a.data(), b.data(), c.data()});
    for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) want[i * N + j] = a[i * N + j] + b[j];
    expect_close(c, want, 0, "jit");
    interpret(f, {a.data(), b.data(), interp.data()});
    expect_close(c, interp, 0, "interpreter");
}

PrimFunc matmul_func(int64_t M, int64_t N, int64_t K) {
    Buffer A = float_buffer("A", {M, K}), B = float_buffer("B", {K, N}), C = float_buffer("C", {M, N});
    Stmt body = block_nest(
        "C", {M, N}, {K},
        [&](const std::vector<Var>& v) {
            return st(C, ld(C, {v[0], v[1]}) + ld(A, {v[0], v[2]}) * ld(B, {v[2], v[1]}),
                      {v[0], v[1]});
        },
        [&](const std::vector<Var>& v) { return st(C, Expr(0.0f), {v[0], v[1]}); });
    return PrimFunc("matmul", {A, B, C}, root_block(body));
}

std::vector<float> naive_matmul(const std::vector<float>& a, const std::vector<float>& b,
                                int64_t M, int64_t N, int64_t K) {
    std::vector<float> c(M * N, 0.f);
    for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) {
            float acc = 0.f;
            for (int64_t k = 0; k < K; ++k) acc += a[i * K + k] * b[k * N + j];
            c[i * N + j] = acc;
        }
    return c;
}

TEST(LlvmCodegen, MatmulWithReductionInit) {
    const int64_t M = 17, N = 13, K = 19;
    PrimFunc f = matmul_func(M, N, K);
    auto a = random_floats(M * K, 3), b = random_floats(K * N, 4);
    // Garbage in C: the block init must reset it.
    std::vector<float> c = random_floats(M * N, 5), interp(M * N, 123.f);
    run_jit(f, {a.data(), b.data(), c.data()});
    expect_close(c, naive_matmul(a, b, M, N, K), 1e-5, "jit");
    interpret(f, {a.data(), b.data(), interp.data()});
    expect_close(c, interp, 1e-5, "interpreter");
}

TEST(LlvmCodegen, MatmulAtEveryOptLevel) {
    const int64_t M = 9, N = 33, K = 16;
    PrimFunc f = matmul_func(M, N, K);
    auto a = random_floats(M * K, 6), b = random_floats(K * N, 7);
    auto want = naive_matmul(a, b, M, N, K);
    for (int opt = 0; opt <= 3; ++opt) {
        std::vector<float> c(M * N, 0.f);
        run_jit(f, {a.data(), b.data(), c.data()}, opt);
        expect_close(c, want, 1e-5, "O" + std::to_string(opt));
    }
}

TEST(LlvmCodegen, ConvWithPaddingSelectNeverReadsOutOfBounds) {
    const int64_t H = 9, W = 11, R = 3, S = 3;
    Buffer X = float_buffer("X", {H, W}), Wt = float_buffer("Wt", {R, S});
    Buffer Y = float_buffer("Y", {H, W});
    Stmt body = block_nest(
        "Y", {H, W}, {R, S},
        [&](const std::vector<Var>& v) {
            Expr y = v[0] + v[2] - 1, x = v[1] + v[3] - 1;
            Expr inside = (y >= 0) && (y < H) && (x >= 0) && (x < W);
            Expr padded = select(inside, ld(X, {y, x}), Expr(0.0f));
            return st(Y, ld(Y, {v[0], v[1]}) + padded * ld(Wt, {v[2], v[3]}), {v[0], v[1]});
        },
        [&](const std::vector<Var>& v) { return st(Y, Expr(0.0f), {v[0], v[1]}); });
    PrimFunc f("conv_pad", {X, Wt, Y}, root_block(body));
    auto x = random_floats(H * W, 8), w = random_floats(R * S, 9);
    std::vector<float> y(H * W, 0.f), want(H * W, 0.f), interp(H * W, 0.f);
    run_jit(f, {x.data(), w.data(), y.data()});
    for (int64_t i = 0; i < H; ++i)
        for (int64_t j = 0; j < W; ++j) {
            float acc = 0.f;
            for (int64_t r = 0; r < R; ++r)
                for (int64_t s = 0; s < S; ++s) {
                    int64_t yy = i + r - 1, xx = j + s - 1;
                    float v = (yy >= 0 && yy < H && xx >= 0 && xx < W) ? x[yy * W + xx] : 0.f;
                    acc += v * w[r * S + s];
                }
            want[i * W + j] = acc;
        }
    expect_close(y, want, 1e-5, "jit");
    interpret(f, {x.data(), w.data(), interp.data()});
    expect_close(y, interp, 1e-5, "interpreter");
}

// B = A * 2 + 1 in an intermediate buffer, then C = B * B + A.
void check_two_stage(int64_t M, int64_t N) {
    Buffer A = float_buffer("A", {M, N}), B = float_buffer("B", {M, N}), C = float_buffer("C", {M, N});
    Stmt s1 = block_nest("B", {M, N}, {}, [&](const std::vector<Var>& v) {
        return st(B, ld(A, {v[0], v[1]}) * Expr(2.0f) + Expr(1.0f), {v[0], v[1]});
    });
    Stmt s2 = block_nest("C", {M, N}, {}, [&](const std::vector<Var>& v) {
        Expr b = ld(B, {v[0], v[1]});
        return st(C, b * b + ld(A, {v[0], v[1]}), {v[0], v[1]});
    });
    PrimFunc f("two_stage", {A, C}, root_block(SeqStmt::make({s1, s2}), {B}));
    auto a = random_floats(M * N, 10);
    std::vector<float> c(M * N, 0.f), want(M * N), interp(M * N, 0.f);
    run_jit(f, {a.data(), c.data()});
    for (int64_t i = 0; i < M * N; ++i) {
        float b = a[i] * 2.f + 1.f;
        want[i] = b * b + a[i];
    }
    expect_close(c, want, 1e-6, "jit");
    interpret(f, {a.data(), interp.data()});
    expect_close(c, interp, 1e-6, "interpreter");
}

TEST(LlvmCodegen, TwoStageWithStackIntermediate) { check_two_stage(8, 9); }
TEST(LlvmCodegen, TwoStageWithHeapIntermediate) { check_two_stage(130, 129); }

TEST(LlvmCodegen, MaxReduction) {
    const int64_t M = 11, K = 37;
    Buffer A = float_buffer("A", {M, K}), C = float_buffer("C", {M});
    Stmt body = block_nest(
        "C", {M}, {K},
        [&](const std::vector<Var>& v) {
            return st(C, max(ld(C, {v[0]}), ld(A, {v[0], v[1]})), {v[0]});
        },
        [&](const std::vector<Var>& v) { return st(C, min_value(DataType::float32()), {v[0]}); });
    PrimFunc f("row_max", {A, C}, root_block(body));
    auto a = random_floats(M * K, 11, -5.f, -1.f);  // all negative: a zero init would be wrong
    std::vector<float> c(M, 0.f), want(M), interp(M, 0.f);
    run_jit(f, {a.data(), c.data()});
    for (int64_t i = 0; i < M; ++i)
        want[i] = *std::max_element(a.begin() + i * K, a.begin() + (i + 1) * K);
    expect_close(c, want, 0, "jit");
    interpret(f, {a.data(), interp.data()});
    expect_close(c, interp, 0, "interpreter");
}

TEST(LlvmCodegen, MathIntrinsics) {
    const int64_t N = 64;
    Buffer A = float_buffer("A", {N}), P = float_buffer("P", {N});
    struct Case {
        const char* name;
        std::function<Expr(Expr, Expr)> ir;
        std::function<float(float, float)> ref;
    };
    std::vector<Case> cases = {
        {"exp", [](Expr x, Expr) { return exp(x); }, [](float x, float) { return std::exp(x); }},
        {"tanh", [](Expr x, Expr) { return tanh(x); }, [](float x, float) { return std::tanh(x); }},
        {"erf", [](Expr x, Expr) { return erf(x); }, [](float x, float) { return std::erf(x); }},
        {"sqrt", [](Expr x, Expr) { return sqrt(fabs(x)); },
         [](float x, float) { return std::sqrt(std::fabs(x)); }},
        {"log", [](Expr x, Expr) { return log(fabs(x)); },
         [](float x, float) { return std::log(std::fabs(x)); }},
        {"rsqrt", [](Expr x, Expr) { return rsqrt(fabs(x)); },
         [](float x, float) { return 1.f / std::sqrt(std::fabs(x)); }},
        {"sigmoid", [](Expr x, Expr) { return sigmoid(x); },
         [](float x, float) { return 1.f / (1.f + std::exp(-x)); }},
        {"floor", [](Expr x, Expr) { return floor(x * Expr(3.0f)); },
         [](float x, float) { return std::floor(x * 3.f); }},
        {"ceil", [](Expr x, Expr) { return ceil(x * Expr(3.0f)); },
         [](float x, float) { return std::ceil(x * 3.f); }},
        {"round", [](Expr x, Expr) { return round(x * Expr(3.0f)); },
         [](float x, float) { return std::nearbyint(x * 3.f); }},
        {"pow", [](Expr x, Expr y) { return pow(fabs(x), y); },
         [](float x, float y) { return std::pow(std::fabs(x), y); }},
        {"min", [](Expr x, Expr y) { return min(x, y); },
         [](float x, float y) { return std::min(x, y); }},
        {"div", [](Expr x, Expr y) { return x / y - x; }, [](float x, float y) { return x / y - x; }},
    };
    auto a = random_floats(N, 12);
    auto p = random_floats(N, 13);
    a[0] = 0.5f / 3.f;  // round(0.5) = 0 and round(2.5) = 2: half to even
    a[1] = 2.5f / 3.f;
    for (const Case& c : cases) {
        Buffer O = float_buffer("O", {N});
        Var i("i");
        Stmt body = For::make(i, Expr(0), Expr(N), ForKind::Serial,
                              st(O, c.ir(ld(A, {i}), ld(P, {i})), {i}));
        PrimFunc f(std::string("intrin_") + c.name, {A, P, O}, body);
        std::vector<float> o(N, 0.f), want(N), interp(N, 0.f);
        run_jit(f, {a.data(), p.data(), o.data()});
        for (int64_t k = 0; k < N; ++k) want[k] = c.ref(a[k], p[k]);
        expect_close(o, want, 2e-6, c.name);
        interpret(f, {a.data(), p.data(), interp.data()});
        expect_close(o, interp, 2e-6, std::string(c.name) + " vs interpreter");
    }
}

TEST(LlvmCodegen, FloorDivModOnNegativeNumbers) {
    const int64_t N = 200;
    auto i64 = [](const std::string& n) { return Buffer(n, DataType::int64(), {Expr(N)}); };
    Buffer A = i64("A"), B = i64("B"), Q = i64("Q"), R = i64("R"), D = i64("D"), M = i64("M");
    Var i("i");
    Expr a = ld(A, {i}), b = ld(B, {i});
    Stmt body = For::make(i, Expr(0), Expr(N), ForKind::Serial,
                          SeqStmt::make({st(Q, floordiv(a, b), {i}), st(R, floormod(a, b), {i}),
                                         st(D, a / b, {i}), st(M, a % b, {i})}));
    PrimFunc f("int_div", {A, B, Q, R, D, M}, body);
    std::mt19937 rng(14);
    std::uniform_int_distribution<int64_t> dist(-50, 50);
    std::vector<int64_t> av(N), bv(N);
    for (int64_t k = 0; k < N; ++k) {
        av[k] = dist(rng);
        do bv[k] = dist(rng) / 5;
        while (bv[k] == 0);
    }
    std::vector<int64_t> q(N), r(N), d(N), m(N);
    run_jit(f, {av.data(), bv.data(), q.data(), r.data(), d.data(), m.data()});
    for (int64_t k = 0; k < N; ++k) {
        int64_t fq = av[k] / bv[k];
        if ((av[k] % bv[k] != 0) && ((av[k] < 0) != (bv[k] < 0))) --fq;
        EXPECT_EQ(q[k], fq) << av[k] << " // " << bv[k];
        EXPECT_EQ(r[k], av[k] - fq * bv[k]) << av[k] << " % " << bv[k];
        EXPECT_EQ(d[k], av[k] / bv[k]);
        EXPECT_EQ(m[k], av[k] % bv[k]);
    }
    std::vector<int64_t> iq(N), ir(N), id(N), im(N);
    interpret(f, {av.data(), bv.data(), iq.data(), ir.data(), id.data(), im.data()});
    EXPECT_EQ(q, iq);
    EXPECT_EQ(r, ir);
}

TEST(LlvmCodegen, Int64AndBoolCasts) {
    const int64_t N = 97;
    Buffer A = float_buffer("A", {N});
    Buffer I = Buffer("I", DataType::int64(), {Expr(N)});
    Buffer Bo = Buffer("Bo", DataType::boolean(), {Expr(N)});
    Buffer F = float_buffer("F", {N});
    Buffer S = Buffer("S", DataType::int32(), {Expr(N)});
    Var i("i");
    Expr a = ld(A, {i});
    Expr as_int = cast(DataType::int64(), a * Expr(10.0f));
    Stmt body = For::make(
        i, Expr(0), Expr(N), ForKind::Serial,
        SeqStmt::make({
            st(I, as_int, {i}),
            st(Bo, a > Expr(0.0f), {i}),
            // bool -> float, int64 -> float, int64 -> int32.
            st(F, cast(DataType::float32(), ld(Bo, {i})) +
                      cast(DataType::float32(), ld(I, {i})) * Expr(0.5f), {i}),
            st(S, cast(DataType::int32(), ld(I, {i})) * cast(DataType::int32(), Expr(3)), {i}),
        }));
    PrimFunc f("casts", {A, I, Bo, F, S}, body);
    auto av = random_floats(N, 15);
    std::vector<int64_t> iv(N);
    std::vector<uint8_t> bv(N, 7);
    std::vector<float> fv(N);
    std::vector<int32_t> sv(N);
    run_jit(f, {av.data(), iv.data(), bv.data(), fv.data(), sv.data()});
    for (int64_t k = 0; k < N; ++k) {
        int64_t t = int64_t(av[k] * 10.f);
        EXPECT_EQ(iv[k], t);
        EXPECT_EQ(bv[k], av[k] > 0 ? 1 : 0);
        EXPECT_FLOAT_EQ(fv[k], (av[k] > 0 ? 1.f : 0.f) + float(t) * 0.5f);
        EXPECT_EQ(sv[k], int32_t(t) * 3);
    }
}

TEST(LlvmCodegen, BlockPredicateGuardsTailIterations) {
    // A split loop with a non-dividing factor: 3 x 4 iterations over 10 elements.
    const int64_t N = 10;
    Buffer A = float_buffer("A", {N}), B = float_buffer("B", {N});
    Var io("io"), ii("ii"), v("v");
    Expr bound = io * Expr(4) + ii;
    Stmt block = Block::make("B", {{v, Range{Expr(0), Expr(N)}, IterKind::Spatial, ""}}, {}, {},
                             Stmt(), st(B, ld(A, {v}) * Expr(3.0f), {v}));
    Stmt s = BlockRealize::make({bound}, bound < Expr(N), block);
    s = For::make(io, Expr(0), Expr(3), ForKind::Serial,
                  For::make(ii, Expr(0), Expr(4), ForKind::Serial, s));
    PrimFunc f("pred", {A, B}, root_block(s));
    auto a = random_floats(N, 16);
    std::vector<float> b(N + 2, 42.f);  // guard elements past the end must stay
    run_jit(f, {a.data(), b.data()});
    for (int64_t k = 0; k < N; ++k) EXPECT_FLOAT_EQ(b[k], a[k] * 3.f);
    EXPECT_EQ(b[N], 42.f);
    EXPECT_EQ(b[N + 1], 42.f);
}

}  // namespace
}  // namespace tessera::test
