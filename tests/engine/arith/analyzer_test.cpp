// arith::Analyzer: simplifier rules on printed text, bounds, proofs, and a
// randomized numeric check of the simplifier against the interpreter.
#include "engine/arith/analyzer.h"

#include <gtest/gtest.h>

#include <random>

#include "engine/tir/interpreter.h"
#include "engine/tir/op.h"
#include "engine/tir/printer.h"
#include "engine/tir/passes/simplify.h"

namespace tessera::arith {
namespace {

using namespace tir;

std::string simp(Analyzer& a, const Expr& e) { return print(a.simplify(e)); }

TEST(ArithSimplify, CanonicalLinearForm) {
    Analyzer a;
    Var i0_0("i0_0"), i0_1("i0_1"), i0_2("i0_2"), x("x"), y("y");
    EXPECT_EQ(simp(a, (i0_0 * 2 + i0_1) * 2 + i0_2), "i0_0 * 4 + i0_1 * 2 + i0_2");
    EXPECT_EQ(simp(a, x * 1 + 0), "x");
    EXPECT_EQ(simp(a, x + -1), "x - 1");
    EXPECT_EQ(simp(a, x + 2 + y * 3 - 5 + x), "x * 2 + y * 3 - 3");
    EXPECT_EQ(simp(a, 4 - x), "4 - x");
    EXPECT_EQ(simp(a, x * 2 - x * 2), "0");
    EXPECT_EQ(simp(a, x * 0 - y), "y * -1");
}

TEST(ArithSimplify, Cancellation) {
    Analyzer a;
    Var x("x"), b("b"), c("c");
    EXPECT_EQ(simp(a, x - x), "0");
    EXPECT_EQ(simp(a, (x * 4 + b) - x * 4), "b");
    EXPECT_EQ(simp(a, (x + b) - (b + x)), "0");
    EXPECT_EQ(simp(a, (x + c) * 3 - c * 3), "x * 3");
}

TEST(ArithSimplify, DeterministicOutput) {
    Var x("x"), y("y"), z("z");
    Expr e = (z * 3 + x) * 2 + y - z + floordiv(x + y, 4);
    Analyzer a1, a2;
    EXPECT_EQ(simp(a1, e), simp(a2, e));
    EXPECT_EQ(simp(a1, e), "z * 5 + x * 2 + y + (x + y) // 4");
}

TEST(ArithSimplify, FloorDivModWithBounds) {
    Analyzer a;
    Var i("i"), j("j"), y("y");
    a.bind(j, Range::from_extent(8));
    EXPECT_EQ(simp(a, floordiv(i * 8 + j, 8)), "i");
    EXPECT_EQ(simp(a, floormod(i * 8 + j, 8)), "j");
    EXPECT_EQ(simp(a, floordiv(j, 8)), "0");
    EXPECT_EQ(simp(a, floormod(j, 8)), "j");
    EXPECT_EQ(simp(a, floordiv(i * 8 + j, 4)), "i * 2 + j // 4");
    EXPECT_EQ(simp(a, floormod(i * 8 + j, 4)), "j % 4");
    EXPECT_EQ(simp(a, floordiv(i * 8 + j + 8, 8)), "i + 1");
    // Without bounds only exact multiples come out.
    EXPECT_EQ(simp(a, floordiv(i * 8 + y, 8)), "i + y // 8");
    EXPECT_EQ(simp(a, floormod(i * 8 + y, 8)), "y % 8");
    EXPECT_EQ(simp(a, floordiv(floordiv(y, 4), 8)), "y // 32");
    EXPECT_EQ(simp(a, floordiv(y * 4 + 4, 8)), "(y + 1) // 2");
}

// c1 * x + y with c1 dividing the divisor and y in [0, c1): the division
// sees x alone (a vector of 32 lanes inside blocks of 64 read through a
// reshape to 12 x 64, BERT's attention output: a gather before).
TEST(ArithSimplify, FloorDivModOfAnAlignedTermAndASmallRest) {
    Analyzer a;
    Var i("i"), o("o"), l("l"), y("y");
    a.bind(o, Range::from_extent(24));
    a.bind(l, Range::from_extent(32));
    EXPECT_EQ(simp(a, floordiv(i * 768 + o * 32 + l, 64)), "i * 12 + o // 2");
    EXPECT_EQ(simp(a, floormod(i * 768 + o * 32 + l, 64)), "l + o % 2 * 32");
    EXPECT_EQ(simp(a, floormod(floordiv(i * 768 + o * 32 + l, 64), 12)), "o // 2");
    // The rest must stay below c1: l + 1 may reach 32, y is unbounded.
    EXPECT_EQ(simp(a, floordiv(o * 32 + l + 1, 64)), "(o * 32 + l + 1) // 64");
    EXPECT_EQ(simp(a, floordiv(o * 32 + y, 64)), "(o * 32 + y) // 64");
}

// float(int32(round(x))) is round(x) (a quantized conv's int32 result read
// as float again); not through a narrower int, nor of a value that may not
// be integral.
TEST(ArithSimplify, AnIntegralFloatThroughAWideIntAndBackIsItself) {
    Analyzer a;
    Var x("x", DataType::float32());
    const DataType f32 = DataType::float32(), i32 = DataType::int32();
    EXPECT_EQ(simp(a, Cast::make(f32, Cast::make(i32, tir::round(x + Expr(0.5f))))),
              "T.round(x + T.float32(0.5))");
    EXPECT_EQ(simp(a, Cast::make(f32, Cast::make(DataType::int64(), tir::floor(x)))), "T.floor(x)");
    EXPECT_EQ(simp(a, Cast::make(f32, Cast::make(DataType::int8(), tir::round(x)))),
              "T.Cast(\"float32\", T.Cast(\"int8\", T.round(x)))");
    EXPECT_EQ(simp(a, Cast::make(f32, Cast::make(i32, x))),
              "T.Cast(\"float32\", T.Cast(\"int32\", x))");
    EXPECT_EQ(simp(a, Cast::make(DataType::float64(), Cast::make(i32, tir::round(x)))),
              "T.Cast(\"float64\", T.Cast(\"int32\", T.round(x)))");
}

TEST(ArithSimplify, SplitFuseRoundTrip) {
    Analyzer a;
    Var f("f"), i("i"), j("j");
    a.bind(f, Range::from_extent(32));
    a.bind(i, Range::from_extent(4));
    a.bind(j, Range::from_extent(8));
    EXPECT_EQ(simp(a, floordiv(f, 8) * 8 + floormod(f, 8)), "f");
    // fuse(i, j) then split by 8 gives back i and j.
    Expr fused = i * 8 + j;
    EXPECT_EQ(simp(a, floordiv(fused, 8)), "i");
    EXPECT_EQ(simp(a, floormod(fused, 8)), "j");
    EXPECT_EQ(simp(a, floordiv(fused, 8) * 8 + floormod(fused, 8)), "i * 8 + j");
}

TEST(ArithSimplify, AFusedLoopsIndicesRecombineIntoTheFusedVariable) {
    // A (1, 256, 14, 14) tensor's four indices from one fused loop variable,
    // flattened again: the address is f, a contiguous access.
    Analyzer a;
    Var f("f"), y("y");
    a.bind(f, Range::from_extent(50176));
    Expr c = floormod(floordiv(f, 196), 256), h = floormod(floordiv(f, 14), 14), w = floormod(f, 14);
    EXPECT_EQ(simp(a, (c * 14 + h) * 14 + w), "f");
    EXPECT_EQ(simp(a, h * 14 + w), "f % 196");
    // Past the bound of f the outer modulo stays; an unrelated modulus is left.
    EXPECT_EQ(simp(a, floormod(floordiv(y, 14), 14) * 14 + floormod(y, 14)), "y % 196");
    EXPECT_EQ(simp(a, floormod(floordiv(f, 14), 15) * 14 + floormod(f, 14)), "f % 210");
    EXPECT_EQ(simp(a, floormod(floordiv(f, 14), 14) * 13 + floormod(f, 14)),
              "f // 14 % 14 * 13 + f % 14");
}

TEST(ArithSimplify, ComparisonsByBounds) {
    Analyzer a;
    Var i("i"), j("j"), n("n");
    a.bind(i, Range::from_extent(8));
    a.bind(j, Range::from_extent(4));
    EXPECT_EQ(simp(a, i < 8), "True");
    EXPECT_EQ(simp(a, i >= 0), "True");
    EXPECT_EQ(simp(a, i < 0), "False");
    EXPECT_EQ(simp(a, i < 7), "i < 7");
    EXPECT_EQ(simp(a, i * 4 + j < 32), "True");
    EXPECT_EQ(simp(a, i * 4 + j < 30), "i * 4 + j < 30");
    EXPECT_EQ(simp(a, i == 9), "False");
    EXPECT_EQ(simp(a, n + 1 < 10), "n < 9");
    EXPECT_EQ(simp(a, i * 4 + n < i * 4 + 3), "n < 3");
}

TEST(ArithSimplify, MinMaxSelectLogic) {
    Analyzer a;
    Var i("i"), n("n");
    a.bind(i, Range::from_extent(8));
    EXPECT_EQ(simp(a, min(i, 8)), "i");
    EXPECT_EQ(simp(a, max(i, 0)), "i");
    EXPECT_EQ(simp(a, min(i, 4)), "T.min(i, 4)");
    EXPECT_EQ(simp(a, min(min(n, 5), 3)), "T.min(n, 3)");
    EXPECT_EQ(simp(a, max(n + 2, n)), "n + 2");
    EXPECT_EQ(simp(a, select(i < 8, n, n + 1)), "n");
    EXPECT_EQ(simp(a, select(n < 3, i, i)), "i");
    EXPECT_EQ(simp(a, (i < 8) && (n < 3)), "n < 3");
    EXPECT_EQ(simp(a, (i < 0) || (n < 3)), "n < 3");
    EXPECT_EQ(simp(a, !(n < 3)), "n >= 3");
    EXPECT_EQ(simp(a, !!(n < 3)), "n < 3");
}

TEST(ArithBound, ConstIntBound) {
    Analyzer a;
    Var i("i"), j("j"), x("x");
    a.bind(i, Range::from_extent(8));
    a.bind(j, Range{Expr(2), Expr(4)});
    EXPECT_EQ(a.const_int_bound(i * 4 + j).str(), "[2, 33]");
    EXPECT_EQ(a.const_int_bound(i - j).str(), "[-5, 5]");
    EXPECT_EQ(a.const_int_bound(floormod(x, 8)).str(), "[0, 7]");
    EXPECT_EQ(a.const_int_bound(floordiv(i, 3)).str(), "[0, 2]");
    EXPECT_EQ(a.const_int_bound(x).str(), "[-inf, +inf]");
    EXPECT_EQ(a.const_int_bound(x * 0 + min(i, j)).str(), "[0, 5]");
    Var k("k");
    a.bind(k, Range{i, Expr(2)});  // symbolic range: bounds of its ends
    EXPECT_EQ(a.const_int_bound(k).str(), "[0, 8]");
    a.unbind(k);
    EXPECT_EQ(a.const_int_bound(k).str(), "[-inf, +inf]");
}

TEST(ArithBound, CanProve) {
    Analyzer a;
    Var i("i"), j("j");
    a.bind(i, Range::from_extent(16));
    a.bind(j, Range::from_extent(4));
    EXPECT_TRUE(a.can_prove(floordiv(i, 4) * 4 + j < 16));
    EXPECT_TRUE(a.can_prove(floormod(i, 4) < 4));
    EXPECT_FALSE(a.can_prove(i < 15));
    {
        ScopedBind narrow(a, i, Range::from_extent(15));
        EXPECT_TRUE(a.can_prove(i < 15));
    }
    EXPECT_FALSE(a.can_prove(i < 15));
}

TEST(ArithIntSet, RelaxesInnerLoops) {
    Analyzer a;
    Var vi("vi"), k("k"), t("t");
    std::map<const Variable*, Range> relax{{k.get(), Range::from_extent(8)},
                                           {t.get(), Range::from_extent(4)}};
    IntSet s = eval_set(vi * 32 + k * 4 + t, relax, a);
    EXPECT_EQ(print(s.min), "vi * 32");
    EXPECT_EQ(print(s.max), "vi * 32 + 31");
    s = eval_set(floordiv(k, 2) + vi, relax, a);
    EXPECT_EQ(print(s.min), "vi");
    EXPECT_EQ(print(s.max), "vi + 3");
    EXPECT_FALSE(eval_set(k * k, relax, a).bounded());
}

TEST(ArithSimplify, StatementsUseLoopBoundsAndKeepTheirLoops) {
    Buffer A("A", DataType::float32(), {Expr(16)});
    Var i("i"), j("j");
    Stmt body = IfThenElse::make(
        i * 4 + j < 16,
        BufferStore::make(A, Expr(1.0), {floordiv(i * 4 + j, 4) * 4 + floormod(j, 4)}));
    Stmt s = For::make(i, Expr(0), Expr(4), ForKind::Serial,
                       For::make(j, Expr(0), Expr(4), ForKind::Serial, body));
    Analyzer a;
    EXPECT_EQ(print(a.simplify(s)),
              "for i, j in T.grid(4, 4):\n"
              "    if True:\n"
              "        A[i * 4 + j] = T.float32(1)\n");
    EXPECT_EQ(print(simplify(s)), "for i, j in T.grid(4, 4):\n    A[i * 4 + j] = T.float32(1)\n");
    // Outside the loops nothing is known about i.
    EXPECT_EQ(simp(a, i < 4), "i < 4");
}

// ---- randomized: simplification under loop bounds keeps the values

Expr random_expr(std::mt19937& rng, const std::vector<Var>& vars, int depth) {
    std::uniform_int_distribution<int> pick(0, depth <= 0 ? 1 : 9);
    std::uniform_int_distribution<int> small(-3, 9), pos(1, 8);
    switch (pick(rng)) {
        case 0:
            return vars[size_t(rng() % vars.size())];
        case 1:
            return Expr(int64_t(small(rng)));
        case 2:
            return random_expr(rng, vars, depth - 1) + random_expr(rng, vars, depth - 1);
        case 3:
            return random_expr(rng, vars, depth - 1) - random_expr(rng, vars, depth - 1);
        case 4:
            return random_expr(rng, vars, depth - 1) * Expr(int64_t(small(rng)));
        case 5:
            return floordiv(random_expr(rng, vars, depth - 1), Expr(int64_t(pos(rng))));
        case 6:
            return floormod(random_expr(rng, vars, depth - 1), Expr(int64_t(pos(rng))));
        case 7:
            return min(random_expr(rng, vars, depth - 1), random_expr(rng, vars, depth - 1));
        case 8:
            return max(random_expr(rng, vars, depth - 1), random_expr(rng, vars, depth - 1));
        default:
            return select(random_expr(rng, vars, depth - 1) < random_expr(rng, vars, depth - 1),
                          random_expr(rng, vars, depth - 1), random_expr(rng, vars, depth - 1));
    }
}

TEST(ArithSimplify, RandomExpressionsKeepTheirValues) {
    std::mt19937 rng(1234);
    const int64_t I = 5, J = 8;
    for (int trial = 0; trial < 300; ++trial) {
        Var i("i"), j("j");
        Buffer out("out", DataType::int64(), {Expr(I * J)});
        Expr e = random_expr(rng, {i, j}, 4);
        Stmt body = For::make(i, Expr(0), Expr(I), ForKind::Serial,
                              For::make(j, Expr(0), Expr(J), ForKind::Serial,
                                        BufferStore::make(out, e, {i * J + j})));
        PrimFunc f("f", {out}, body);
        PrimFunc g = simplify(f);
        std::vector<int64_t> r1(I * J, 7), r2(I * J, 9);
        interpret(f, {r1.data()});
        interpret(g, {r2.data()});
        ASSERT_EQ(r1, r2) << print(e) << "\nsimplified:\n" << print(g);
    }
}

}  // namespace
}  // namespace tessera::arith

