// nn.softmax (single axis and the coerce form) and reshape vs naive
// references.
#include <cmath>

#include "tests/engine/topi/topi_test_util.h"

namespace tessera::topi::testing {
namespace {

/// Softmax over dims [first, last) of a row-major tensor of shape s.
Data reference_softmax(const Data& x, const Shape& s, size_t first, size_t last) {
    int64_t outer = 1, red = 1, inner = 1;
    for (size_t d = 0; d < s.size(); ++d) (d < first ? outer : d < last ? red : inner) *= s[d];
    Data y(x.size());
    for (int64_t o = 0; o < outer; ++o)
        for (int64_t in = 0; in < inner; ++in) {
            auto at = [&](int64_t r) { return size_t((o * red + r) * inner + in); };
            double m = -INFINITY, sum = 0;
            for (int64_t r = 0; r < red; ++r) m = std::max(m, double(x[at(r)]));
            for (int64_t r = 0; r < red; ++r) sum += std::exp(x[at(r)] - m);
            for (int64_t r = 0; r < red; ++r) y[at(r)] = float(std::exp(x[at(r)] - m) / sum);
        }
    return y;
}

TEST(Softmax, Axis1) {
    Shape s = {2, 5, 3};
    OneNode t("nn.softmax", {s}, s, {{"axis", int64_t(1)}});
    Data x = random_data(s, 41);
    for (float& v : x) v *= 30.0f;  // large values: needs the max subtraction
    expect_close(t.run({x}), reference_softmax(x, s, 1, 2));
}

TEST(Softmax, LastAxis) {
    Shape s = {3, 7};
    OneNode t("nn.softmax", {s}, s, {{"axis", int64_t(1)}});
    Data x = random_data(s, 42);
    expect_close(t.run({x}), reference_softmax(x, s, 1, 2));
}

TEST(Softmax, CoerceReducesTrailingDims) {
    Shape s = {2, 3, 4};
    OneNode t("nn.softmax", {s}, s, {{"axis", int64_t(1)}, {"coerce", int64_t(1)}});
    Data x = random_data(s, 43);
    Data got = t.run({x});
    expect_close(got, reference_softmax(x, s, 1, 3));
    double total = 0;
    for (size_t i = 0; i < 12; ++i) total += got[i];
    EXPECT_NEAR(total, 1.0, 1e-5);
}

TEST(Softmax, CoerceAxis0IsWholeTensor) {
    Shape s = {3, 4};
    OneNode t("nn.softmax", {s}, s, {{"axis", int64_t(0)}, {"coerce", int64_t(1)}});
    Data x = random_data(s, 44);
    expect_close(t.run({x}), reference_softmax(x, s, 0, 2));
}

TEST(Reshape, Flatten) {
    // Row-major reshape keeps the element order: the reference is the identity.
    Shape in = {2, 3, 2, 2};
    OneNode t("reshape", {in}, {2, 12}, {{"newshape", std::vector<int64_t>{2, 12}}});
    Data x = random_data(in, 45);
    expect_close(t.run({x}), x);
}

TEST(Reshape, SplitAndMerge) {
    Shape in = {4, 6};
    OneNode t("reshape", {in}, {2, 1, 3, 4}, {{"newshape", std::vector<int64_t>{2, 1, 3, 4}}});
    Data x = random_data(in, 46);
    expect_close(t.run({x}), x);
}

TEST(Reshape, IndexMappingIsRowMajor) {
    // Checks the index expressions themselves with distinct values per element.
    Shape in = {3, 1, 4};
    OneNode t("reshape", {in}, {6, 2}, {{"newshape", std::vector<int64_t>{6, 2}}});
    Data x(12);
    for (size_t i = 0; i < 12; ++i) x[i] = float(i) + 0.5f;
    expect_close(t.run({x}), x);
}

TEST(Reshape, ElementCountMismatchIsUserError) {
    graph::Node n;
    n.op = "reshape";
    n.name = "r";
    auto p = te::placeholder({2, 3}, tir::DataType::float32(), "p");
    EXPECT_THROW(compute_node(n, {p}, {{graph::DType::Float32, {4, 2}}}), UserError);
}

}  // namespace
}  // namespace tessera::topi::testing
