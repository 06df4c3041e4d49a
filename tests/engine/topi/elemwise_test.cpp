// add/subtract/multiply/divide with numpy broadcasting, and nn.relu, vs a
// naive reference.
#include <functional>

#include "tests/engine/topi/topi_test_util.h"

namespace tessera::topi::testing {
namespace {

/// Reads `d` (shape s) at output multi-index `idx` of `out` with broadcasting.
float read_broadcast(const Data& d, const Shape& s, const Shape& out, const Shape& idx) {
    int64_t off = 0;
    size_t lead = out.size() - s.size();
    for (size_t j = 0; j < s.size(); ++j) off = off * s[j] + (s[j] == 1 ? 0 : idx[lead + j]);
    return d[size_t(off)];
}

void check_binary(const std::string& op, const Shape& sa, const Shape& sb, const Shape& so,
                  const std::function<float(float, float)>& f) {
    OneNode t(op, {sa, sb}, so);
    Data a = random_data(sa, 21), b = random_data(sb, 22);
    Data expected(size_t(numel(so)));
    Shape idx(so.size(), 0);
    for (int64_t lin = 0; lin < numel(so); ++lin) {
        int64_t rem = lin;
        for (size_t d = so.size(); d-- > 0;) {
            idx[d] = rem % so[d];
            rem /= so[d];
        }
        expected[size_t(lin)] = f(read_broadcast(a, sa, so, idx), read_broadcast(b, sb, so, idx));
    }
    expect_close(t.run({a, b}), expected);
}

TEST(Elemwise, AddBroadcastTrailing) {
    check_binary("add", {2, 3, 4}, {3, 1}, {2, 3, 4}, [](float x, float y) { return x + y; });
}

TEST(Elemwise, SubtractSameShape) {
    check_binary("subtract", {3, 5}, {3, 5}, {3, 5}, [](float x, float y) { return x - y; });
}

TEST(Elemwise, MultiplyBothSidesBroadcast) {
    check_binary("multiply", {2, 1, 4}, {3, 1}, {2, 3, 4}, [](float x, float y) { return x * y; });
}

TEST(Elemwise, DivideByRowVector) {
    check_binary("divide", {1, 3}, {4, 1, 3}, {4, 1, 3}, [](float x, float y) { return x / y; });
}

TEST(Elemwise, AddScalarTensor) {
    check_binary("add", {2, 3}, {1}, {2, 3}, [](float x, float y) { return x + y; });
}

TEST(Elemwise, TagsElemwiseVsBroadcast) {
    auto p = [](const Shape& s) { return te::placeholder(s, tir::DataType::float32(), "p"); };
    graph::Node n;
    n.op = "add";
    n.name = "a";
    auto same = compute_node(n, {p({2, 3}), p({2, 3})}, {{graph::DType::Float32, {2, 3}}});
    auto bc = compute_node(n, {p({2, 3}), p({3})}, {{graph::DType::Float32, {2, 3}}});
    EXPECT_EQ(same[0]->tag, "elemwise");
    EXPECT_EQ(bc[0]->tag, "broadcast");
}

TEST(Elemwise, NonBroadcastableIsUserError) {
    graph::Node n;
    n.op = "add";
    n.name = "bad_add";
    auto p = [](const Shape& s) { return te::placeholder(s, tir::DataType::float32(), "p"); };
    try {
        compute_node(n, {p({2, 3}), p({4})}, {{graph::DType::Float32, {2, 3}}});
        FAIL() << "expected UserError";
    } catch (const UserError& e) {
        EXPECT_NE(std::string(e.what()).find("bad_add"), std::string::npos) << e.what();
    }
}

TEST(Elemwise, Relu) {
    Shape s = {2, 3, 5};
    OneNode t("nn.relu", {s}, s);
    Data x = random_data(s, 23);
    Data expected = x;
    for (float& v : expected) v = std::max(v, 0.0f);
    Data got = t.run({x});
    expect_close(got, expected);
    EXPECT_NE(std::count(got.begin(), got.end(), 0.0f), 0) << "some inputs were negative";
}

}  // namespace
}  // namespace tessera::topi::testing
