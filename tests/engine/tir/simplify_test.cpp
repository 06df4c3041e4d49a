// Simplification rules, checked on text and numerically with the interpreter.
#include "engine/tir/passes/simplify.h"

#include <gtest/gtest.h>

#include <random>

#include "engine/te/tensor.h"
#include "engine/tir/interpreter.h"
#include "engine/tir/op.h"
#include "engine/tir/printer.h"

namespace tessera::tir {
namespace {

TEST(Simplify, FoldsConstants) {
    EXPECT_EQ(print(simplify(Expr(2) * 3 + 4)), "10");
    EXPECT_EQ(print(simplify(floordiv(Expr(-7), 2))), "-4");
    EXPECT_EQ(print(simplify(floormod(Expr(-7), 2))), "1");
    EXPECT_EQ(print(simplify(Expr(-7) / 2)), "-3");
    EXPECT_EQ(print(simplify(Expr(1.5) * 2.0)), "T.float32(3)");
    EXPECT_EQ(print(simplify(Expr(3) < 4)), "True");
    EXPECT_EQ(print(simplify(IntImm::make(DataType::int32(), 2147483647) +
                             IntImm::make(DataType::int32(), 1))),
              "T.int32(-2147483648)");
}

TEST(Simplify, RemovesIdentities) {
    Var x("x"), y("y");
    EXPECT_EQ(print(simplify(x + 0)), "x");
    EXPECT_EQ(print(simplify(0 + x)), "x");
    EXPECT_EQ(print(simplify(x * 1)), "x");
    EXPECT_EQ(print(simplify(1 * x)), "x");
    EXPECT_EQ(print(simplify(x * 0 + y)), "y");
    EXPECT_EQ(print(simplify(floordiv(x, 1))), "x");
    EXPECT_EQ(print(simplify(floormod(x, 1))), "0");
    EXPECT_EQ(print(simplify(x - x)), "0");
}

TEST(Simplify, MergesNestedConstantOffsets) {
    Var x("x");
    EXPECT_EQ(print(simplify((x + 2) + 3)), "x + 5");
    EXPECT_EQ(print(simplify((x + 2) - 5)), "x - 3");
    EXPECT_EQ(print(simplify((x - 2) + 2)), "x");
    EXPECT_EQ(print(simplify(3 + (x + 1) * 1)), "x + 4");
}

TEST(Simplify, UnchangedExpressionKeepsIdentity) {
    Var x("x"), y("y");
    Expr e = x * y + 3;
    EXPECT_TRUE(simplify(e).same_as(e));
}

TEST(Simplify, RemovesUnitLoopsAndConstantBranches) {
    Buffer A("A", DataType::float32(), {Expr(4)});
    Var i("i"), j("j");
    Stmt store = BufferStore::make(A, Expr(1.0), {i * 2 + j});
    Stmt branch = IfThenElse::make(Expr(1) < 2, store, BufferStore::make(A, Expr(2.0), {i}));
    Stmt s = For::make(i, Expr(1), Expr(1), ForKind::Serial,
                       For::make(j, Expr(0), Expr(2), ForKind::Serial, branch));
    EXPECT_EQ(print(simplify(s)),
              "for j in T.serial(2):\n"
              "    A[j + 2] = T.float32(1)\n");
}

TEST(Simplify, PreservesResultsOfLoweredFunction) {
    // A stage with unit extents: simplification removes loops but not meaning.
    te::Tensor A = te::placeholder({1, 6, 1}, DataType::float32(), "A");
    IterVar k = te::reduce_axis(1, "k");
    te::Tensor B = te::compute(
        {1, 6, 1},
        [&](const std::vector<Var>& i) {
            return te::sum(A(i[0] + k.var, i[1], i[2]) * 3.0 + 0.5, {k});
        },
        "B");
    PrimFunc f = te::create_prim_func({A, B}, "f");
    PrimFunc g = simplify(f);
    EXPECT_EQ(print(g).find("T.serial(1)"), std::string::npos) << print(g);
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> d(0.5f, 1.5f);
    std::vector<float> a(6), b1(6, 0.0f), b2(6, 0.0f);
    for (float& v : a) v = d(rng);
    interpret(f, {a.data(), b1.data()});
    interpret(g, {a.data(), b2.data()});
    EXPECT_EQ(b1, b2);
    for (int x = 0; x < 6; ++x) EXPECT_FLOAT_EQ(b1[x], a[x] * 3.0f + 0.5f);
}

TEST(StructuralEqual, ComparesTreesAndVariableIdentity) {
    Var x("x"), y("x");
    EXPECT_TRUE(structural_equal(x * 2 + 1, x * 2 + 1));
    EXPECT_FALSE(structural_equal(x * 2 + 1, y * 2 + 1));
    EXPECT_FALSE(structural_equal(x * 2 + 1, x * 2 - 1));
}

}  // namespace
}  // namespace tessera::tir
