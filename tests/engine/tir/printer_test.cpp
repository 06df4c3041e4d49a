// Golden-text tests of the TVMScript-like printer.
#include "engine/tir/printer.h"

#include <gtest/gtest.h>

#include "engine/te/tensor.h"
#include "engine/tir/op.h"

namespace tessera::tir {
namespace {

TEST(Printer, SeedElementwiseAddOne) {
    te::Tensor A = te::placeholder({8}, DataType::float32(), "A");
    te::Tensor B = te::compute(
        {8}, [&](const std::vector<Var>& i) { return A(i[0]) + 1.0; }, "B");
    PrimFunc f = te::create_prim_func({A, B}, "main");
    const char* expected =
        "@T.prim_func\n"
        "def main(A: T.Buffer((8,), \"float32\"), B: T.Buffer((8,), \"float32\")):\n"
        "    # with T.block(\"root\")\n"
        "    for i0 in T.serial(8):\n"
        "        with T.block(\"B\"):\n"
        "            i0_1 = T.axis.spatial(8, i0)\n"
        "            T.reads(A[i0_1])\n"
        "            T.writes(B[i0_1])\n"
        "            B[i0_1] = A[i0_1] + T.float32(1)\n";
    EXPECT_EQ(print(f), expected);
}

TEST(Printer, MatmulHasGridAndInit) {
    te::Tensor A = te::placeholder({4, 3}, DataType::float32(), "A");
    te::Tensor B = te::placeholder({3, 5}, DataType::float32(), "B");
    IterVar k = te::reduce_axis(3, "k");
    te::Tensor C = te::compute(
        {4, 5},
        [&](const std::vector<Var>& i) { return te::sum(A(i[0], k.var) * B(k.var, i[1]), {k}); },
        "C");
    PrimFunc f = te::create_prim_func({A, B, C}, "matmul");
    const char* expected =
        "@T.prim_func\n"
        "def matmul(A: T.Buffer((4, 3), \"float32\"), B: T.Buffer((3, 5), \"float32\"), "
        "C: T.Buffer((4, 5), \"float32\")):\n"
        "    # with T.block(\"root\")\n"
        "    for i0, i1, k in T.grid(4, 5, 3):\n"
        "        with T.block(\"C\"):\n"
        "            i0_1 = T.axis.spatial(4, i0)\n"
        "            i1_1 = T.axis.spatial(5, i1)\n"
        "            k_1 = T.axis.reduce(3, k)\n"
        "            T.reads(A[i0_1, k_1], B[k_1, i1_1])\n"
        "            T.writes(C[i0_1, i1_1])\n"
        "            with T.init():\n"
        "                C[i0_1, i1_1] = T.float32(0)\n"
        "            C[i0_1, i1_1] = C[i0_1, i1_1] + A[i0_1, k_1] * B[k_1, i1_1]\n";
    EXPECT_EQ(print(f), expected);
}

TEST(Printer, RootBlockWithAllocationIsExplicit) {
    te::Tensor A = te::placeholder({2}, DataType::float32(), "A");
    te::Tensor E = te::compute(
        {2}, [&](const std::vector<Var>& i) { return exp(A(i[0])); }, "E");
    te::Tensor O = te::compute(
        {2}, [&](const std::vector<Var>& i) { return E(i[0]) * 2.0; }, "O");
    std::string text = print(te::create_prim_func({A, O}, "f"));
    EXPECT_NE(
        text.find("    with T.block(\"root\"):\n        E = T.alloc_buffer((2,), \"float32\")\n"),
        std::string::npos)
        << text;
    // The loops take their names first (a schedule's names for them: i0 and
    // i0_1), the blocks' variables the suffixes after them.
    EXPECT_NE(text.find("for i0 in T.serial(2):"), std::string::npos) << text;
    EXPECT_NE(text.find("for i0_1 in T.serial(2):"), std::string::npos) << text;
    EXPECT_NE(text.find("E[i0_2] = T.exp(A[i0_2])"), std::string::npos) << text;
    EXPECT_NE(text.find("O[i0_3] = E[i0_3] * T.float32(2)"), std::string::npos) << text;
}

TEST(Printer, MinimalParenthesesByPrecedence) {
    Var x("x"), y("y"), z("z");
    EXPECT_EQ(print((x + y) * z), "(x + y) * z");
    EXPECT_EQ(print(x + y * z), "x + y * z");
    EXPECT_EQ(print(x - (y - z)), "x - (y - z)");
    EXPECT_EQ(print((x - y) - z), "x - y - z");
    EXPECT_EQ(print(floordiv(x + 1, 4)), "(x + 1) // 4");
    EXPECT_EQ(print(floormod(x, 4) * 2), "x % 4 * 2");
    EXPECT_EQ(print(x / y), "T.truncdiv(x, y)");
    EXPECT_EQ(print(x < y && !(y == z)), "x < y and not y == z");
    EXPECT_EQ(print((x < y || y < z) && z < x), "(x < y or y < z) and z < x");
    EXPECT_EQ(print(max(x, y - 1)), "T.max(x, y - 1)");
}

TEST(Printer, ConstantsCastsAndIntrinsics) {
    Var f("f", DataType::float32());
    EXPECT_EQ(print(Expr(int64_t(7))), "7");
    EXPECT_EQ(print(IntImm::make(DataType::int32(), 7)), "T.int32(7)");
    EXPECT_EQ(print(f * 0.5), "f * T.float32(0.5)");
    EXPECT_EQ(print(cast(DataType::int64(), sqrt(f))), "T.Cast(\"int64\", T.sqrt(f))");
    EXPECT_EQ(print(IntImm::make(DataType::boolean(), 1)), "True");
    EXPECT_EQ(print(select(f > 0.0, f, 0.0)), "T.Select(f > T.float32(0), f, T.float32(0))");
    Var i("i");
    EXPECT_EQ(print(Ramp::make(i * 8, Expr(1), 8) + Broadcast::make(Expr(2), 8)),
              "T.Ramp(i * 8, 1, 8) + T.Broadcast(2, 8)");
}

TEST(Printer, LoopKindsAndBranches) {
    Buffer A("A", DataType::float32(), {Expr(16)});
    Var bx("bx"), tx("tx"), j("j");
    Stmt store = BufferStore::make(A, Expr(1.0), {bx * 8 + tx});
    Stmt cond = IfThenElse::make(tx < 4, store, BufferStore::make(A, Expr(2.0), {bx * 8 + tx}));
    Stmt inner = For::make(tx, Expr(0), Expr(8), ForKind::ThreadBinding, cond, "threadIdx.x");
    Stmt outer = For::make(bx, Expr(0), Expr(2), ForKind::ThreadBinding, inner, "blockIdx.x");
    Stmt par =
        For::make(j, Expr(1), Expr(3), ForKind::Parallel, BufferStore::make(A, Expr(0.0), {j}));
    PrimFunc f("k", {A}, SeqStmt::make({outer, par}));
    const char* expected =
        "@T.prim_func\n"
        "def k(A: T.Buffer((16,), \"float32\")):\n"
        "    for bx in T.thread_binding(2, thread=\"blockIdx.x\"):\n"
        "        for tx in T.thread_binding(8, thread=\"threadIdx.x\"):\n"
        "            if tx < 4:\n"
        "                A[bx * 8 + tx] = T.float32(1)\n"
        "            else:\n"
        "                A[bx * 8 + tx] = T.float32(2)\n"
        "    for j in T.parallel(1, 4):\n"
        "        A[j] = T.float32(0)\n";
    EXPECT_EQ(print(f), expected);
}

TEST(Printer, DistinctVariablesWithOneNameGetSuffixes) {
    Var a("x"), b("x"), c("x");
    EXPECT_EQ(print(a + b * c + a), "x + x_1 * x_2 + x");
}

TEST(Printer, VectorizedAndUnrolledLoops) {
    Buffer A("A", DataType::float32(), {Expr(4), Expr(4)});
    Var i("i"), j("j");
    Stmt s = For::make(i, Expr(0), Expr(4), ForKind::Unrolled,
                       For::make(j, Expr(0), Expr(4), ForKind::Vectorized,
                                 BufferStore::make(A, Expr(3.0), {i, j})));
    EXPECT_EQ(print(s, 1),
              "    for i in T.unroll(4):\n"
              "        for j in T.vectorized(4):\n"
              "            A[i, j] = T.float32(3)\n");
}

}  // namespace
}  // namespace tessera::tir
