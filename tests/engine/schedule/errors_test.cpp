// Every invalid step throws a ScheduleError naming the step and the reason,
// and leaves the function (same node) and the trace unchanged.
#include <gtest/gtest.h>

#include <functional>

#include "engine/schedule/query.h"
#include "engine/schedule/schedule.h"
#include "engine/te/tensor.h"
#include "engine/tir/op.h"
#include "engine/tir/printer.h"

namespace tessera::schedule {
namespace {

using tir::DataType;
using tir::Var;

// A -> E = exp(A) -> C = E @ B, with one step already applied.
tir::PrimFunc two_stage() {
    te::Tensor A = te::placeholder({8, 6}, DataType::float32(), "A");
    te::Tensor B = te::placeholder({6, 4}, DataType::float32(), "B");
    te::Tensor E = te::compute({8, 6}, [&](auto i) { return tir::exp(A(i[0], i[1])); }, "E");
    tir::IterVar k = te::reduce_axis(6, "k");
    te::Tensor C = te::compute(
        {8, 4}, [&](auto i) { return te::sum(E(i[0], k.var) * B(k.var, i[1]), {k}); }, "C");
    return te::create_prim_func({A, B, C}, "f");
}

// Applies `bad` after one valid step and checks message, index and state.
void expect_error(const std::function<void(Schedule&)>& bad, const std::string& primitive,
                  const std::string& reason_part,
                  const std::function<void(Schedule&)>& setup = [](Schedule& s) {
                      s.annotate("C", "note", "x");  // step 0
                  }) {
    Schedule s(two_stage());
    setup(s);
    tir::PrimFunc before = s.func();
    Trace trace_before = s.trace();
    try {
        bad(s);
        ADD_FAILURE() << "no error for " << primitive << " (" << reason_part << ")";
    } catch (const ScheduleError& e) {
        EXPECT_EQ(e.step_index(), 1);
        EXPECT_EQ(e.primitive(), primitive);
        EXPECT_NE(std::string(e.what()).find("schedule step 2 (" + primitive + ")"), std::string::npos)
            << e.what();
        EXPECT_NE(e.reason().find(reason_part), std::string::npos) << e.what();
    }
    EXPECT_TRUE(s.func().get() == before.get()) << primitive << ": the function changed";
    EXPECT_EQ(s.trace().steps, trace_before.steps) << primitive << ": the trace changed";
}

// Loop names: E: i0, i1 ; C: i0_1, i1_1, k.
TEST(ScheduleErrors, UnknownLoopAndBlock) {
    expect_error([](Schedule& s) { s.split("nope", {2, -1}); }, "split", "no loop named 'nope'");
    expect_error([](Schedule& s) { s.compute_inline("nope"); }, "compute_inline", "no block named 'nope'");
    expect_error([](Schedule& s) { s.vectorize("zz"); }, "vectorize", "no loop named 'zz'");
    expect_error([](Schedule& s) { s.annotate("zz", "k", "v"); }, "annotate", "no loop or block named 'zz'");
    expect_error([](Schedule& s) { s.cache_read("nope", 0, "shared"); }, "cache_read", "no block named");
}

TEST(ScheduleErrors, SplitFactors) {
    expect_error([](Schedule& s) { s.split("i0", {0, 8}); }, "split", "factor 0 is invalid");
    expect_error([](Schedule& s) { s.split("i0", {-2, 4}); }, "split", "factor -2 is invalid");
    expect_error([](Schedule& s) { s.split("i0", {-1, -1}); }, "split", "factor -1 is invalid");
    expect_error([](Schedule& s) { s.split("i0", {3, 3}); }, "split", "does not equal the extent");
    expect_error([](Schedule& s) { s.split("i0", {8}); }, "split", "at least two factors");
    // Factors whose product wraps int64 (2^32 * 2^32 = 0) once divided by zero.
    expect_error([](Schedule& s) { s.split("i0", {-1, int64_t(1) << 32, int64_t(1) << 32}); },
                 "split", "the product of the factors exceeds 2^40");
    expect_error([](Schedule& s) { s.split("i0", {int64_t(1) << 32, int64_t(1) << 32}); },
                 "split", "the product of the factors exceeds 2^40");
}

TEST(ScheduleErrors, ReorderAndFuse) {
    expect_error([](Schedule& s) { s.reorder({"i0", "i1_1"}); }, "reorder", "not in one loop nest");
    expect_error([](Schedule& s) { s.reorder({"i0", "i0"}); }, "reorder", "given twice");
    expect_error([](Schedule& s) { s.fuse({"i0_1", "k"}); }, "fuse", "not adjacent perfectly nested");
    expect_error([](Schedule& s) { s.fuse({"i1_1", "k"}); }, "fuse", "spatial and reduction");
}

TEST(ScheduleErrors, ReorderAcrossBlockOrDependency) {
    Schedule s(two_stage());
    s.compute_at("E", "i1_1");  // E now sits inside C's nest, before C
    auto before = s.func();
    try {
        s.reorder({"k", "i0_1"});
        ADD_FAILURE();
    } catch (const ScheduleError& e) {
        EXPECT_NE(e.reason().find("cannot reorder across a dependency"), std::string::npos) << e.what();
    }
    auto eloops = s.get_loops("E");
    ASSERT_FALSE(eloops.empty());
    try {
        s.reorder({eloops.back(), "i0_1"});
        ADD_FAILURE();
    } catch (const ScheduleError& e) {
        EXPECT_NE(e.reason().find("cannot reorder across"), std::string::npos) << e.what();
    }
    EXPECT_TRUE(s.func().get() == before.get());
    EXPECT_EQ(s.trace().steps.size(), 1u);
}

TEST(ScheduleErrors, ReductionLoops) {
    expect_error([](Schedule& s) { s.vectorize("k"); }, "vectorize", "reduction variable 'k' of block 'C'");
    expect_error([](Schedule& s) { s.parallel("k"); }, "parallel", "reduction variable");
    expect_error([](Schedule& s) { s.bind("k", "threadIdx.x"); }, "bind", "reduction variable");
    expect_error([](Schedule& s) { s.compute_inline("C"); }, "compute_inline", "is a reduction");
    expect_error([](Schedule& s) { s.rfactor("i0_1", 0); }, "rfactor", "not a reduction loop");
    expect_error([](Schedule& s) { s.rfactor("k", 5); }, "rfactor", "factor axis 5 is out of range");
    expect_error([](Schedule& s) { s.decompose_reduction("E", "i0"); }, "decompose_reduction", "has no init");
    expect_error([](Schedule& s) { s.decompose_reduction("C", "i0"); }, "decompose_reduction",
                 "does not enclose block 'C'");
}

TEST(ScheduleErrors, BindConflict) {
    expect_error([](Schedule& s) { s.bind("i1_1", "threadIdx.x"); }, "bind", "bind conflict",
                 [](Schedule& s) { s.bind("i0_1", "threadIdx.x"); });
    expect_error([](Schedule& s) { s.bind("i0", "warp.x"); }, "bind", "unknown thread axis 'warp.x'");
}

TEST(ScheduleErrors, ComputeAtIllegalPlaces) {
    expect_error([](Schedule& s) { s.compute_at("E", "i0"); }, "compute_at", "loop nest of block 'E' itself");
    expect_error([](Schedule& s) { s.compute_at("C", "i0"); }, "compute_at", "has no consumer");
    expect_error([](Schedule& s) { s.reverse_compute_at("E", "i0_1"); }, "reverse_compute_at",
                 "does not come after loop");
    expect_error([](Schedule& s) { s.reverse_compute_at("C", "i1"); }, "reverse_compute_at",
                 "does not read 'E' at its iteration variables");
}

TEST(ScheduleErrors, DecomposeUnderARepeatingLoop) {
    // T = row sums, computed at the inner loop of O: the loop j repeats the
    // reduction, so its init cannot move above j.
    te::Tensor A = te::placeholder({4, 6}, DataType::float32(), "A");
    tir::IterVar k = te::reduce_axis(6, "k");
    te::Tensor T = te::compute({4}, [&](auto i) { return te::sum(A(i[0], k.var), {k}); }, "T");
    te::Tensor O = te::compute({4, 5}, [&](auto i) { return T(i[0]) + 1.0; }, "O");
    Schedule s(te::create_prim_func({A, O}, "g"));
    auto ol = s.get_loops("O");
    s.compute_at("T", ol[1]);
    auto before = s.func();
    try {
        s.decompose_reduction("T", "k");
        ADD_FAILURE();
    } catch (const ScheduleError& e) {
        EXPECT_NE(e.reason().find("loop 'k' does not enclose block 'T'"), std::string::npos) << e.what();
    }
    try {
        s.decompose_reduction("T", ol[0]);
        ADD_FAILURE();
    } catch (const ScheduleError& e) {
        EXPECT_NE(e.reason().find("without changing its variables"), std::string::npos) << e.what();
    }
    try {
        s.parallel(ol[1]);
        ADD_FAILURE();
    } catch (const ScheduleError& e) {
        EXPECT_NE(e.reason().find("repeat the reduction of block 'T'"), std::string::npos) << e.what();
    }
    EXPECT_TRUE(s.func().get() == before.get());
    EXPECT_EQ(s.trace().steps.size(), 1u);
}

TEST(ScheduleErrors, InlineAndCache) {
    expect_error([](Schedule& s) { s.reverse_compute_inline("C"); }, "reverse_compute_inline", "is a reduction");
    expect_error([](Schedule& s) { s.cache_read("C", 7, "shared"); }, "cache_read", "read index 7 is out of range");
    expect_error([](Schedule& s) { s.cache_write("C", 0, "texture"); }, "cache_write", "unknown storage scope");
}

TEST(ScheduleErrors, TransformLayout) {
    expect_error(
        [](Schedule& s) {
            s.transform_layout("A", {1, 0});
        },
        "transform_layout", "'A' is a parameter");
    expect_error(
        [](Schedule& s) {
            s.transform_layout("Q", {1, 0});
        },
        "transform_layout", "no buffer named 'Q'");
    expect_error([](Schedule& s) { s.transform_layout("E", {0}); }, "transform_layout",
                 "has 2 dimensions; the permutation names 1");
    expect_error(
        [](Schedule& s) {
            s.transform_layout("E", {1, 1});
        },
        "transform_layout", "dimension 1 appears twice");
    expect_error(
        [](Schedule& s) {
            s.transform_layout("E", {0, 2});
        },
        "transform_layout", "dimension 2 is out of range");
}

TEST(ScheduleErrors, ComputeAtLoopNotEnclosingConsumer) {
    // Two consumers of E in separate nests: a loop of one does not enclose the other.
    te::Tensor A = te::placeholder({8}, DataType::float32(), "A");
    te::Tensor E = te::compute({8}, [&](auto i) { return A(i[0]) * 2.0; }, "E");
    te::Tensor P = te::compute({8}, [&](auto i) { return E(i[0]) + 1.0; }, "P");
    te::Tensor Q = te::compute({8}, [&](auto i) { return E(i[0]) + P(i[0]); }, "Q");
    Schedule s(te::create_prim_func({A, Q}, "g"));
    auto before = s.func();
    try {
        s.compute_at("E", s.get_loops("P")[0]);
        ADD_FAILURE();
    } catch (const ScheduleError& e) {
        EXPECT_NE(e.reason().find("does not enclose consumer block 'Q'"), std::string::npos) << e.what();
        EXPECT_EQ(e.step_index(), 0);
    }
    EXPECT_TRUE(s.func().get() == before.get());
    EXPECT_TRUE(s.trace().steps.empty());
}

TEST(ScheduleErrors, ReplayNamesTheFailingStep) {
    Trace t;
    Step split, vec, bad;
    split.op = "split", split.loops = {"i0"}, split.ints = {2, 4};
    vec.op = "vectorize", vec.loops = {"no_such_loop"};
    bad.op = "frobnicate";
    t.steps = {split, vec};
    try {
        t.apply(two_stage());
        ADD_FAILURE();
    } catch (const ScheduleError& e) {
        EXPECT_EQ(e.step_index(), 1);
        EXPECT_EQ(e.primitive(), "vectorize");
    }
    t.steps[1] = bad;
    try {
        t.apply(two_stage());
        ADD_FAILURE();
    } catch (const ScheduleError& e) {
        EXPECT_NE(std::string(e.what()).find("unknown primitive 'frobnicate'"), std::string::npos);
    }
}

}  // namespace
}  // namespace tessera::schedule

