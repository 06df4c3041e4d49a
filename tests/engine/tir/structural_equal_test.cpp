// Alpha-equivalent structural equality and hashing of PrimFuncs.
#include <gtest/gtest.h>

#include "engine/schedule/schedule.h"
#include "engine/te/tensor.h"
#include "engine/tir/structural_equal.h"

using namespace tessera;

namespace {
// A fresh matmul PrimFunc each call: new Var and Buffer nodes every time.
tir::PrimFunc matmul(int64_t m, int64_t n, int64_t k) {
    te::Tensor a = te::placeholder({m, k}, tir::DataType::float32(), "A");
    te::Tensor b = te::placeholder({k, n}, tir::DataType::float32(), "B");
    tir::IterVar r = te::reduce_axis(k, "k");
    te::Tensor c = te::compute(
        {m, n}, [&](const std::vector<tir::Var>& i) { return te::sum(a(i[0], r.var) * b(r.var, i[1]), {r}); },
        "C");
    return te::create_prim_func({a, b, c}, "matmul");
}
}  // namespace

TEST(StructuralEqual, IndependentLoweringsAreEqualAndHashAlike) {
    tir::PrimFunc f = matmul(16, 8, 4), g = matmul(16, 8, 4);
    EXPECT_NE(f.get(), g.get());
    EXPECT_TRUE(tir::structural_equal(f, g));
    EXPECT_EQ(tir::structural_hash(f), tir::structural_hash(g));
}

TEST(StructuralEqual, DifferentShapesDiffer) {
    tir::PrimFunc f = matmul(16, 8, 4), g = matmul(16, 8, 5);
    EXPECT_FALSE(tir::structural_equal(f, g));
    EXPECT_NE(tir::structural_hash(f), tir::structural_hash(g));
}

TEST(StructuralEqual, ReplayedTraceEqualsTheOriginalSchedule) {
    schedule::Schedule s(matmul(32, 32, 8));
    auto loops = s.get_loops("C");
    auto ij = s.split(loops[0], {-1, 8});
    s.reorder({ij[0], loops[1], ij[1]});
    s.vectorize(loops[1]);
    schedule::Schedule replayed = s.trace().apply(matmul(32, 32, 8));
    EXPECT_TRUE(tir::structural_equal(s.func(), replayed.func()));
    EXPECT_EQ(tir::structural_hash(s.func()), tir::structural_hash(replayed.func()));
}

TEST(StructuralEqual, ScheduledDiffersFromUnscheduled) {
    tir::PrimFunc f = matmul(32, 32, 8);
    schedule::Schedule s(f);
    s.split(s.get_loops("C")[0], {4, 8});
    EXPECT_FALSE(tir::structural_equal(f, s.func()));
    EXPECT_NE(tir::structural_hash(f), tir::structural_hash(s.func()));
    schedule::Schedule other(matmul(32, 32, 8));
    other.split(other.get_loops("C")[0], {8, 4});
    EXPECT_FALSE(tir::structural_equal(s.func(), other.func()));
}

TEST(StructuralEqual, StatementsCompareUpToBoundVariables) {
    tir::Buffer a("A", tir::DataType::float32(), {tir::Expr(8)});
    auto loop = [&] {
        tir::Var i("i");
        return tir::For::make(i, 0, 8, tir::ForKind::Serial,
                              tir::BufferStore::make(a, tir::BufferLoad::make(a, {i}) * 2.0f, {i}));
    };
    EXPECT_TRUE(tir::structural_equal(loop(), loop()));
    tir::Var j("j");
    tir::Stmt other = tir::For::make(j, 0, 8, tir::ForKind::Parallel,
                                     tir::BufferStore::make(a, tir::BufferLoad::make(a, {j}) * 2.0f, {j}));
    EXPECT_FALSE(tir::structural_equal(loop(), other));
}
