// The loop-IR interpreter against naive C++ loops on random non-zero data.
#include "engine/tir/interpreter.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "engine/core/error.h"
#include "engine/te/tensor.h"
#include "engine/tir/op.h"
#include "engine/tir/verify.h"

namespace tessera::tir {
namespace {

// Uniform in +-[0.5, 1.5]: never zero.
std::vector<float> random_data(size_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> mag(0.5f, 1.5f);
    std::bernoulli_distribution sign(0.5);
    std::vector<float> v(n);
    for (float& x : v) x = sign(rng) ? mag(rng) : -mag(rng);
    return v;
}

void expect_near(const std::vector<float>& got, const std::vector<float>& want, float tol = 1e-5f) {
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i)
        ASSERT_NEAR(got[i], want[i], tol * (1 + std::fabs(want[i]))) << "at element " << i;
}

TEST(Interpreter, MatmulMatchesNaiveLoops) {
    const int M = 5, N = 7, K = 6;
    te::Tensor A = te::placeholder({M, K}, DataType::float32(), "A");
    te::Tensor B = te::placeholder({K, N}, DataType::float32(), "B");
    IterVar k = te::reduce_axis(K, "k");
    te::Tensor C = te::compute(
        {M, N},
        [&](const std::vector<Var>& i) { return te::sum(A(i[0], k.var) * B(k.var, i[1]), {k}); },
        "C");
    PrimFunc f = te::create_prim_func({A, B, C}, "matmul");
    verify(f);
    std::vector<float> a = random_data(M * K, 1), b = random_data(K * N, 2), c(M * N, 123.0f);
    interpret(f, {a.data(), b.data(), c.data()});
    std::vector<float> want(M * N, 0.0f);
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j)
            for (int kk = 0; kk < K; ++kk) want[i * N + j] += a[i * K + kk] * b[kk * N + j];
    expect_near(c, want);
}

TEST(Interpreter, TwoStageExpThenSum) {
    const int R = 3, L = 9;
    te::Tensor A = te::placeholder({R, L}, DataType::float32(), "A");
    te::Tensor E = te::compute(
        {R, L}, [&](const std::vector<Var>& i) { return exp(A(i[0], i[1])); }, "E");
    IterVar k = te::reduce_axis(L, "k");
    te::Tensor S = te::compute(
        {R}, [&](const std::vector<Var>& i) { return te::sum(E(i[0], k.var), {k}); }, "S");
    te::Tensor O = te::compute(
        {R, L}, [&](const std::vector<Var>& i) { return E(i[0], i[1]) / S(i[0]); }, "O");
    PrimFunc f = te::create_prim_func({A, O}, "softmax");
    verify(f);
    std::vector<float> a = random_data(R * L, 3), o(R * L, 0.0f);
    interpret(f, {a.data(), o.data()});
    std::vector<float> want(R * L);
    for (int r = 0; r < R; ++r) {
        float s = 0;
        for (int l = 0; l < L; ++l) s += std::exp(a[r * L + l]);
        for (int l = 0; l < L; ++l) want[r * L + l] = std::exp(a[r * L + l]) / s;
    }
    expect_near(o, want);
}

TEST(Interpreter, PaddedConvolutionWithIfThenElse) {
    const int H = 6, W = 5, KH = 3, KW = 3;
    te::Tensor I = te::placeholder({H, W}, DataType::float32(), "I");
    te::Tensor Wt = te::placeholder({KH, KW}, DataType::float32(), "W");
    IterVar r = te::reduce_axis(KH, "r"), s = te::reduce_axis(KW, "s");
    te::Tensor O = te::compute(
        {H, W},
        [&](const std::vector<Var>& i) {
            Expr y = i[0] + r.var - 1, x = i[1] + s.var - 1;
            Expr inside = y >= 0 && y < H && x >= 0 && x < W;
            return te::sum(if_then_else(inside, I(y, x), 0.0) * Wt(r.var, s.var), {r, s});
        },
        "O");
    PrimFunc f = te::create_prim_func({I, Wt, O}, "conv");
    verify(f);
    std::vector<float> in = random_data(H * W, 4), w = random_data(KH * KW, 5), o(H * W, 7.0f);
    interpret(f, {in.data(), w.data(), o.data()});
    std::vector<float> want(H * W, 0.0f);
    for (int y = 0; y < H; ++y)
        for (int x = 0; x < W; ++x)
            for (int a = 0; a < KH; ++a)
                for (int b = 0; b < KW; ++b) {
                    int yy = y + a - 1, xx = x + b - 1;
                    if (yy >= 0 && yy < H && xx >= 0 && xx < W)
                        want[y * W + x] += in[yy * W + xx] * w[a * KW + b];
                }
    expect_near(o, want);
}