namespace tessera::schedule {
namespace {
// A zero-size tensor (ONNX allows them) has loops of extent 0: splitting one
// is refused instead of dividing by zero.
TEST(ScheduleErrors, SplitOfAnEmptyLoopIsRefused) {
    te::Tensor A = te::placeholder({0, 4}, tir::DataType::float32(), "A");
    te::Tensor B = te::compute({0, 4}, [&](auto i) { return A(i[0], i[1]) + 1.0f; }, "B");
    Schedule s(te::create_prim_func({A, B}, "empty"));
    tir::PrimFunc before = s.func();
    std::vector<std::string> loops = s.get_loops("B");
    try {
        s.split(loops[0], {-1, 8});
        ADD_FAILURE() << "split of an extent-0 loop was accepted";
    } catch (const ScheduleError& e) {
        EXPECT_NE(e.reason().find("extent 0"), std::string::npos) << e.what();
    }
    EXPECT_TRUE(s.func().get() == before.get());
}
}  // namespace
}  // namespace tessera::schedule

namespace tessera::schedule {
namespace {
// Splitting or fusing a parallel (vectorized, unrolled, bound) loop applies,
// as in TVM, with serial loops: kind_dropped_by says so, so that the editor
// can tell the user; a serial loop or another primitive drops nothing.
TEST(ScheduleQuery, ASplitOrFuseOfAMarkedLoopSaysItsKindIsDropped) {
    Schedule s(two_stage());
    const std::vector<std::string> loops = s.get_loops("C");  // i0_1, i1_1, k
    auto step = [](std::string op, std::vector<std::string> on, std::vector<int64_t> ints) {
        Step st;
        st.op = std::move(op);
        st.loops = std::move(on);
        st.ints = std::move(ints);
        return st;
    };
    const Step split = step("split", {loops[0]}, {2, -1});
    EXPECT_EQ(kind_dropped_by(s.func(), split), "");
    s.parallel(loops[0]);
    EXPECT_EQ(kind_dropped_by(s.func(), split),
              "loop '" + loops[0] + "' was parallel: its parts are serial; mark one of them again");
    const Step fuse = step("fuse", {loops[0], loops[1]}, {});
    EXPECT_NE(kind_dropped_by(s.func(), fuse).find("was parallel: the fused loop is serial"),
              std::string::npos);
    const Step vectorize = step("vectorize", {loops[0]}, {});
    EXPECT_EQ(kind_dropped_by(s.func(), vectorize), "");
    s.unroll(loops[1]);
    const Step split_inner = step("split", {loops[1]}, {2, -1});
    EXPECT_NE(kind_dropped_by(s.func(), split_inner).find("was unrolled"), std::string::npos);
    // And the split really leaves serial loops.
    s.split(loops[0], {2, -1});
    EXPECT_EQ(tir::print(s.func()).find("parallel"), std::string::npos) << tir::print(s.func());
}
}  // namespace
}  // namespace tessera::schedule