namespace tessera::arith {
namespace {

using namespace tir;

// A layout unpack then pack of a padded channel block: the guard c < 24
// makes the clamp min(c, 23) redundant in the guarded load, which then reads
// X[i1, i4] (one vector) instead of a clamped gather; the clamp stays where
// dropping it could read outside the buffer (both select branches load).
TEST(ArithSimplify, AGuardDropsTheClampOfTheLoadsItGuardsWhereTheyStayInBounds) {
    Var i1("i1"), i4("i4");
    Buffer x("X", DataType::float32(), {Expr(int64_t(2)), Expr(int64_t(16))});
    Buffer narrow("Y", DataType::float32(), {Expr(int64_t(24))});
    Analyzer a;
    ScopedBind b1(a, i1, Range::from_extent(Expr(int64_t(2))));
    ScopedBind b4(a, i4, Range::from_extent(Expr(int64_t(16))));
    Expr c = i1 * 16 + i4;
    Expr clamped = min(c, Expr(int64_t(23)));
    Expr blocked = Select::make(c < 24, BufferLoad::make(x, {floordiv(clamped, 16), floormod(clamped, 16)}),
                                make_const(DataType::float32(), 0));
    EXPECT_EQ(simp(a, blocked), "T.Select(i1 * 16 + i4 < 24, X[i1, i4], T.float32(0))");
    // Y has 24 elements: without the clamp the discarded lanes would read past it.
    Expr flat = Select::make(c < 24, BufferLoad::make(narrow, {clamped}), make_const(DataType::float32(), 0));
    EXPECT_NE(simp(a, flat).find("T.min"), std::string::npos) << simp(a, flat);
}

}  // namespace
}  // namespace tessera::arith
