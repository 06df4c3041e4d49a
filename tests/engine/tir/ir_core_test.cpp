// Loop-IR node construction, type rules, visitor/mutator identity and substitution.
#include <gtest/gtest.h>

#include "engine/core/error.h"
#include "engine/tir/functor.h"
#include "engine/tir/op.h"

using namespace tessera;
using namespace tessera::tir;

TEST(IrCore, ConstantTakesTheOtherOperandsType) {
    Buffer a("A", DataType::float32(), {Expr(8)});
    Var i("i");
    Expr e = BufferLoad::make(a, {i}) + 1;
    EXPECT_EQ(e.dtype(), DataType::float32());
    const Add* add = e.as<Add>();
    ASSERT_TRUE(add);
    ASSERT_TRUE(add->b.as<FloatImm>());
    EXPECT_EQ(add->b.as<FloatImm>()->value, 1.0);
}

TEST(IrCore, MismatchedTypesAreAnInternalError) {
    Buffer a("A", DataType::float32(), {Expr(8)});
    Var i("i");
    EXPECT_THROW(Add::make(i, BufferLoad::make(a, {i})), InternalError);
}

TEST(IrCore, ComparisonsYieldBool) {
    Var i("i");
    EXPECT_EQ((i < 3).dtype(), DataType::boolean());
    EXPECT_EQ(((i < 3) && (i >= 0)).dtype(), DataType::boolean());
}

TEST(IrCore, MutatorReturnsSameNodeWhenNothingChanges) {
    Var i("i"), j("j");
    Buffer a("A", DataType::float32(), {Expr(4), Expr(4)});
    Stmt body = BufferStore::make(a, BufferLoad::make(a, {j, i}) * 2.0f, {i, j});
    Stmt loop = For::make(i, 0, 4, ForKind::Serial, For::make(j, 0, 4, ForKind::Serial, body));
    IRMutator identity;
    EXPECT_TRUE(identity.mutate(loop).same_as(loop));
    Var k("k");
    EXPECT_TRUE(substitute(loop, {{k.get(), Expr(1)}}).same_as(loop));
}

TEST(IrCore, SubstituteReplacesByIdentityNotName) {
    Var i1("i"), i2("i");
    Expr e = i1 * 4 + i2;
    Expr s = substitute(e, {{i1.get(), Expr(3)}});
    const Add* add = s.as<Add>();
    ASSERT_TRUE(add);
    EXPECT_TRUE(add->b.same_as(i2));
    const Mul* mul = add->a.as<Mul>();
    ASSERT_TRUE(mul);
    EXPECT_TRUE(is_const_int(mul->a, 3));
}

TEST(IrCore, SeqStmtFlattensAndUnwrapsSingletons) {
    Buffer a("A", DataType::float32(), {Expr(2)});
    Stmt s0 = BufferStore::make(a, make_const(DataType::float32(), 1), {Expr(0)});
    Stmt s1 = BufferStore::make(a, make_const(DataType::float32(), 2), {Expr(1)});
    EXPECT_TRUE(SeqStmt::make({s0}).same_as(s0));
    Stmt nested = SeqStmt::make({SeqStmt::make({s0, s1}), s0});
    ASSERT_TRUE(nested.as<SeqStmt>());
    EXPECT_EQ(nested.as<SeqStmt>()->seq.size(), 3u);
}

TEST(IrCore, PostOrderVisitsChildrenFirst) {
    Var i("i");
    Expr e = (i + 1) * 2;
    Stmt s = Evaluate::make(e);
    std::vector<NodeType> order;
    post_order_visit(s, [&](const Object* n) { order.push_back(n->node_type); });
    ASSERT_FALSE(order.empty());
    EXPECT_EQ(order.front(), NodeType::Variable);
    EXPECT_EQ(order.back(), NodeType::Evaluate);
}

TEST(IrCore, ReduceIdentityAndCombine) {
    Buffer a("A", DataType::float32(), {Expr(4)});
    IterVar k{Var("k"), Range::from_extent(4), IterKind::Reduce, ""};
    Expr r = Reduce::make(ReduceKind::Max, BufferLoad::make(a, {k.var}), {k});
    const Reduce* red = r.as<Reduce>();
    ASSERT_TRUE(red);
    ASSERT_TRUE(red->identity().as<FloatImm>());
    EXPECT_LT(red->identity().as<FloatImm>()->value, -1e38);
    EXPECT_TRUE(red->combine(Expr(1.0f), Expr(2.0f)).as<Max>());
}

TEST(IrCore, DataTypeRoundTripsThroughText) {
    for (DataType t : {DataType::float32(), DataType::int64(), DataType::boolean(),
                       DataType::float32(8), DataType::uint8()}) {
        EXPECT_EQ(DataType::parse(t.str()), t) << t.str();
    }
    EXPECT_THROW(DataType::parse("floaty"), UserError);
}

TEST(IrCore, BlockRealizeChecksBindingCount) {
    Buffer a("A", DataType::float32(), {Expr(4)});
    Var v("v");
    IterVar iv{v, Range::from_extent(4), IterKind::Spatial, ""};
    Stmt block = Block::make("B", {iv}, {}, {}, Stmt(),
                             BufferStore::make(a, make_const(DataType::float32(), 1), {v}));
    EXPECT_THROW(BlockRealize::make({}, Expr(), block), InternalError);
    Var i("i");
    Stmt ok = BlockRealize::make({i}, Expr(), block);
    EXPECT_TRUE(ok.as<BlockRealize>()->predicate.as<IntImm>());
}
