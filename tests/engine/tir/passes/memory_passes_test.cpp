// storage_rewrite, remove_no_op and insert_shared_syncs: expected IR and the
// same results as the input under the interpreter.
#include <gtest/gtest.h>

#include "engine/te/tensor.h"
#include "engine/tir/op.h"
#include "engine/tir/passes/insert_shared_syncs.h"
#include "engine/tir/passes/lower_blocks.h"
#include "engine/tir/passes/remove_no_op.h"
#include "engine/tir/passes/storage_rewrite.h"
#include "engine/tir/printer.h"
#include "tests/engine/tir/passes/pass_test_util.h"

namespace tessera::tir {
namespace {

using testing::expect_same_results;

const DataType f32 = DataType::float32();

size_t count(const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
    return n;
}

// A -> T1 -> T2 -> T3 -> B: T3 can live in T1's memory.
PrimFunc chain_of_temporaries() {
    te::Tensor A = te::placeholder({6, 5}, f32, "A");
    auto stage = [](const te::Tensor& in, double k, const char* name) {
        return te::compute(
            {6, 5}, [&](const std::vector<Var>& i) { return in(i[0], i[1]) * Expr(k) + Expr(0.5); },
            name);
    };
    te::Tensor T1 = stage(A, 2.0, "T1");
    te::Tensor T2 = stage(T1, -1.5, "T2");
    te::Tensor T3 = stage(T2, 3.0, "T3");
    te::Tensor B = stage(T3, 0.25, "B");
    return te::create_prim_func({A, B}, "chain");
}

TEST(StorageRewrite, ReusesTheMemoryOfADeadTemporary) {
    PrimFunc f = chain_of_temporaries();
    PrimFunc lowered = lower_blocks(f);
    EXPECT_EQ(count(print(lowered), "T.allocate"), 3u) << print(lowered);
    PrimFunc g = storage_rewrite(lowered);
    std::string text = print(g);
    EXPECT_EQ(count(text, "T.allocate"), 2u) << text;
    EXPECT_EQ(text.find("T3["), std::string::npos) << text;  // T3 now lives in T1
    expect_same_results(f, g);
}

TEST(StorageRewrite, HoistsAllocationsOutOfSerialLoopsButNotParallelOnes) {
    Buffer A("A", f32, {Expr(8)}), B("B", f32, {Expr(8)});
    Buffer T("T", f32, {Expr(1)}, "local"), U("U", f32, {Expr(1)}, "local");
    Var i("i"), j("j");
    auto body = [&](const Buffer& tmp, const Var& v) {
        return Allocate::make(
            tmp, SeqStmt::make(
                     {BufferStore::make(tmp, BufferLoad::make(A, {v}) * Expr(2.0), {Expr(0)}),
                      BufferStore::make(B, BufferLoad::make(tmp, {Expr(0)}) + Expr(1.0), {v})}));
    };
    Stmt s = SeqStmt::make({For::make(i, Expr(0), Expr(8), ForKind::Serial, body(T, i)),
                            For::make(j, Expr(0), Expr(8), ForKind::Parallel, body(U, j))});
    PrimFunc f("f", {A, B}, s);
    PrimFunc g = storage_rewrite(f);
    std::string text = print(g->body);
    EXPECT_EQ(text.rfind("T = T.allocate", 0), 0u) << text;  // hoisted to the top
    EXPECT_NE(text.find("for j in T.parallel(8):\n    U = T.allocate"), std::string::npos) << text;
    expect_same_results(f, g);
}

TEST(RemoveNoOp, DropsSelfStoresEmptyLoopsAndFalseBranches) {
    Buffer A("A", f32, {Expr(8)});
    Var i("i"), j("j"), k("k");
    Stmt keep = BufferStore::make(A, BufferLoad::make(A, {i}) + Expr(1.0), {i});
    Stmt s = SeqStmt::make({
        For::make(i, Expr(0), Expr(8), ForKind::Serial, keep),
        For::make(j, Expr(0), Expr(8), ForKind::Serial,
                  BufferStore::make(A, BufferLoad::make(A, {j}), {j})),
        For::make(k, Expr(0), Expr(0), ForKind::Serial, BufferStore::make(A, Expr(3.0), {k})),
        IfThenElse::make(IntImm::make(DataType::boolean(), 0),
                         BufferStore::make(A, Expr(5.0), {Expr(0)})),
        Evaluate::make(Expr(0)),
    });
    PrimFunc f("f", {A}, s);
    PrimFunc g = remove_no_op(f);
    EXPECT_EQ(print(g->body), "for i in T.serial(8):\n    A[i] = A[i] + T.float32(1)\n");
    expect_same_results(f, g);
    // Nothing left at all.
    PrimFunc empty("e", {A}, SeqStmt::make({s.as<SeqStmt>()->seq[1], s.as<SeqStmt>()->seq[2]}));
    EXPECT_EQ(print(remove_no_op(empty)->body), "T.evaluate(0)\n");
}

TEST(InsertSharedSyncs, BarrierBetweenSharedWriteAndRead) {
    Buffer A("A", f32, {Expr(8)}), B("B", f32, {Expr(8)});
    Buffer S("S", f32, {Expr(4)}, "shared");
    Var bx("bx"), tx("tx"), ty("ty");
    Stmt load =
        For::make(tx, Expr(0), Expr(4), ForKind::ThreadBinding,
                  BufferStore::make(S, BufferLoad::make(A, {bx * 4 + tx}), {tx}), "threadIdx.x");
    Stmt use =
        For::make(ty, Expr(0), Expr(4), ForKind::ThreadBinding,
                  BufferStore::make(B, BufferLoad::make(S, {3 - ty}) * Expr(2.0), {bx * 4 + ty}),
                  "threadIdx.x");
    Stmt s = For::make(bx, Expr(0), Expr(2), ForKind::ThreadBinding,
                       Allocate::make(S, SeqStmt::make({load, use})), "blockIdx.x");
    PrimFunc f("f", {A, B}, s);
    PrimFunc g = insert_shared_syncs(f);
    std::string text = print(g->body);
    EXPECT_EQ(count(text, "tir.tvm_storage_sync"), 1u) << text;
    EXPECT_LT(text.find("S[tx] ="), text.find("tir.tvm_storage_sync")) << text;
    EXPECT_LT(text.find("tir.tvm_storage_sync"), text.find("B[bx * 4 + ty]")) << text;
    expect_same_results(f, g);
    // Outside thread loops nothing changes.
    PrimFunc cpu("cpu", {A, B}, Allocate::make(S, SeqStmt::make({load, use})));
    EXPECT_EQ(insert_shared_syncs(cpu).get(), cpu.get());
}

TEST(InsertSharedSyncs, LoopCarriedReuseGetsABarrierAtTheEnd) {
    Buffer A("A", f32, {Expr(16)}), B("B", f32, {Expr(16)});
    Buffer S("S", f32, {Expr(4)}, "shared");
    Var tx("tx"), k("k");
    Stmt body = SeqStmt::make({BufferStore::make(S, BufferLoad::make(A, {k * 4 + tx}), {tx}),
                               BufferStore::make(B, BufferLoad::make(S, {tx}), {k * 4 + tx})});
    Stmt s = For::make(tx, Expr(0), Expr(4), ForKind::ThreadBinding,
                       For::make(k, Expr(0), Expr(4), ForKind::Serial, body), "threadIdx.x");
    PrimFunc f("f", {A, B}, Allocate::make(S, s));
    PrimFunc g = insert_shared_syncs(f);
    EXPECT_EQ(count(print(g->body), "tir.tvm_storage_sync"), 2u) << print(g->body);
    expect_same_results(f, g);
}

// Found on an H200: a staged GEMM sample whose B tile depends on the vthread
// index fetched it inside the vthread loop, and the next virtual thread's
// fetch overwrote the tile while other threads still read it.
TEST(InsertSharedSyncs, VirtualThreadLoopReusingSharedGetsABarrierAtTheEnd) {
    Buffer A("A", f32, {Expr(16)}), B("B", f32, {Expr(16)});
    Buffer S("S", f32, {Expr(4)}, "shared");
    Var tx("tx"), v("v");
    Stmt body = SeqStmt::make({BufferStore::make(S, BufferLoad::make(A, {v * 4 + tx}), {tx}),
                               BufferStore::make(B, BufferLoad::make(S, {3 - tx}), {v * 4 + tx})});
    Stmt s = For::make(tx, Expr(0), Expr(4), ForKind::ThreadBinding,
                       For::make(v, Expr(0), Expr(4), ForKind::ThreadBinding, body, "vthread.x"),
                       "threadIdx.x");
    PrimFunc f("f", {A, B}, Allocate::make(S, s));
    PrimFunc g = insert_shared_syncs(f);
    std::string text = print(g->body);
    EXPECT_EQ(count(text, "tir.tvm_storage_sync"), 2u) << text;
    // The second barrier closes the vthread loop's body, after the read of S.
    EXPECT_LT(text.find("S[3 - tx]"), text.rfind("tir.tvm_storage_sync")) << text;
    expect_same_results(f, g);
}

}  // namespace
}  // namespace tessera::tir
