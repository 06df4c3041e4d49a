// The verifier accepts well-formed IR and names the first problem otherwise.
#include "engine/tir/verify.h"

#include <gtest/gtest.h>

#include "engine/core/error.h"
#include "engine/te/tensor.h"
#include "engine/tir/op.h"

namespace tessera::tir {
namespace {

std::string verify_error(const PrimFunc& f) {
    try {
        verify(f);
    } catch (const InternalError& e) {
        return e.what();
    }
    return "";
}

TEST(Verify, AcceptsLoweredMatmul) {
    te::Tensor A = te::placeholder({4, 3}, DataType::float32(), "A");
    te::Tensor B = te::placeholder({3, 5}, DataType::float32(), "B");
    IterVar k = te::reduce_axis(3, "k");
    te::Tensor C = te::compute(
        {4, 5},
        [&](const std::vector<Var>& i) { return te::sum(A(i[0], k.var) * B(k.var, i[1]), {k}); },
        "C");
    EXPECT_EQ(verify_error(te::create_prim_func({A, B, C}, "mm")), "");
}

TEST(Verify, RejectsUndefinedVariable) {
    Buffer A("A", DataType::float32(), {Expr(4)});
    Var i("i"), stray("stray");
    Stmt s = For::make(i, Expr(0), Expr(4), ForKind::Serial,
                       BufferStore::make(A, Expr(1.0), {i + stray}));
    std::string err = verify_error(PrimFunc("f", {A}, s));
    EXPECT_NE(err.find("variable stray is used before it is defined"), std::string::npos) << err;
}

TEST(Verify, RejectsLoopVariableUsedAfterLoop) {
    Buffer A("A", DataType::float32(), {Expr(4)});
    Var i("i");
    Stmt loop =
        For::make(i, Expr(0), Expr(4), ForKind::Serial, BufferStore::make(A, Expr(1.0), {i}));
    Stmt after = BufferStore::make(A, Expr(2.0), {i});
    std::string err = verify_error(PrimFunc("f", {A}, SeqStmt::make({loop, after})));
    EXPECT_NE(err.find("variable i"), std::string::npos) << err;
}

TEST(Verify, RejectsWrongIndexCount) {
    Buffer A("A", DataType::float32(), {Expr(2), Expr(3), Expr(4)});
    Var i("i");
    Stmt s =
        For::make(i, Expr(0), Expr(2), ForKind::Serial, BufferStore::make(A, Expr(1.0), {i, i}));
    std::string err = verify_error(PrimFunc("f", {A}, s));
    EXPECT_NE(err.find("buffer A of rank 3 with 2 indices"), std::string::npos) << err;
}

TEST(Verify, RejectsBufferOutOfScope) {
    Buffer A("A", DataType::float32(), {Expr(4)}), T("T", DataType::float32(), {Expr(4)});
    Var i("i");
    Stmt s = For::make(i, Expr(0), Expr(4), ForKind::Serial,
                       BufferStore::make(A, BufferLoad::make(T, {i}), {i}));
    std::string err = verify_error(PrimFunc("f", {A}, s));
    EXPECT_NE(err.find("buffer T, which is not a parameter"), std::string::npos) << err;
    // The same access inside an Allocate of T is fine.
    EXPECT_EQ(verify_error(PrimFunc("f", {A}, Allocate::make(T, s))), "");
}

TEST(Verify, RejectsReduceLeftInLoopIR) {
    Buffer A("A", DataType::float32(), {Expr(4)});
    IterVar k = te::reduce_axis(4, "k");
    Stmt s = BufferStore::make(A, te::sum(BufferLoad::make(A, {k.var}), {k}), {Expr(0)});
    std::string err = verify_error(PrimFunc("f", {A}, s));
    EXPECT_NE(err.find("Reduce"), std::string::npos) << err;
}

}  // namespace
}  // namespace tessera::tir
