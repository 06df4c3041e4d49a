// Tensor expressions and their lowering to a TensorIR-style PrimFunc.
#include "engine/te/tensor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "engine/core/error.h"
#include "engine/tir/interpreter.h"
#include "engine/tir/printer.h"
#include "engine/tir/verify.h"

namespace tessera::te {
namespace {

using tir::Block;
using tir::BlockRealize;
using tir::For;
using tir::PrimFunc;

std::vector<float> random_data(size_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> mag(0.5f, 1.5f);
    std::bernoulli_distribution sign(0.5);
    std::vector<float> v(n);
    for (float& x : v) x = sign(rng) ? mag(rng) : -mag(rng);
    return v;
}

TEST(Compute, RecordsInputsAndAxes) {
    Tensor A = placeholder({3, 4}, DataType::float32(), "A");
    Tensor B = placeholder({4}, DataType::float32(), "B");
    Tensor C = compute(
        {3, 4}, [&](const std::vector<Var>& i) { return A(i[0], i[1]) * B(i[1]) + A(i[0], i[1]); },
        "C", "broadcast");
    ASSERT_EQ(C->inputs.size(), 2u);
    EXPECT_TRUE(C->inputs[0].same_as(A));
    EXPECT_TRUE(C->inputs[1].same_as(B));
    ASSERT_EQ(C->axis.size(), 2u);
    EXPECT_EQ(C->axis[0].var.name(), "i0");
    EXPECT_EQ(C->axis[1].var.name(), "i1");
    EXPECT_EQ(C->tag, "broadcast");
    EXPECT_FALSE(C->is_placeholder);
    EXPECT_EQ(C.shape(), (std::vector<int64_t>{3, 4}));
    EXPECT_EQ(C.dtype(), DataType::float32());
    EXPECT_TRUE(A->inputs.empty());
}

TEST(Compute, ReductionHasReduceTagAndAxis) {
    Tensor A = placeholder({3, 4}, DataType::float32(), "A");
    IterVar k = reduce_axis(4, "k");
    Tensor S = compute(
        {3}, [&](const std::vector<Var>& i) { return sum(A(i[0], k.var), {k}); }, "S");
    EXPECT_EQ(S->tag, "reduce");
    const tir::Reduce* r = S->body.as<tir::Reduce>();
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->axis.size(), 1u);
    EXPECT_EQ(k.kind, tir::IterKind::Reduce);
}

TEST(CreatePrimFunc, IntermediateStagesBecomeRootAllocations) {
    Tensor A = placeholder({4}, DataType::float32(), "A");
    Tensor B = compute(
        {4}, [&](const std::vector<Var>& i) { return A(i[0]) * 2.0; }, "B");
    Tensor C = compute(
        {4}, [&](const std::vector<Var>& i) { return B(i[0]) + A(i[0]); }, "C");
    PrimFunc f = create_prim_func({A, C}, "two");
    ASSERT_EQ(f->params.size(), 2u);
    EXPECT_TRUE(f->params[0].same_as(A->buffer));
    EXPECT_TRUE(f->params[1].same_as(C->buffer));
    const BlockRealize* root_realize = f->body.as<BlockRealize>();
    ASSERT_NE(root_realize, nullptr);
    const Block* root = root_realize->block_node();
    EXPECT_EQ(root->name, "root");
    EXPECT_TRUE(root->iter_vars.empty());
    ASSERT_EQ(root->alloc_buffers.size(), 1u);
    EXPECT_TRUE(root->alloc_buffers[0].same_as(B->buffer));
    const tir::SeqStmt* seq = root->body.as<tir::SeqStmt>();
    ASSERT_NE(seq, nullptr);
    ASSERT_EQ(seq->seq.size(), 2u);  // B's nest, then C's
    const For* loop = seq->seq[0].as<For>();
    ASSERT_NE(loop, nullptr);
    EXPECT_EQ(loop->body.as<BlockRealize>()->block_node()->name, "B");
    tir::verify(f);

    std::vector<float> a = random_data(4, 1), c(4, 0.0f);
    tir::interpret(f, {a.data(), c.data()});
    for (int x = 0; x < 4; ++x) EXPECT_FLOAT_EQ(c[x], a[x] * 2.0f + a[x]);
}

TEST(CreatePrimFunc, ReductionBlockHasInitAndReduceIterVar) {
    Tensor A = placeholder({2, 5}, DataType::float32(), "A");
    IterVar k = reduce_axis(5, "k");
    Tensor M = compute(
        {2}, [&](const std::vector<Var>& i) { return min(A(i[0], k.var), {k}); }, "M");
    PrimFunc f = create_prim_func({A, M}, "rowmin");
    std::string text = tir::print(f);
    EXPECT_NE(text.find("k_1 = T.axis.reduce(5, k)"), std::string::npos) << text;
    EXPECT_NE(text.find("with T.init():"), std::string::npos) << text;
    EXPECT_NE(text.find("M[i0_1] = T.min(M[i0_1], A[i0_1, k_1])"), std::string::npos) << text;
    std::vector<float> a = random_data(10, 2), m(2, 0.0f);
    tir::interpret(f, {a.data(), m.data()});
    for (int r = 0; r < 2; ++r) {
        float want = a[r * 5];
        for (int x = 1; x < 5; ++x) want = std::min(want, a[r * 5 + x]);
        EXPECT_EQ(m[r], want);
    }
}

TEST(CreatePrimFunc, ReadRegionCoversWholeBufferForSeveralAccesses) {
    Tensor A = placeholder({6}, DataType::float32(), "A");
    Tensor B = compute(
        {5}, [&](const std::vector<Var>& i) { return A(i[0]) + A(i[0] + 1); }, "B");
    PrimFunc f = create_prim_func({A, B}, "stencil");
    std::string text = tir::print(f);
    EXPECT_NE(text.find("T.reads(A[0:6])"), std::string::npos) << text;
    EXPECT_NE(text.find("T.writes(B[i0_1])"), std::string::npos) << text;
    std::vector<float> a = random_data(6, 3), b(5, 0.0f);
    tir::interpret(f, {a.data(), b.data()});
    for (int x = 0; x < 5; ++x) EXPECT_FLOAT_EQ(b[x], a[x] + a[x + 1]);
}

TEST(CreatePrimFunc, GuardedReadUsesWholeBufferRegion) {
    Tensor A = placeholder({6}, DataType::float32(), "A");
    Tensor P = compute(
        {8},
        [&](const std::vector<Var>& i) {
            return tir::if_then_else(i[0] >= 1 && i[0] < 7, A(i[0] - 1), 0.0);
        },
        "P");
    PrimFunc f = create_prim_func({A, P}, "pad");
    std::string text = tir::print(f);
    EXPECT_NE(text.find("T.reads(A[0:6])"), std::string::npos) << text;
    tir::verify(f);
    std::vector<float> a = random_data(6, 4), p(8, 5.0f);
    tir::interpret(f, {a.data(), p.data()});
    for (int x = 0; x < 8; ++x) EXPECT_EQ(p[x], x >= 1 && x < 7 ? a[x - 1] : 0.0f) << x;
}

TEST(CreatePrimFunc, PlaceholderMissingFromArgumentsIsAnError) {
    Tensor A = placeholder({4}, DataType::float32(), "A");
    Tensor W = placeholder({4}, DataType::float32(), "W");
    Tensor C = compute(
        {4}, [&](const std::vector<Var>& i) { return A(i[0]) * W(i[0]); }, "C");
    try {
        create_prim_func({A, C}, "f");
        FAIL() << "expected an error for the missing placeholder W";
    } catch (const InternalError& e) {
        EXPECT_NE(std::string(e.what()).find("placeholder W"), std::string::npos) << e.what();
    }
}

TEST(Tensor, WrongIndexCountIsAnError) {
    Tensor A = placeholder({4, 4}, DataType::float32(), "A");
    EXPECT_THROW(A(Expr(1)), InternalError);
}

}  // namespace
}  // namespace tessera::te