TEST(Interpreter, VectorRampAndBroadcast) {
    // for i in 0..4: B[ramp(i*8, 1, 8)] = A[ramp(i*8, 1, 8)] * bcast(2) + bcast(i)
    Buffer A("A", DataType::float32(), {Expr(32)}), B("B", DataType::float32(), {Expr(4), Expr(8)});
    Var i("i");
    Expr idx = Ramp::make(i * 8, Expr(1), 8);
    Expr value = BufferLoad::make(A, {idx}) * Broadcast::make(Expr(2.0), 8) +
                 Broadcast::make(cast(DataType::float32(), i), 8);
    Stmt body = For::make(i, Expr(0), Expr(4), ForKind::Serial, BufferStore::make(B, value, {idx}));
    PrimFunc f("vec", {A, B}, body);
    verify(f);
    std::vector<float> a = random_data(32, 6), b(32, 0.0f);
    interpret(f, {a.data(), b.data()});
    std::vector<float> want(32);
    for (int x = 0; x < 32; ++x) want[x] = a[x] * 2.0f + float(x / 8);
    expect_near(b, want);
}

TEST(Interpreter, IntegerDivisionSemantics) {
    Buffer A("A", DataType::int64(), {Expr(8)}), O("O", DataType::int64(), {Expr(4), Expr(8)});
    Var i("i");
    Expr a = BufferLoad::make(A, {i});
    Stmt s = SeqStmt::make({BufferStore::make(O, floordiv(a, 3), {Expr(0), i}),
                            BufferStore::make(O, floormod(a, 3), {Expr(1), i}),
                            BufferStore::make(O, a / 3, {Expr(2), i}),
                            BufferStore::make(O, a % -3, {Expr(3), i})});
    PrimFunc f("divs", {A, O}, For::make(i, Expr(0), Expr(8), ForKind::Serial, s));
    std::vector<int64_t> in{-7, -6, -5, -1, 1, 5, 6, 7}, out(32, 0);
    interpret(f, {in.data(), out.data()});
    for (int x = 0; x < 8; ++x) {
        int64_t v = in[x];
        int64_t fd = v / 3 - ((v % 3 != 0) && (v < 0) ? 1 : 0);
        EXPECT_EQ(out[0 * 8 + x], fd) << v;
        EXPECT_EQ(out[1 * 8 + x], v - fd * 3) << v;
        EXPECT_EQ(out[2 * 8 + x], v / 3) << v;
        EXPECT_EQ(out[3 * 8 + x], v % -3) << v;
    }
}

TEST(Interpreter, AllocateLetAndFlattenedAccess) {
    // T[j] = A[i, j] * x (x = 3 via LetStmt), then B[i*4 + j] (flat) = T[j] + T[3 - j].
    Buffer A("A", DataType::float32(), {Expr(2), Expr(4)}),
        B("B", DataType::float32(), {Expr(2), Expr(4)});
    Buffer T("T", DataType::float32(), {Expr(4)});
    Var i("i"), j("j"), j2("j"), x("x", DataType::float32());
    Stmt fill = For::make(j, Expr(0), Expr(4), ForKind::Serial,
                          BufferStore::make(T, BufferLoad::make(A, {i, j}) * x, {j}));
    Stmt use =
        For::make(j2, Expr(0), Expr(4), ForKind::Unrolled,
                  BufferStore::make(B, BufferLoad::make(T, {j2}) + BufferLoad::make(T, {3 - j2}),
                                    {i * 4 + j2}));
    Stmt body =
        For::make(i, Expr(0), Expr(2), ForKind::Parallel,
                  Allocate::make(T, LetStmt::make(x, Expr(3.0), SeqStmt::make({fill, use}))));
    PrimFunc f("alloc", {A, B}, body);
    verify(f);
    std::vector<float> a = random_data(8, 7), b(8, 0.0f);
    interpret(f, {a.data(), b.data()});
    std::vector<float> want(8);
    for (int r = 0; r < 2; ++r)
        for (int c = 0; c < 4; ++c) want[r * 4 + c] = a[r * 4 + c] * 3.0f + a[r * 4 + 3 - c] * 3.0f;
    expect_near(b, want);
}

