// NDArray storage, random data and the comparison helpers.
#include "engine/runtime/ndarray.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#include "engine/core/error.h"

namespace tessera::runtime {
namespace {

TensorType f32(std::vector<int64_t> shape) { return TensorType{DType::Float32, std::move(shape)}; }

TEST(NDArray, EmptyIsAlignedAndZeroFilled) {
    for (auto shape :
         std::vector<std::vector<int64_t>>{{1}, {3, 5}, {2, 3, 7}, {1, 64, 9, 9}, {0}}) {
        NDArray a = NDArray::empty(f32(shape));
        ASSERT_TRUE(a.defined());
        EXPECT_EQ(reinterpret_cast<uintptr_t>(a.raw()) % 64, 0u);
        EXPECT_EQ(a.num_bytes(), size_t(a.num_elements()) * 4);
        for (int64_t i = 0; i < a.num_elements(); ++i) ASSERT_EQ(a.data<float>()[i], 0.0f);
    }
    NDArray b = NDArray::empty(TensorType{DType::Int64, {3, 3}});
    EXPECT_EQ(reinterpret_cast<uintptr_t>(b.raw()) % 64, 0u);
    for (int64_t i = 0; i < 9; ++i) EXPECT_EQ(b.data<int64_t>()[i], 0);
}

TEST(NDArray, FromBytesCopiesAndChecksSize) {
    float src[6] = {1, -2, 3, -4, 5, -6};
    NDArray a = NDArray::from_bytes(f32({2, 3}), src, sizeof src);
    src[0] = 100;
    EXPECT_EQ(a.data<float>()[0], 1.0f);
    EXPECT_EQ(a.data<float>()[5], -6.0f);
    EXPECT_THROW(NDArray::from_bytes(f32({2, 2}), src, sizeof src), UserError);
}

TEST(NDArray, CopyIsDeepAndReshapedSharesData) {
    NDArray a = random_ndarray(f32({2, 6}), 3);
    NDArray c = a.copy();
    NDArray r = a.reshaped({3, 4});
    EXPECT_EQ(r.shape(), (std::vector<int64_t>{3, 4}));
    a.data<float>()[0] = 42;
    EXPECT_EQ(r.data<float>()[0], 42.0f);
    EXPECT_NE(c.data<float>()[0], 42.0f);
    EXPECT_THROW(a.reshaped({5}), UserError);
}

TEST(RandomNDArray, NonZeroBothSignsAndSeeded) {
    NDArray a = random_ndarray(f32({1000}), 7);
    int neg = 0;
    for (int64_t i = 0; i < a.num_elements(); ++i) {
        float v = a.data<float>()[i];
        ASSERT_GE(std::fabs(v), 0.1f);
        ASSERT_LE(std::fabs(v), 1.0f);
        neg += v < 0;
    }
    EXPECT_GT(neg, 300);
    EXPECT_LT(neg, 700);
    NDArray same = random_ndarray(f32({1000}), 7);
    NDArray other = random_ndarray(f32({1000}), 8);
    EXPECT_EQ(compare(a, same).max_abs, 0.0);
    EXPECT_GT(compare(a, other).max_abs, 0.1);
}

TEST(Compare, ReportsMaxAbsAndRel) {
    float e[4] = {1, -2, 0.5f, 4};
    float x[4] = {1.1f, -2, 0.5f, 3.5f};
    NDArray expected = NDArray::from_bytes(f32({4}), e, sizeof e);
    NDArray actual = NDArray::from_bytes(f32({4}), x, sizeof x);
    Difference d = compare(actual, expected);
    EXPECT_NEAR(d.max_abs, 0.5, 1e-6);
    EXPECT_NEAR(d.max_rel, 0.125, 1e-6);  // 0.5 / 4 beats 0.1 / 1
    EXPECT_THROW(compare(actual, actual.reshaped({2, 2})), UserError);
}

TEST(Allclose, FollowsNumpyFormula) {
    float e[2] = {100, 1e-6f};
    NDArray expected = NDArray::from_bytes(f32({2}), e, sizeof e);
    // |a - e| <= atol + rtol * |e|: 100.09 is within 1e-5 + 1e-3 * 100.
    float ok[2] = {100.09f, 5e-6f};
    float bad[2] = {100.2f, 1e-6f};
    float bad_small[2] = {100, 3e-5f};
    EXPECT_TRUE(allclose(NDArray::from_bytes(f32({2}), ok, sizeof ok), expected, 1e-3, 1e-5));
    EXPECT_FALSE(allclose(NDArray::from_bytes(f32({2}), bad, sizeof bad), expected, 1e-3, 1e-5));
    EXPECT_FALSE(
        allclose(NDArray::from_bytes(f32({2}), bad_small, sizeof bad_small), expected, 1e-3, 1e-5));
    float nan[2] = {NAN, 1e-6f};
    EXPECT_FALSE(allclose(NDArray::from_bytes(f32({2}), nan, sizeof nan), expected, 1e-3, 1e-5));
}

}  // namespace
}  // namespace tessera::runtime
