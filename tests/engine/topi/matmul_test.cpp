// nn.matmul (2-D, batched with broadcast, 1-D operands) and nn.gemm
// (transA/transB, alpha/beta, broadcast C) vs naive references.
#include "tests/engine/topi/topi_test_util.h"

namespace tessera::topi::testing {
namespace {

/// Batched row-major matmul: a is (batch_a..., M, K), b is (batch_b..., K, N);
/// batches broadcast numpy-style over `batch` (both right-aligned).
Data reference_batched(const Data& a, const Shape& ba, const Data& b, const Shape& bb,
                       const Shape& batch, int64_t M, int64_t K, int64_t N) {
    int64_t nb = numel(batch);
    Data out(size_t(nb * M * N));
    for (int64_t t = 0; t < nb; ++t) {
        // Decompose t over `batch` and recompose over each operand's batch.
        auto offset = [&](const Shape& s) {
            int64_t rem = t, off = 0, stride = 1;
            for (size_t d = batch.size(); d-- > 0;) {
                int64_t i = rem % batch[d];
                rem /= batch[d];
                int64_t sd = int64_t(d) - int64_t(batch.size() - s.size());
                if (sd >= 0) {
                    off += (s[size_t(sd)] == 1 ? 0 : i) * stride;
                    stride *= s[size_t(sd)];
                }
            }
            return off;
        };
        int64_t oa = offset(ba), ob = offset(bb);
        for (int64_t i = 0; i < M; ++i)
            for (int64_t j = 0; j < N; ++j) {
                double acc = 0;
                for (int64_t k = 0; k < K; ++k)
                    acc +=
                        double(a[size_t((oa * M + i) * K + k)]) * b[size_t((ob * K + k) * N + j)];
                out[size_t((t * M + i) * N + j)] = float(acc);
            }
    }
    return out;
}

TEST(Matmul, TwoD) {
    OneNode t("nn.matmul", {{5, 7}, {7, 3}}, {5, 3});
    Data a = random_data({5, 7}, 1), b = random_data({7, 3}, 2);
    expect_close(t.run({a, b}), reference_batched(a, {}, b, {}, {}, 5, 7, 3));
}

TEST(Matmul, BatchedBroadcast) {
    // (2, 1, 4, 6) x (3, 6, 5) -> (2, 3, 4, 5)
    OneNode t("nn.matmul", {{2, 1, 4, 6}, {3, 6, 5}}, {2, 3, 4, 5});
    Data a = random_data({2, 1, 4, 6}, 3), b = random_data({3, 6, 5}, 4);
    expect_close(t.run({a, b}), reference_batched(a, {2, 1}, b, {3}, {2, 3}, 4, 6, 5));
}

TEST(Matmul, BatchedTimesMatrix) {
    OneNode t("nn.matmul", {{3, 4, 6}, {6, 2}}, {3, 4, 2});
    Data a = random_data({3, 4, 6}, 5), b = random_data({6, 2}, 6);
    expect_close(t.run({a, b}), reference_batched(a, {3}, b, {}, {3}, 4, 6, 2));
}

TEST(Matmul, VectorTimesMatrix) {
    OneNode t("nn.matmul", {{6}, {6, 4}}, {4});
    Data a = random_data({6}, 7), b = random_data({6, 4}, 8);
    expect_close(t.run({a, b}), reference_batched(a, {}, b, {}, {}, 1, 6, 4));
}

TEST(Matmul, BatchedMatrixTimesVector) {
    OneNode t("nn.matmul", {{2, 3, 5}, {5}}, {2, 3});
    Data a = random_data({2, 3, 5}, 9), b = random_data({5}, 10);
    expect_close(t.run({a, b}), reference_batched(a, {2}, b, {}, {2}, 3, 5, 1));
}

TEST(Matmul, VectorDotVectorIsScalar) {
    OneNode t("nn.matmul", {{6}, {6}}, {});
    Data a = random_data({6}, 14), b = random_data({6}, 15);
    expect_close(t.run({a, b}), reference_batched(a, {}, b, {}, {}, 1, 6, 1));
}

TEST(Matmul, InnerMismatchIsUserError) {
    OneNode t("nn.matmul", {{2, 3}, {4, 5}}, {2, 5});
    std::vector<te::Tensor> ins = {te::placeholder({2, 3}, tir::DataType::float32(), "a"),
                                   te::placeholder({4, 5}, tir::DataType::float32(), "b")};
    EXPECT_THROW(compute_node(t.g.nodes[0], ins, {t.g.values[2].type}), UserError);
}

struct GemmCase {
    bool ta, tb;
    double alpha, beta;
    Shape c;  // empty: no C
    bool has_c;
};

void check_gemm(const GemmCase& p) {
    const int64_t M = 4, K = 5, N = 3;
    Shape sa = p.ta ? Shape{K, M} : Shape{M, K};
    Shape sb = p.tb ? Shape{N, K} : Shape{K, N};
    std::vector<Shape> ins = {sa, sb};
    if (p.has_c) ins.push_back(p.c);
    OneNode t("nn.gemm", ins, {M, N},
              {{"alpha", p.alpha},
               {"beta", p.beta},
               {"transA", int64_t(p.ta)},
               {"transB", int64_t(p.tb)}});
    Data a = random_data(sa, 11), b = random_data(sb, 12), c = random_data(p.c, 13);
    Data expected(size_t(M * N));
    for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) {
            double acc = 0;
            for (int64_t k = 0; k < K; ++k) {
                double av = p.ta ? a[size_t(k * M + i)] : a[size_t(i * K + k)];
                double bv = p.tb ? b[size_t(j * K + k)] : b[size_t(k * N + j)];
                acc += av * bv;
            }
            double v = p.alpha * acc;
            if (p.has_c) {
                size_t r = p.c.size();
                int64_t ci = r == 2 && p.c[0] != 1 ? i : 0;
                int64_t cj = r >= 1 && p.c[r - 1] != 1 ? j : 0;
                int64_t cols = r >= 1 ? p.c[r - 1] : 1;
                v += p.beta * c[size_t(ci * cols + cj)];
            }
            expected[size_t(i * N + j)] = float(v);
        }
    std::vector<Data> args = {a, b};
    if (p.has_c) args.push_back(c);
    expect_close(t.run(args), expected);
}

TEST(Gemm, Plain) { check_gemm({false, false, 1.0, 1.0, {}, false}); }
TEST(Gemm, TransAAlpha) { check_gemm({true, false, 0.5, 1.0, {}, false}); }
TEST(Gemm, TransBFullC) { check_gemm({false, true, 1.0, 1.0, {4, 3}, true}); }
TEST(Gemm, BothTransposedRowBroadcastC) { check_gemm({true, true, 2.0, 0.25, {3}, true}); }
TEST(Gemm, ColumnBroadcastC) { check_gemm({false, true, 1.5, -1.0, {4, 1}, true}); }
TEST(Gemm, ScalarC) { check_gemm({false, false, 1.0, 3.0, {1}, true}); }

}  // namespace
}  // namespace tessera::topi::testing
