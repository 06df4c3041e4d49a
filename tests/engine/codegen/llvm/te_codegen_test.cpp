// te::compute definitions lowered by create_prim_func, JIT-compiled and
// checked against naive loops and the loop-IR interpreter.
#include "engine/te/tensor.h"
#include "engine/tir/printer.h"
#include "tests/engine/codegen/llvm/codegen_test_util.h"

namespace tessera::test {
namespace {

namespace te = tessera::te;

TEST(TeCodegen, MatmulFromCompute) {
    const int64_t M = 12, N = 10, K = 14;
    te::Tensor A = te::placeholder({M, K}, DataType::float32(), "A");
    te::Tensor B = te::placeholder({K, N}, DataType::float32(), "B");
    IterVar k = te::reduce_axis(K, "k");
    te::Tensor C = te::compute(
        {M, N}, [&](const std::vector<Var>& i) { return te::sum(A(i[0], k.var) * B(k.var, i[1]), {k}); },
        "C");
    PrimFunc f = te::create_prim_func({A, B, C}, "te_matmul");
    auto a = random_floats(M * K, 40), b = random_floats(K * N, 41);
    std::vector<float> c(M * N, 5.f), want(M * N, 0.f), interp(M * N, 5.f);
    run_jit(f, {a.data(), b.data(), c.data()});
    for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j)
            for (int64_t kk = 0; kk < K; ++kk) want[i * N + j] += a[i * K + kk] * b[kk * N + j];
    expect_close(c, want, 1e-5, "jit\n" + print(f));
    interpret(f, {a.data(), b.data(), interp.data()});
    expect_close(c, interp, 1e-5, "interpreter");
}

TEST(TeCodegen, PaddedConvWithIntermediateStage) {
    // pad (an intermediate stage, allocated by the function) then a 3x3 conv.
    const int64_t H = 8, W = 9, P = 1;
    te::Tensor X = te::placeholder({H, W}, DataType::float32(), "X");
    te::Tensor Wt = te::placeholder({3, 3}, DataType::float32(), "Wt");
    te::Tensor Pad = te::compute(
        {H + 2 * P, W + 2 * P},
        [&](const std::vector<Var>& i) {
            Expr y = i[0] - P, x = i[1] - P;
            return if_then_else(y >= 0 && y < H && x >= 0 && x < W, X(y, x), Expr(0.0f));
        },
        "Pad");
    IterVar r = te::reduce_axis(3, "r"), s = te::reduce_axis(3, "s");
    te::Tensor Y = te::compute(
        {H, W},
        [&](const std::vector<Var>& i) {
            return te::sum(Pad(i[0] + r.var, i[1] + s.var) * Wt(r.var, s.var), {r, s});
        },
        "Y");
    PrimFunc f = te::create_prim_func({X, Wt, Y}, "te_conv");
    auto x = random_floats(H * W, 42), w = random_floats(9, 43);
    std::vector<float> y(H * W, 0.f), want(H * W, 0.f), interp(H * W, 0.f);
    run_jit(f, {x.data(), w.data(), y.data()});
    for (int64_t i = 0; i < H; ++i)
        for (int64_t j = 0; j < W; ++j)
            for (int64_t rr = 0; rr < 3; ++rr)
                for (int64_t ss = 0; ss < 3; ++ss) {
                    int64_t yy = i + rr - P, xx = j + ss - P;
                    if (yy >= 0 && yy < H && xx >= 0 && xx < W)
                        want[i * W + j] += x[yy * W + xx] * w[rr * 3 + ss];
                }
    expect_close(y, want, 1e-5, "jit\n" + print(f));
    interpret(f, {x.data(), w.data(), interp.data()});
    expect_close(y, interp, 1e-5, "interpreter");
}

TEST(TeCodegen, SoftmaxLikeMaxExpSum) {
    const int64_t M = 5, N = 21;
    te::Tensor A = te::placeholder({M, N}, DataType::float32(), "A");
    IterVar k1 = te::reduce_axis(N, "k1");
    te::Tensor Mx = te::compute(
        {M}, [&](const std::vector<Var>& i) { return te::max(A(i[0], k1.var), {k1}); }, "Mx");
    te::Tensor E = te::compute(
        {M, N}, [&](const std::vector<Var>& i) { return exp(A(i[0], i[1]) - Mx(i[0])); }, "E");
    IterVar k2 = te::reduce_axis(N, "k2");
    te::Tensor S = te::compute(
        {M}, [&](const std::vector<Var>& i) { return te::sum(E(i[0], k2.var), {k2}); }, "S");
    te::Tensor O = te::compute(
        {M, N}, [&](const std::vector<Var>& i) { return E(i[0], i[1]) / S(i[0]); }, "O");
    PrimFunc f = te::create_prim_func({A, O}, "te_softmax");
    auto a = random_floats(M * N, 44, -4.f, 4.f);
    std::vector<float> o(M * N, 0.f), want(M * N), interp(M * N, 0.f);
    run_jit(f, {a.data(), o.data()});
    for (int64_t i = 0; i < M; ++i) {
        float mx = -1e30f, sum = 0.f;
        for (int64_t j = 0; j < N; ++j) mx = std::max(mx, a[i * N + j]);
        for (int64_t j = 0; j < N; ++j) sum += std::exp(a[i * N + j] - mx);
        for (int64_t j = 0; j < N; ++j) want[i * N + j] = std::exp(a[i * N + j] - mx) / sum;
    }
    expect_close(o, want, 1e-5, "jit\n" + print(f));
    interpret(f, {a.data(), interp.data()});
    expect_close(o, interp, 1e-5, "interpreter");
}

}  // namespace
}  // namespace tessera::test
