// vectorize_loops, unroll_loops and loop_partition: expected IR text and the
// same results as the unlowered function under the interpreter.
#include <gtest/gtest.h>

#include <map>

#include "engine/tir/op.h"
#include "engine/tir/passes/loop_partition.h"
#include "engine/tir/passes/unroll_loops.h"
#include "engine/tir/passes/vectorize_loops.h"
#include "engine/tir/printer.h"
#include "tests/engine/tir/passes/pass_test_util.h"

namespace tessera::tir {
namespace {

using testing::expect_same_results;

const DataType f32 = DataType::float32();

// B[i0 * 8 + i1] = A[i0 * 8 + i1] * 2 + A[0] with i1 of the given kind.
PrimFunc elementwise(ForKind inner_kind, std::map<std::string, std::string> ann = {}) {
    Buffer A("A", f32, {Expr(32)}), B("B", f32, {Expr(32)});
    Var i0("i0"), i1("i1");
    Expr idx = i0 * 8 + i1;
    Stmt body = BufferStore::make(
        B, BufferLoad::make(A, {idx}) * Expr(2.0) + BufferLoad::make(A, {Expr(0)}), {idx});
    Stmt s = For::make(i0, Expr(0), Expr(4), ForKind::Serial,
                       For::make(i1, Expr(0), Expr(8), inner_kind, body, "", ann));
    return PrimFunc("f", {A, B}, s);
}

TEST(VectorizeLoops, RampsContiguousAccessesAndBroadcastsInvariants) {
    PrimFunc f = elementwise(ForKind::Vectorized);
    PrimFunc g = vectorize_loops(f);
    EXPECT_EQ(print(g->body),
              "for i0 in T.serial(4):\n"
              "    B[T.Ramp(i0 * 8, 1, 8)] = A[T.Ramp(i0 * 8, 1, 8)] * T.Broadcast(T.float32(2), 8)"
              " + T.Broadcast(A[0], 8)\n");
    expect_same_results(f, g);
}

TEST(VectorizeLoops, AGuardNoLaneChangesIsTestedOncePerVector) {
    // Rows past a tiled extent: if (i0 < 3) B[i0 * 8 + i1] = ... over 4 rows.
    Buffer A("A", f32, {Expr(32)}), B("B", f32, {Expr(32)});
    Var i0("i0"), i1("i1");
    Expr idx = i0 * 8 + i1;
    Stmt store = BufferStore::make(B, BufferLoad::make(A, {idx}) * Expr(2.0), {idx});
    Stmt s = For::make(i0, Expr(0), Expr(4), ForKind::Serial,
                       For::make(i1, Expr(0), Expr(8), ForKind::Vectorized,
                                 IfThenElse::make(i0 < 3, store)));
    PrimFunc f("f", {A, B}, s);
    PrimFunc g = vectorize_loops(f);
    EXPECT_EQ(print(g->body),
              "for i0 in T.serial(4):\n"
              "    if i0 < 3:\n"
              "        B[T.Ramp(i0 * 8, 1, 8)] = A[T.Ramp(i0 * 8, 1, 8)] * T.Broadcast(T.float32(2), 8)\n");
    expect_same_results(f, g);
    // A guard that depends on the lane keeps the loop serial.
    Stmt t = For::make(i0, Expr(0), Expr(4), ForKind::Serial,
                       For::make(i1, Expr(0), Expr(8), ForKind::Vectorized,
                                 IfThenElse::make(i1 < 5, store)));
    PrimFunc h = vectorize_loops(PrimFunc("h", {A, B}, t));
    EXPECT_EQ(print(h->body).find("Ramp"), std::string::npos) << print(h->body);
    EXPECT_NE(print(h->body).find("T.grid(4, 8)"), std::string::npos) << print(h->body);
}

// A vector loop whose width is no power of two: up to 16 lanes and at
// least 3/4 of its power of two it stays one vector (7, 14, 12, 3), else
// power-of-two pieces (9: 8 + 1; 17: 16 + 1; 28: 16 + 8 + 4; 5: 4 + 1).
TEST(VectorizeLoops, AnOddWidthIsOneVectorUpToSixteenLanesElsePieces) {
    const std::map<int64_t, std::vector<int>> want = {{7, {7}},    {14, {14}},       {12, {12}},
                                                      {3, {3}},    {9, {8, 1}},      {17, {16, 1}},
                                                      {5, {4, 1}}, {28, {16, 8, 4}}, {16, {16}}};
    for (const auto& [w, pieces] : want) {
        Buffer A("A", f32, {Expr(4 * w)}), B("B", f32, {Expr(4 * w)});
        Var i0("i0"), i1("i1");
        Expr idx = i0 * w + i1;
        Stmt s = For::make(
            i0, Expr(0), Expr(4), ForKind::Serial,
            For::make(i1, Expr(0), Expr(w), ForKind::Vectorized,
                      BufferStore::make(B, BufferLoad::make(A, {idx}) * Expr(2.0), {idx})));
        PrimFunc f("f", {A, B}, s);
        PrimFunc g = vectorize_loops(f);
        const std::string text = print(g->body);
        std::vector<int> got;
        for (size_t at = text.find("B["); at != std::string::npos; at = text.find("B[", at + 1)) {
            const size_t ramp = text.find("T.Ramp(", at);
            const size_t eol = text.find('\n', at);
            if (ramp == std::string::npos || ramp > eol) {
                got.push_back(1);
                continue;
            }
            const size_t close = text.find(')', ramp);
            got.push_back(std::stoi(text.substr(text.rfind(',', close) + 1, close)));
        }
        EXPECT_EQ(got, pieces) << w << " lanes:\n" << text;
        expect_same_results(f, g);
    }
}

TEST(VectorizeLoops, NonUnitStrideFallsBackToSerial) {
    Buffer A("A", f32, {Expr(16)}), B("B", f32, {Expr(16)});
    Var i("i");
    Stmt s = For::make(i, Expr(0), Expr(8), ForKind::Vectorized,
                       BufferStore::make(B, BufferLoad::make(A, {i * 2}) + Expr(1.0), {i * 2}));
    PrimFunc f("f", {A, B}, s);
    PrimFunc g = vectorize_loops(f);
    EXPECT_EQ(print(g->body), "for i in T.serial(8):\n    B[i * 2] = A[i * 2] + T.float32(1)\n");
    expect_same_results(f, g);
}

TEST(VectorizeLoops, ReductionIntoOneElementStaysSerial) {
    Buffer A("A", f32, {Expr(8)}), C("C", f32, {Expr(1)});
    Var k("k");
    Stmt s = For::make(
        k, Expr(0), Expr(8), ForKind::Vectorized,
        BufferStore::make(C, BufferLoad::make(C, {Expr(0)}) + BufferLoad::make(A, {k}), {Expr(0)}));
    PrimFunc f("f", {A, C}, s);
    PrimFunc g = vectorize_loops(f);
    EXPECT_EQ(print(g->body), "for k in T.serial(8):\n    C[0] = C[0] + A[k]\n");
    expect_same_results(f, g);
}

TEST(VectorizeLoops, ReadOfAnotherLaneOfAWrittenBufferStaysSerial) {
    Buffer A("A", f32, {Expr(9)});
    Var i("i");
    Stmt s = For::make(i, Expr(0), Expr(8), ForKind::Vectorized,
                       BufferStore::make(A, BufferLoad::make(A, {i + 1}) * Expr(2.0), {i}));
    PrimFunc f("f", {A}, s);
    PrimFunc g = vectorize_loops(f);
    EXPECT_NE(print(g->body).find("T.serial(8)"), std::string::npos) << print(g->body);
    expect_same_results(f, g);
}

TEST(VectorizeLoops, GuardedPaddingLoadsStaySerial) {
    Buffer A("A", f32, {Expr(8)}), B("B", f32, {Expr(8)});
    Var i("i");
    Expr padded = select(i >= 1, BufferLoad::make(A, {i - 1}), Expr(0.0));
    Stmt s = For::make(i, Expr(0), Expr(8), ForKind::Vectorized, BufferStore::make(B, padded, {i}));
    PrimFunc f("f", {A, B}, s);
    PrimFunc g = vectorize_loops(f);
    EXPECT_NE(print(g->body).find("for i in T.serial(8)"), std::string::npos) << print(g->body);
    expect_same_results(f, g);
}

// A padded channel block: lanes past channel 24 are discarded by the guard
// but their loads stay inside A, so the select is one vector select over a
// vector load instead of a serial loop (LLVM then called expf per lane).
TEST(VectorizeLoops, GuardedLoadsInsideTheirBufferInEveryLaneBecomeAVectorSelect) {
    Buffer A("A", f32, {Expr(32)}), B("B", f32, {Expr(32)});
    Var blk("blk"), i("i");
    Expr c = blk * 16 + i;
    Stmt s = For::make(
        blk, Expr(0), Expr(2), ForKind::Serial,
        For::make(i, Expr(0), Expr(16), ForKind::Vectorized,
                  BufferStore::make(B, select(c < 24, BufferLoad::make(A, {c}) * Expr(3.0), Expr(0.0)),
                                    {c})));
    PrimFunc f("f", {A, B}, s);
    PrimFunc g = vectorize_loops(f);
    EXPECT_NE(print(g->body).find("T.Ramp"), std::string::npos) << print(g->body);
    EXPECT_NE(print(g->body).find("T.Select"), std::string::npos) << print(g->body);
    expect_same_results(f, g);
    // Every other element (inside the buffer too) is read through its span
    // (two loads and a shuffle: the codegen's strided reads); every 5th is a
    // gather and stays serial.
    Buffer wide("W", f32, {Expr(128)});
    for (int64_t stride : {2, 5}) {
        Stmt strided = For::make(
            blk, Expr(0), Expr(2), ForKind::Serial,
            For::make(
                i, Expr(0), Expr(8), ForKind::Vectorized,
                BufferStore::make(
                    B, select(c < 12, BufferLoad::make(wide, {c * stride}), Expr(0.0)), {c})));
        PrimFunc sf("h", {wide, B}, strided);
        PrimFunc h = vectorize_loops(sf);
        EXPECT_EQ(print(h->body).find("T.Ramp") != std::string::npos, stride == 2)
            << print(h->body);
        expect_same_results(sf, h);
    }
}

TEST(UnrollLoops, CopiesTheBodyPerIteration) {
    Buffer A("A", f32, {Expr(8)}), B("B", f32, {Expr(8)});
    Var i0("i0"), i1("i1");
    Stmt s = For::make(
        i0, Expr(0), Expr(2), ForKind::Serial,
        For::make(
            i1, Expr(0), Expr(3), ForKind::Unrolled,
            BufferStore::make(B, BufferLoad::make(A, {i0 * 3 + i1}) + Expr(1.0), {i0 * 3 + i1})));
    PrimFunc f("f", {A, B}, s);
    PrimFunc g = unroll_loops(f);
    EXPECT_EQ(print(g->body),
              "for i0 in T.serial(2):\n"
              "    B[i0 * 3] = A[i0 * 3] + T.float32(1)\n"
              "    B[i0 * 3 + 1] = A[i0 * 3 + 1] + T.float32(1)\n"
              "    B[i0 * 3 + 2] = A[i0 * 3 + 2] + T.float32(1)\n");
    expect_same_results(f, g);
}

TEST(UnrollLoops, ExplicitPragmaUnrollsAndLongLoopsStaySerial) {
    PrimFunc f = elementwise(ForKind::Serial, {{"pragma_unroll_explicit", "1"}});
    PrimFunc g = unroll_loops(f);
    EXPECT_EQ(print(g->body).find("T.serial(8)"), std::string::npos) << print(g->body);
    EXPECT_NE(print(g->body).find("B[i0 * 8 + 7] = "), std::string::npos) << print(g->body);
    expect_same_results(f, g);

    Buffer A("A", f32, {Expr(100)});
    Var i("i");
    Stmt s = For::make(i, Expr(0), Expr(100), ForKind::Unrolled,
                       BufferStore::make(A, BufferLoad::make(A, {i}) * Expr(3.0), {i}));
    PrimFunc h("h", {A}, s);
    EXPECT_EQ(print(unroll_loops(h)->body),
              "for i in T.serial(100):\n    A[i] = A[i] * T.float32(3)\n");
    expect_same_results(h, unroll_loops(h));
}

// A split of 10 by 4: three outer iterations, the last one guarded.
PrimFunc split_with_tail() {
    Buffer A("A", f32, {Expr(10)}), B("B", f32, {Expr(10)});
    Var i0("i0"), i1("i1");
    Expr idx = i0 * 4 + i1;
    Stmt guarded = IfThenElse::make(
        idx < 10, BufferStore::make(B, BufferLoad::make(A, {idx}) + Expr(1.0), {idx}));
    Stmt s = For::make(i0, Expr(0), Expr(3), ForKind::Serial,
                       For::make(i1, Expr(0), Expr(4), ForKind::Serial, guarded));
    return PrimFunc("f", {A, B}, s);
}

TEST(LoopPartition, SplitsANonDividingSplitIntoMainAndTail) {
    PrimFunc f = split_with_tail();
    PrimFunc g = loop_partition(f);
    EXPECT_EQ(print(g->body),
              "for i0, i1 in T.grid(2, 4):\n"
              "    B[i0 * 4 + i1] = A[i0 * 4 + i1] + T.float32(1)\n"
              "for i1 in T.serial(2):\n"
              "    B[i1 + 8] = A[i1 + 8] + T.float32(1)\n");
    expect_same_results(f, g);
}

TEST(LoopPartition, PartitionsEachConjunctOfATwoDimensionalTail) {
    Buffer A("A", f32, {Expr(10), Expr(7)}), B("B", f32, {Expr(10), Expr(7)});
    Var i0("i0"), i1("i1"), j0("j0"), j1("j1");
    Expr r = i0 * 4 + i1, c = j0 * 4 + j1;
    Stmt guarded = IfThenElse::make(
        r < 10 && c < 7, BufferStore::make(B, BufferLoad::make(A, {r, c}) * Expr(2.0), {r, c}));
    Stmt s =
        For::make(i0, Expr(0), Expr(3), ForKind::Serial,
                  For::make(i1, Expr(0), Expr(4), ForKind::Serial,
                            For::make(j0, Expr(0), Expr(2), ForKind::Serial,
                                      For::make(j1, Expr(0), Expr(4), ForKind::Serial, guarded))));
    PrimFunc f("f", {A, B}, s);
    PrimFunc g = loop_partition(f);
    std::string text = print(g->body);
    // No condition is left: a main nest and tails in each dimension.
    EXPECT_EQ(text,
              "for i0, i1 in T.grid(2, 4):\n"
              "    for j1 in T.serial(4):\n"
              "        B[i0 * 4 + i1, j1] = A[i0 * 4 + i1, j1] * T.float32(2)\n"
              "    for j1 in T.serial(3):\n"
              "        B[i0 * 4 + i1, j1 + 4] = A[i0 * 4 + i1, j1 + 4] * T.float32(2)\n"
              "for i1 in T.serial(2):\n"
              "    for j1 in T.serial(4):\n"
              "        B[i1 + 8, j1] = A[i1 + 8, j1] * T.float32(2)\n"
              "    for j1 in T.serial(3):\n"
              "        B[i1 + 8, j1 + 4] = A[i1 + 8, j1 + 4] * T.float32(2)\n");
    expect_same_results(f, g);
}

TEST(LoopPartition, DropsTheIterationsPastAPartialLastTile) {
    // Tiles of 3 rows over 4 rows (a register tile taller than the tail):
    // tile 0 is whole, tile 1 keeps its guard, tiles 2..9 do nothing.
    Buffer A("A", f32, {Expr(30)}), B("B", f32, {Expr(30)});
    Var i("i"), r("r");
    Expr idx = i * 3 + r;
    Stmt guarded = IfThenElse::make(
        idx < 4, BufferStore::make(B, BufferLoad::make(A, {idx}) + Expr(1.0), {idx}));
    Stmt s = For::make(i, Expr(0), Expr(10), ForKind::Serial,
                       For::make(r, Expr(0), Expr(3), ForKind::Serial, guarded));
    PrimFunc f("f", {A, B}, s);
    PrimFunc g = loop_partition(f);
    EXPECT_EQ(print(g->body),
              "for r in T.serial(3):\n"
              "    B[r] = A[r] + T.float32(1)\n"
              "B[3] = A[3] + T.float32(1)\n");
    expect_same_results(f, g);
}

// A padding stage's row: B[w] = select(0 <= w - 1 < 6, A[clamp(w - 1)], -1).
PrimFunc padded_row(ForKind kind) {
    Buffer A("A", f32, {Expr(6)}), B("B", f32, {Expr(8)});
    Var w("w");
    Expr j = w - Expr(1);
    Expr clamped = max(min(j, Expr(5)), Expr(0));
    Expr v = select(j >= Expr(0) && j < Expr(6), BufferLoad::make(A, {clamped}), Expr(-1.0));
    return PrimFunc("f", {A, B}, For::make(w, Expr(0), Expr(8), kind, BufferStore::make(B, v, {w})));
}

TEST(LoopPartition, SplitsAPaddedVectorRowIntoItsEdgesAndAContiguousInterior) {
    // The clamped loads are no vector load; the edges and the interior, each
    // a loop of their own, are a store of the pad value and a plain copy.
    PrimFunc f = padded_row(ForKind::Vectorized);
    PrimFunc g = loop_partition(f);
    EXPECT_EQ(print(g->body),
              "B[0] = T.float32(-1)\n"
              "for w in T.vectorized(1, 7):\n"
              "    B[w] = A[w - 1]\n"
              "B[7] = T.float32(-1)\n");
    expect_same_results(f, g);
}

TEST(LoopPartition, PeelsTheFirstVectorOfAPaddedRowOfVectors) {
    // A padded row of 3 vectors of 8 (a depthwise conv's padding stage, its
    // left pad in lane 0 of the first vector): the first vector keeps the
    // guard (then partitioned lane-wise), the other two are plain copies.
    Buffer A("A", f32, {Expr(24)}), B("B", f32, {Expr(24)});
    Var v("v"), l("l");
    Expr w = v * 8 + l;
    Expr x = select(w >= Expr(1), BufferLoad::make(A, {max(w - Expr(1), Expr(0))}), Expr(-1.0));
    Stmt s = For::make(
        v, Expr(0), Expr(3), ForKind::Serial,
        For::make(l, Expr(0), Expr(8), ForKind::Vectorized, BufferStore::make(B, x, {w})));
    PrimFunc f("f", {A, B}, s);
    PrimFunc g = loop_partition(f);
    EXPECT_EQ(print(g->body),
              "B[0] = T.float32(-1)\n"
              "for l in T.vectorized(1, 8):\n"
              "    B[l] = A[l - 1]\n"
              "for v in T.serial(1, 3):\n"
              "    for l in T.vectorized(8):\n"
              "        B[v * 8 + l] = A[v * 8 + l - 1]\n");
    expect_same_results(f, g);
}

TEST(LoopPartition, SplitsOffThePartialLastPanelOfAPackedOperand) {
    // Packing 10 columns into panels of 4: the last panel's lanes past the
    // end are zeros. The rows of whole panels lose the select, and the last
    // panel is a copy of its 2 columns and a store of 2 zeros.
    Buffer A("A", f32, {Expr(10)}), P("P", f32, {Expr(3), Expr(4)});
    Var p0("p0"), p2("p2");
    Expr j = p0 * 4 + p2;
    Expr v = select(j < Expr(10), BufferLoad::make(A, {min(j, Expr(9))}), Expr(0.0));
    Stmt s = For::make(p0, Expr(0), Expr(3), ForKind::Serial,
                       For::make(p2, Expr(0), Expr(4), ForKind::Vectorized,
                                 BufferStore::make(P, v, {p0, p2})));
    PrimFunc f("f", {A, P}, s);
    PrimFunc g = loop_partition(f);
    EXPECT_EQ(print(g->body),
              "for p0 in T.serial(2):\n"
              "    for p2 in T.vectorized(4):\n"
              "        P[p0, p2] = A[p0 * 4 + p2]\n"
              "for p2 in T.vectorized(2):\n"
              "    P[2, p2] = A[p2 + 8]\n"
              "for p2 in T.vectorized(2, 4):\n"
              "    P[2, p2] = T.float32(0)\n");
    expect_same_results(f, g);
}

TEST(LoopPartition, KeepsAParallelLoopOneLoopThatBranchesAtItsTail) {
    // 10 columns in two parallel blocks of 6: split into two loops, the
    // second block would be a parallel loop of one iteration of its own,
    // run on one thread after the first. One parallel loop stays, its body
    // branching into the full block and the tail, each without a guard.
    Buffer A("A", f32, {Expr(10)}), B("B", f32, {Expr(10)});
    Var j0("j0"), j1("j1");
    Expr c = j0 * 6 + j1;
    Stmt guarded =
        IfThenElse::make(c < 10, BufferStore::make(B, BufferLoad::make(A, {c}) * Expr(2.0), {c}));
    Stmt s = For::make(j0, Expr(0), Expr(2), ForKind::Parallel,
                       For::make(j1, Expr(0), Expr(6), ForKind::Serial, guarded));
    PrimFunc f("f", {A, B}, s);
    PrimFunc g = loop_partition(f);
    EXPECT_EQ(print(g->body),
              "for j0 in T.parallel(2):\n"
              "    if j0 < 1:\n"
              "        for j1 in T.serial(6):\n"
              "            B[j0 * 6 + j1] = A[j0 * 6 + j1] * T.float32(2)\n"
              "    else:\n"
              "        for j1 in T.serial(4):\n"
              "            B[j0 * 6 + j1] = A[j0 * 6 + j1] * T.float32(2)\n");
    expect_same_results(f, g);
}

TEST(LoopPartition, LeavesTheSelectsOfASerialLoopAlone) {
    // Only a vector loop pays for its copies: a serial loop keeps its select.
    PrimFunc f = padded_row(ForKind::Serial);
    EXPECT_EQ(loop_partition(f).get(), f.get());
}

TEST(LoopPartition, LeavesUnprovableConditionsAlone) {
    Buffer A("A", f32, {Expr(8)});
    Var i("i");
    Stmt s = For::make(
        i, Expr(0), Expr(8), ForKind::Serial,
        IfThenElse::make(floormod(i, 2) == 0,
                         BufferStore::make(A, BufferLoad::make(A, {i}) * Expr(2.0), {i})));
    PrimFunc f("f", {A}, s);
    PrimFunc g = loop_partition(f);
    EXPECT_EQ(g.get(), f.get());
}

}  // namespace
}  // namespace tessera::tir
