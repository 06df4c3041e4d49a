// infer_regions, the pass registry, the PassManager and the default lowering
// pipeline, checked against the interpreter on the unlowered functions.
#include <gtest/gtest.h>

#include <cstdlib>

#include "engine/core/error.h"
#include "engine/te/tensor.h"
#include "engine/tir/op.h"
#include "engine/tir/passes/infer_regions.h"
#include "engine/tir/passes/pass_manager.h"
#include "engine/tir/printer.h"
#include "tests/engine/tir/passes/pass_test_util.h"

namespace tessera::tir {
namespace {

using testing::expect_same_results;

const DataType f32 = DataType::float32();

// for i in 4: block B (vi = i): init B[vi] = 0; for k in 8: B[vi] += A[vi, k]
// with empty read/write regions.
PrimFunc row_sum_without_regions() {
    Buffer A("A", f32, {Expr(4), Expr(8)}), B("B", f32, {Expr(4)});
    Var i("i"), vi("vi"), k("k");
    Stmt update = For::make(
        k, Expr(0), Expr(8), ForKind::Serial,
        BufferStore::make(B, BufferLoad::make(B, {vi}) + BufferLoad::make(A, {vi, k}), {vi}));
    Stmt block = Block::make("B", {IterVar{vi, Range::from_extent(Expr(4)), IterKind::Spatial, ""}},
                             {}, {}, BufferStore::make(B, Expr(0.0), {vi}), update);
    Stmt s = For::make(i, Expr(0), Expr(4), ForKind::Serial,
                       BlockRealize::make({i}, IntImm::make(DataType::boolean(), 1), block));
    return PrimFunc("row_sum", {A, B}, s);
}

TEST(InferRegions, RelaxesLoopsInsideTheBlock) {
    PrimFunc f = row_sum_without_regions();
    PrimFunc g = infer_regions(f);
    std::string text = print(g);
    EXPECT_NE(text.find("T.reads(B[vi], A[vi, 0:8])"), std::string::npos) << text;
    EXPECT_NE(text.find("T.writes(B[vi])"), std::string::npos) << text;
    expect_same_results(f, g);
}

TEST(InferRegions, MatchesTheRegionsOfTensorExpressions) {
    te::Tensor A = te::placeholder({5, 6}, f32, "A");
    te::Tensor W = te::placeholder({6, 3}, f32, "W");
    IterVar k = te::reduce_axis(6, "k");
    te::Tensor C = te::compute(
        {5, 3},
        [&](const std::vector<Var>& i) { return te::sum(A(i[0], k.var) * W(k.var, i[1]), {k}); },
        "C");
    PrimFunc f = te::create_prim_func({A, W, C}, "matmul");
    std::string text = print(infer_regions(f));
    // The update reads the accumulator as well (TensorIR convention).
    EXPECT_NE(text.find("T.reads(C[i0_1, i1_1], A[i0_1, k_1], W[k_1, i1_1])"), std::string::npos)
        << text;
    EXPECT_NE(text.find("T.writes(C[i0_1, i1_1])"), std::string::npos) << text;
}

TEST(PassRegistry, EveryPassHasAUniqueNameAndADescription) {
    std::set<std::string> names;
    for (const PassInfo& p : tir_pass_registry()) {
        EXPECT_TRUE(names.insert(p.name).second) << p.name;
        EXPECT_FALSE(p.description.empty()) << p.name;
        EXPECT_TRUE(bool(p.run)) << p.name;
    }
    for (const std::string& p : default_lowering_pipeline()) EXPECT_TRUE(names.count(p)) << p;
    try {
        PassManager pm({"simplify", "vectorise"});
        FAIL() << "unknown pass accepted";
    } catch (const UserError& e) {
        EXPECT_NE(std::string(e.what()).find("unknown tir pass 'vectorise'"), std::string::npos);
        EXPECT_NE(std::string(e.what()).find("vectorize_loops"), std::string::npos);
    }
}

// A split of 10 by 4 with a predicate, inner loop vectorized: TensorIR form.
PrimFunc predicated_split() {
    Buffer A("A", f32, {Expr(10)}), B("B", f32, {Expr(10)});
    Var i0("i0"), i1("i1"), vi("vi");
    Stmt block = Block::make(
        "B", {IterVar{vi, Range::from_extent(Expr(10)), IterKind::Spatial, ""}},
        {BufferRegion{A, {Range{vi, Expr(1)}}}}, {BufferRegion{B, {Range{vi, Expr(1)}}}}, Stmt(),
        BufferStore::make(B, BufferLoad::make(A, {vi}) * Expr(3.0) - Expr(1.0), {vi}));
    Stmt realize = BlockRealize::make({i0 * 4 + i1}, i0 * 4 + i1 < 10, block);
    Stmt s = For::make(i0, Expr(0), Expr(3), ForKind::Serial,
                       For::make(i1, Expr(0), Expr(4), ForKind::Vectorized, realize));
    return PrimFunc("split", {A, B}, s);
}

TEST(PassManager, DefaultPipelinePartitionsAndVectorizes) {
    PrimFunc f = predicated_split();
    PassManager pm(default_lowering_pipeline());
    std::vector<std::string> changed;
    pm.add_after_pass([&](const std::string& name, const PrimFunc&, bool c) {
        if (c) changed.push_back(name);
    });
    PrimFunc g = pm.run(f);
    ASSERT_EQ(pm.records().size(), default_lowering_pipeline().size());
    EXPECT_EQ(pm.records()[0].name, "lower_blocks");
    EXPECT_EQ(changed.front(), "lower_blocks");
    std::string text = print(g->body);
    EXPECT_NE(text.find("B[T.Ramp(i0 * 4, 1, 4)] = A[T.Ramp(i0 * 4, 1, 4)]"), std::string::npos)
        << text;
    EXPECT_EQ(text.find("if "), std::string::npos) << text;  // the tail is unrolled by partition
    expect_same_results(f, g);
}

TEST(PassManager, LowersTensorExpressionsLikeTheInterpreterRunsThem) {
    const int R = 3, L = 7;
    te::Tensor A = te::placeholder({R, L}, f32, "A");
    te::Tensor E = te::compute(
        {R, L}, [&](const std::vector<Var>& i) { return exp(A(i[0], i[1])); }, "E");
    IterVar k = te::reduce_axis(L, "k");
    te::Tensor S = te::compute(
        {R}, [&](const std::vector<Var>& i) { return te::sum(E(i[0], k.var), {k}); }, "S");
    te::Tensor O = te::compute(
        {R, L}, [&](const std::vector<Var>& i) { return E(i[0], i[1]) / S(i[0]); }, "O");
    PrimFunc f = te::create_prim_func({A, O}, "softmax");
    PrimFunc g = lower_for_codegen(f);
    EXPECT_EQ(print(g).find("T.block"), std::string::npos) << print(g);
    expect_same_results(f, g);
}

TEST(PassManager, DebugLevelTwoPrintsIRAfterEachChangingPass) {
    PrimFunc f = predicated_split();
    setenv("TESSERA_DEBUG", "2", 1);
    ::testing::internal::CaptureStderr();
    lower_for_codegen(f);
    std::string err = ::testing::internal::GetCapturedStderr();
    unsetenv("TESSERA_DEBUG");
    EXPECT_NE(err.find("IR after tir pass lower_blocks"), std::string::npos) << err;
    EXPECT_NE(err.find("IR after tir pass vectorize_loops"), std::string::npos) << err;
    ::testing::internal::CaptureStderr();
    lower_for_codegen(f);
    EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
}

}  // namespace
}  // namespace tessera::tir
