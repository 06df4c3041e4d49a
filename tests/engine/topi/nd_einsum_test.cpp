// nn.conv3d, nn.max_pool3d, nn.avg_pool3d and einsum vs naive loops.
#include <limits>

#include "tests/engine/topi/topi_test_util.h"

namespace tessera::topi::testing {
namespace {

struct Win3 {
    Shape k, s{1, 1, 1}, d{1, 1, 1}, p{0, 0, 0, 0, 0, 0};
};

/// Calls f(input index, inside) for window offset (a, b, c) of output (z, y, x).
int64_t in_pos(const Win3& w, int dim, int64_t o, int64_t r) {
    return o * w.s[size_t(dim)] + r * w.d[size_t(dim)] - w.p[size_t(dim)];
}

TEST(Conv3d, GroupsPadStrideDilationBias) {
    const Shape xs = {2, 4, 5, 6, 7}, ws = {6, 2, 2, 3, 2};
    const int64_t groups = 2;
    Win3 w{{2, 3, 2}, {1, 2, 1}, {2, 1, 1}, {1, 0, 1, 0, 1, 1}};
    Shape os = {2, 6, 0, 0, 0};
    for (int dim = 0; dim < 3; ++dim)
        os[size_t(dim + 2)] = (xs[size_t(dim + 2)] + w.p[size_t(dim)] + w.p[size_t(dim + 3)] -
                               w.d[size_t(dim)] * (w.k[size_t(dim)] - 1) - 1) /
                                  w.s[size_t(dim)] +
                              1;
    OneNode t("nn.conv3d", {xs, ws, {6}}, os,
              {{"strides", w.s}, {"padding", w.p}, {"dilation", w.d}, {"groups", groups}});
    Data x = random_data(xs, 1), wt = random_data(ws, 2), b = random_data({6}, 3);
    Data expected(size_t(numel(os)));
    size_t o = 0;
    for (int64_t n = 0; n < os[0]; ++n)
        for (int64_t k = 0; k < os[1]; ++k)
            for (int64_t z = 0; z < os[2]; ++z)
                for (int64_t y = 0; y < os[3]; ++y)
                    for (int64_t xx = 0; xx < os[4]; ++xx, ++o) {
                        double acc = b[size_t(k)];
                        int64_t g = k / (os[1] / groups);
                        for (int64_t c = 0; c < ws[1]; ++c)
                            for (int64_t a = 0; a < ws[2]; ++a)
                                for (int64_t bb = 0; bb < ws[3]; ++bb)
                                    for (int64_t cc = 0; cc < ws[4]; ++cc) {
                                        int64_t iz = in_pos(w, 0, z, a), iy = in_pos(w, 1, y, bb),
                                                ix = in_pos(w, 2, xx, cc);
                                        if (iz < 0 || iz >= xs[2] || iy < 0 || iy >= xs[3] ||
                                            ix < 0 || ix >= xs[4])
                                            continue;
                                        int64_t ci = g * ws[1] + c;
                                        acc += x[size_t(
                                                   (((n * xs[1] + ci) * xs[2] + iz) * xs[3] + iy) *
                                                       xs[4] +
                                                   ix)] *
                                               wt[size_t((((k * ws[1] + c) * ws[2] + a) * ws[3] +
                                                          bb) *
                                                             ws[4] +
                                                         cc)];
                                    }
                        expected[o] = float(acc);
                    }
    expect_close(t.run({x, wt, b}), expected);
}

void check_pool3d(const std::string& op, bool include_pad) {
    const Shape xs = {1, 3, 5, 6, 4};
    Win3 w{{2, 3, 2}, {2, 2, 1}, {1, 1, 2}, {1, 1, 0, 0, 1, 1}};
    Shape os = {1, 3, 3, 3, 3};  // (5+1-2)/2+1, (6+2-3)/2+1, (4+1-2-1)/1+1
    OneNode t(op, {xs}, os,
              {{"kernel", w.k},
               {"strides", w.s},
               {"padding", w.p},
               {"dilation", w.d},
               {"count_include_pad", int64_t(include_pad)}});
    Data x = random_data(xs, 7);
    Data expected(size_t(numel(os)));
    size_t o = 0;
    for (int64_t c = 0; c < os[1]; ++c)
        for (int64_t z = 0; z < os[2]; ++z)
            for (int64_t y = 0; y < os[3]; ++y)
                for (int64_t xx = 0; xx < os[4]; ++xx, ++o) {
                    float m = -std::numeric_limits<float>::infinity();
                    double sum = 0;
                    int64_t count = 0;
                    for (int64_t a = 0; a < w.k[0]; ++a)
                        for (int64_t bb = 0; bb < w.k[1]; ++bb)
                            for (int64_t cc = 0; cc < w.k[2]; ++cc) {
                                int64_t iz = in_pos(w, 0, z, a), iy = in_pos(w, 1, y, bb),
                                        ix = in_pos(w, 2, xx, cc);
                                bool in = iz >= 0 && iz < xs[2] && iy >= 0 && iy < xs[3] &&
                                          ix >= 0 && ix < xs[4];
                                bool in_padded = iz >= -w.p[0] && iz < xs[2] + w.p[3] &&
                                                 iy >= -w.p[1] && iy < xs[3] + w.p[4] &&
                                                 ix >= -w.p[2] && ix < xs[4] + w.p[5];
                                if (include_pad ? in_padded : in) ++count;
                                if (!in) continue;
                                float v = x[size_t(((c * xs[2] + iz) * xs[3] + iy) * xs[4] + ix)];
                                m = std::max(m, v);
                                sum += v;
                            }
                    expected[o] = op == "nn.max_pool3d" ? m : float(sum / double(count));
                }
    expect_close(t.run({x}), expected);
}

TEST(Pool3d, MaxPadStrideDilation) { check_pool3d("nn.max_pool3d", false); }
TEST(Pool3d, AvgExcludePad) { check_pool3d("nn.avg_pool3d", false); }
TEST(Pool3d, AvgIncludePad) { check_pool3d("nn.avg_pool3d", true); }

TEST(Einsum, BatchMatmulWithTranspose) {
    // "bji,bjk->bik": a contraction over j with the first operand transposed.
    const int64_t B = 2, I = 3, J = 4, K = 5;
    OneNode t("einsum", {{B, J, I}, {B, J, K}}, {B, I, K}, {{"equation", std::string("bji,bjk->bik")}});
    Data a = random_data({B, J, I}, 11), b = random_data({B, J, K}, 12);
    Data expected(size_t(B * I * K));
    for (int64_t bb = 0; bb < B; ++bb)
        for (int64_t i = 0; i < I; ++i)
            for (int64_t k = 0; k < K; ++k) {
                double acc = 0;
                for (int64_t j = 0; j < J; ++j)
                    acc += a[size_t((bb * J + j) * I + i)] * b[size_t((bb * J + j) * K + k)];
                expected[size_t((bb * I + i) * K + k)] = float(acc);
            }
    expect_close(t.run({a, b}), expected);
}

TEST(Einsum, DiagonalAndSumOverAxis) {
    // "iij->j": the diagonal of the first two axes, summed.
    const int64_t I = 4, J = 3;
    OneNode t("einsum", {{I, I, J}}, {J}, {{"equation", std::string("iij->j")}});
    Data a = random_data({I, I, J}, 13);
    Data expected(size_t(J), 0.0f);
    for (int64_t j = 0; j < J; ++j)
        for (int64_t i = 0; i < I; ++i) expected[size_t(j)] += a[size_t((i * I + i) * J + j)];
    expect_close(t.run({a}), expected);
}

TEST(Einsum, OuterProductHasNoReduction) {
    OneNode t("einsum", {{3}, {4}}, {4, 3}, {{"equation", std::string("i,j->ji")}});
    Data a = random_data({3}, 14), b = random_data({4}, 15);
    Data expected;
    for (int64_t j = 0; j < 4; ++j)
        for (int64_t i = 0; i < 3; ++i) expected.push_back(a[size_t(i)] * b[size_t(j)]);
    expect_close(t.run({a, b}), expected);
}

TEST(Einsum, MismatchedLabelExtentIsUserError) {
    OneNode t("einsum", {{3, 4}, {5, 6}}, {3, 6}, {{"equation", std::string("ij,jk->ik")}});
    EXPECT_THROW(graph::verify(t.g), UserError);
}

}  // namespace
}  // namespace tessera::topi::testing