TEST(Interpreter, OutOfBoundsAccessThrows) {
    Buffer A("A", DataType::float32(), {Expr(4)}), B("B", DataType::float32(), {Expr(4)});
    Var i("i");
    Stmt s = For::make(i, Expr(0), Expr(4), ForKind::Serial,
                       BufferStore::make(B, BufferLoad::make(A, {i + 1}), {i}));
    PrimFunc f("oob", {A, B}, s);
    std::vector<float> a(4, 1.0f), b(4, 0.0f);
    try {
        interpret(f, {a.data(), b.data()});
        FAIL() << "expected an out-of-bounds error";
    } catch (const InternalError& e) {
        EXPECT_NE(std::string(e.what()).find("buffer A"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("index 4"), std::string::npos) << e.what();
    }
}

TEST(Interpreter, MaxReduction) {
    // O[i] = max_k A[i, k]: the init writes the lowest float, then each k updates.
    const int R = 4, L = 5;
    te::Tensor A = te::placeholder({R, L}, DataType::float32(), "A");
    IterVar k = te::reduce_axis(L, "k");
    te::Tensor O = te::compute(
        {R}, [&](const std::vector<Var>& i) { return te::max(A(i[0], k.var), {k}); }, "O");
    PrimFunc f = te::create_prim_func({A, O}, "rowmax");
    std::vector<float> a = random_data(R * L, 8), o(R, 0.0f);
    interpret(f, {a.data(), o.data()});
    for (int r = 0; r < R; ++r) {
        float m = a[r * L];
        for (int l = 1; l < L; ++l) m = std::max(m, a[r * L + l]);
        EXPECT_EQ(o[r], m);
    }
}

TEST(Interpreter, NarrowIntegerAndBoolTypes) {
    // I32[i] = A32[i] * 65536 (wraps), U8[i] = uint8(F[i] * 100), Bo[i] = F[i] > 0.
    Buffer A("A", DataType::int32(), {Expr(4)}), I("I", DataType::int32(), {Expr(4)});
    Buffer F("F", DataType::float32(), {Expr(4)}), U("U", DataType::uint8(), {Expr(4)});
    Buffer Bo("Bo", DataType::boolean(), {Expr(4)});
    Var i("i");
    Expr a = BufferLoad::make(A, {i}), fl = BufferLoad::make(F, {i});
    Stmt s = SeqStmt::make({BufferStore::make(I, a * IntImm::make(DataType::int32(), 65536), {i}),
                            BufferStore::make(U, cast(DataType::uint8(), fl * 100.0), {i}),
                            BufferStore::make(Bo, fl > 0.0, {i})});
    PrimFunc f("narrow", {A, F, I, U, Bo}, For::make(i, Expr(0), Expr(4), ForKind::Serial, s));
    verify(f);
    std::vector<int32_t> a_in{3, 40000, -40000, 7}, i_out(4, 0);
    std::vector<float> f_in{1.5f, 2.9f, -0.25f, 0.75f};
    std::vector<uint8_t> u_out(4, 0), b_out(4, 9);
    interpret(f, {a_in.data(), f_in.data(), i_out.data(), u_out.data(), b_out.data()});
    for (int x = 0; x < 4; ++x) {
        EXPECT_EQ(i_out[x], int32_t(uint32_t(a_in[x]) * 65536u)) << x;
        EXPECT_EQ(u_out[x], uint8_t(int64_t(f_in[x] * 100.0f))) << x;
        EXPECT_EQ(b_out[x], f_in[x] > 0 ? 1 : 0) << x;
    }
}

TEST(Interpreter, BlockPredicateSkipsInstances) {
    Buffer A("A", DataType::float32(), {Expr(8)}), B("B", DataType::float32(), {Expr(8)});
    Var i("i"), vi("vi");
    IterVar iv{vi, Range{Expr(0), Expr(8)}, IterKind::Spatial, ""};
    Stmt block = Block::make("B", {iv}, {BufferRegion{A, {Range{vi, Expr(1)}}}},
                             {BufferRegion{B, {Range{vi, Expr(1)}}}}, Stmt(),
                             BufferStore::make(B, BufferLoad::make(A, {vi}) + 1.0, {vi}));
    Stmt s = For::make(i, Expr(0), Expr(8), ForKind::Serial, BlockRealize::make({i}, i < 5, block));
    PrimFunc f("pred", {A, B}, s);
    verify(f);
    std::vector<float> a = random_data(8, 9), b(8, 9.0f);
    interpret(f, {a.data(), b.data()});
    for (int x = 0; x < 8; ++x) EXPECT_EQ(b[x], x < 5 ? a[x] + 1.0f : 9.0f) << x;
}

}  // namespace
}  // namespace tessera::tir
