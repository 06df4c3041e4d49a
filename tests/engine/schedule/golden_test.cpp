// Golden tests: the seeds' schedules print the seeds' loop nests.
#include <gtest/gtest.h>

#include "engine/schedule/schedule.h"
#include "engine/te/tensor.h"
#include "engine/tir/printer.h"

namespace tessera::schedule {
namespace {

using tir::DataType;
using tir::Var;

tir::PrimFunc add_one(int64_t n) {
    te::Tensor A = te::placeholder({n}, DataType::float32(), "A");
    te::Tensor B = te::compute({n}, [&](const std::vector<Var>& i) { return A(i[0]) + 1.0; }, "B");
    return te::create_prim_func({A, B}, "main");
}

tir::PrimFunc matmul(int64_t m, int64_t n, int64_t k) {
    te::Tensor A = te::placeholder({m, k}, DataType::float32(), "A");
    te::Tensor B = te::placeholder({k, n}, DataType::float32(), "B");
    tir::IterVar kk = te::reduce_axis(k, "k");
    te::Tensor C = te::compute(
        {m, n}, [&](const std::vector<Var>& i) { return te::sum(A(i[0], kk.var) * B(kk.var, i[1]), {kk}); },
        "C");
    return te::create_prim_func({A, B, C}, "matmul");
}

const char* kHeader8 =
    "@T.prim_func\n"
    "def main(A: T.Buffer((8,), \"float32\"), B: T.Buffer((8,), \"float32\")):\n"
    "    # with T.block(\"root\")\n";

// Seed 002: sch.split(i, factors=[2, 2, 2]); sch.reorder(i_0, i_2, i_1);
// sch.bind(i_0, "blockIdx.x"); sch.bind(i_2, "threadIdx.x").
TEST(ScheduleGolden, Seed002SplitReorderBind) {
    Schedule s(add_one(8));
    auto loops = s.get_loops(s.get_block("B"));
    auto i = s.split(loops[0], {2, 2, 2});
    EXPECT_EQ(i, (std::vector<std::string>{"i0_0", "i0_1", "i0_2"}));
    std::string block_body =
        "            i0 = T.axis.spatial(8, i0_0 * 4 + i0_1 * 2 + i0_2)\n"
        "            T.reads(A[i0])\n"
        "            T.writes(B[i0])\n"
        "            B[i0] = A[i0] + T.float32(1)\n";
    EXPECT_EQ(tir::print(s.func()), std::string(kHeader8) +
                                        "    for i0_0, i0_1, i0_2 in T.grid(2, 2, 2):\n"
                                        "        with T.block(\"B\"):\n" + block_body);
    s.reorder({i[0], i[2], i[1]});
    EXPECT_EQ(tir::print(s.func()), std::string(kHeader8) +
                                        "    for i0_0, i0_2, i0_1 in T.grid(2, 2, 2):\n"
                                        "        with T.block(\"B\"):\n" + block_body);
    s.bind(i[0], "blockIdx.x");
    s.bind(i[2], "threadIdx.x");
    EXPECT_EQ(tir::print(s.func()),
              std::string(kHeader8) +
                  "    for i0_0 in T.thread_binding(2, thread=\"blockIdx.x\"):\n"
                  "        for i0_2 in T.thread_binding(2, thread=\"threadIdx.x\"):\n"
                  "            for i0_1 in T.serial(2):\n"
                  "                with T.block(\"B\"):\n"
                  "                    i0 = T.axis.spatial(8, i0_0 * 4 + i0_1 * 2 + i0_2)\n"
                  "                    T.reads(A[i0])\n"
                  "                    T.writes(B[i0])\n"
                  "                    B[i0] = A[i0] + T.float32(1)\n");
    EXPECT_EQ(s.trace().steps.size(), 4u);
}

const char* kMatmulHeader =
    "@T.prim_func\n"
    "def matmul(A: T.Buffer((1024, 1024), \"float32\"), B: T.Buffer((1024, 1024), \"float32\"), "
    "C: T.Buffer((1024, 1024), \"float32\")):\n"
    "    # with T.block(\"root\")\n";

// Seed 003: io, ii = s[C].split(i, factor=32).
TEST(ScheduleGolden, Seed003SplitByThirtyTwo) {
    Schedule s(matmul(1024, 1024, 1024));
    auto l = s.get_loops("C");
    EXPECT_EQ(l, (std::vector<std::string>{"i0", "i1", "k"}));
    auto io = s.split(l[0], {-1, 32});
    EXPECT_EQ(io, (std::vector<std::string>{"i0_0", "i0_1"}));
    EXPECT_EQ(tir::print(s.func()),
              std::string(kMatmulHeader) +
                  "    for i0_0, i0_1, i1, k in T.grid(32, 32, 1024, 1024):\n"
                  "        with T.block(\"C\"):\n"
                  "            i0 = T.axis.spatial(1024, i0_0 * 32 + i0_1)\n"
                  "            i1_1 = T.axis.spatial(1024, i1)\n"
                  "            k_1 = T.axis.reduce(1024, k)\n"
                  "            T.reads(A[i0, k_1], B[k_1, i1_1])\n"
                  "            T.writes(C[i0, i1_1])\n"
                  "            with T.init():\n"
                  "                C[i0, i1_1] = T.float32(0)\n"
                  "            C[i0, i1_1] = C[i0, i1_1] + A[i0, k_1] * B[k_1, i1_1]\n");
}

// Seed 003: io, jo, ii, ji = s[C].tile(i, j, 32, 32), and the same nest by
// split + split + reorder(io, jo, ii, ji).
TEST(ScheduleGolden, Seed003TileAndReorder) {
    std::string want = std::string(kMatmulHeader) +
                       "    for i0_0, i1_0, i0_1, i1_1, k in T.grid(32, 32, 32, 32, 1024):\n"
                       "        with T.block(\"C\"):\n"
                       "            i0 = T.axis.spatial(1024, i0_0 * 32 + i0_1)\n"
                       "            i1 = T.axis.spatial(1024, i1_0 * 32 + i1_1)\n"
                       "            k_1 = T.axis.reduce(1024, k)\n"
                       "            T.reads(A[i0, k_1], B[k_1, i1])\n"
                       "            T.writes(C[i0, i1])\n"
                       "            with T.init():\n"
                       "                C[i0, i1] = T.float32(0)\n"
                       "            C[i0, i1] = C[i0, i1] + A[i0, k_1] * B[k_1, i1]\n";
    Schedule s(matmul(1024, 1024, 1024));
    auto t = s.tile("i0", "i1", 32, 32);
    EXPECT_EQ(t, (std::vector<std::string>{"i0_0", "i1_0", "i0_1", "i1_1"}));
    EXPECT_EQ(tir::print(s.func()), want);
    Schedule s2(matmul(1024, 1024, 1024));
    auto io = s2.split("i0", {-1, 32});
    auto jo = s2.split("i1", {-1, 32});
    s2.reorder({io[0], jo[0], io[1], jo[1]});
    EXPECT_EQ(tir::print(s2.func()), want);
}

// A non-dividing split keeps every iteration in bounds with a predicate.
TEST(ScheduleGolden, NonDividingSplitAddsPredicate) {
    Schedule s(add_one(10));
    s.split("i0", {-1, 4});
    std::string text = tir::print(s.func());
    EXPECT_NE(text.find("for i0_0, i0_1 in T.grid(3, 4):"), std::string::npos) << text;
    EXPECT_NE(text.find("T.where(i0_0 * 4 + i0_1 < 10)"), std::string::npos) << text;
}

}  // namespace
}  // namespace tessera::schedule
