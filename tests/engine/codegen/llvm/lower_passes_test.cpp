// lower_blocks and flatten_buffers: structure of their output, and its
// numbers through the JIT and the interpreter.
#include "tests/engine/codegen/llvm/codegen_test_util.h"

#include "engine/tir/functor.h"
#include "engine/tir/passes/flatten_buffers.h"
#include "engine/tir/passes/lower_blocks.h"

namespace tessera::test {
namespace {

int count_nodes(const Stmt& s, NodeType t) {
    int n = 0;
    post_order_visit(s, [&](const Object* o) { n += o->node_type == t; });
    return n;
}

// C[i, j] = sum_k A[i, k] * B[k, j] with a reduction init, plus an
// intermediate T = C + 1 allocated by the root block: D = T * 2.
PrimFunc matmul_then_scale(int64_t M, int64_t N, int64_t K) {
    Buffer A = float_buffer("A", {M, K}), B = float_buffer("B", {K, N});
    Buffer C = float_buffer("C", {M, N}), T = float_buffer("T", {M, N}), D = float_buffer("D", {M, N});
    Stmt mm = block_nest(
        "C", {M, N}, {K},
        [&](const std::vector<Var>& v) {
            return st(C, ld(C, {v[0], v[1]}) + ld(A, {v[0], v[2]}) * ld(B, {v[2], v[1]}),
                      {v[0], v[1]});
        },
        [&](const std::vector<Var>& v) { return st(C, Expr(0.0f), {v[0], v[1]}); });
    Stmt t = block_nest("T", {M, N}, {}, [&](const std::vector<Var>& v) {
        return st(T, ld(C, {v[0], v[1]}) + Expr(1.0f), {v[0], v[1]});
    });
    Stmt d = block_nest("D", {M, N}, {}, [&](const std::vector<Var>& v) {
        return st(D, ld(T, {v[0], v[1]}) * Expr(2.0f), {v[0], v[1]});
    });
    return PrimFunc("mm_scale", {A, B, C, D}, root_block(SeqStmt::make({mm, t, d}), {T}));
}

TEST(LowerBlocks, RemovesBlocksAndKeepsAllocations) {
    PrimFunc f = lower_blocks(matmul_then_scale(3, 4, 5));
    EXPECT_EQ(count_nodes(f->body, NodeType::Block), 0);
    EXPECT_EQ(count_nodes(f->body, NodeType::BlockRealize), 0);
    EXPECT_EQ(count_nodes(f->body, NodeType::Allocate), 1);
    EXPECT_EQ(count_nodes(f->body, NodeType::IfThenElse), 1);  // the reduction init
}

TEST(LowerBlocks, LeavesBlockFreeFunctionsUnchanged) {
    Buffer A = float_buffer("A", {4});
    Var i("i");
    PrimFunc f("plain", {A}, For::make(i, Expr(0), Expr(4), ForKind::Serial, st(A, Expr(1.0f), {i})));
    EXPECT_TRUE(lower_blocks(f)->body.same_as(f->body));
}

TEST(FlattenBuffers, MakesEveryAccessOneDimensional) {
    PrimFunc f = flatten_buffers(lower_blocks(matmul_then_scale(3, 4, 5)));
    for (const Buffer& b : f->params) {
        ASSERT_EQ(b->shape.size(), 1u) << b->name;
    }
    EXPECT_TRUE(is_const_int(f->params[0]->shape[0], 15));
    EXPECT_EQ(f->params[0]->name, "A");
    int accesses = 0;
    post_order_visit(f->body, [&](const Object* o) {
        if (o->node_type == NodeType::BufferLoad) {
            auto* l = static_cast<const BufferLoad*>(o);
            EXPECT_EQ(l->indices.size(), 1u);
            EXPECT_EQ(l->buffer->shape.size(), 1u);
            EXPECT_EQ(l->indices[0].dtype(), DataType::int64());
            ++accesses;
        } else if (o->node_type == NodeType::BufferStore) {
            auto* s = static_cast<const BufferStore*>(o);
            EXPECT_EQ(s->indices.size(), 1u);
            ++accesses;
        } else if (o->node_type == NodeType::Allocate) {
            auto* a = static_cast<const Allocate*>(o);
            EXPECT_TRUE(is_const_int(a->buffer->shape[0], 12));
        }
    });
    EXPECT_GT(accesses, 6);
    // The same new buffer object for the parameter and its accesses.
    bool found_param_use = false;
    post_order_visit(f->body, [&](const Object* o) {
        if (o->node_type == NodeType::BufferLoad &&
            static_cast<const BufferLoad*>(o)->buffer.same_as(f->params[0]))
            found_param_use = true;
    });
    EXPECT_TRUE(found_param_use);
}

TEST(FlattenBuffers, LoweredFunctionsComputeTheSameNumbers) {
    const int64_t M = 6, N = 7, K = 8;
    PrimFunc original = matmul_then_scale(M, N, K);
    PrimFunc lowered = lower_blocks(original);
    PrimFunc flat = flatten_buffers(lowered);
    auto a = random_floats(M * K, 30), b = random_floats(K * N, 31);
    std::vector<float> want_c(M * N, 0.f), want_d(M * N);
    for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) {
            float acc = 0.f;
            for (int64_t k = 0; k < K; ++k) acc += a[i * K + k] * b[k * N + j];
            want_c[i * N + j] = acc;
            want_d[i * N + j] = (acc + 1.f) * 2.f;
        }
    for (const PrimFunc& f : {original, lowered, flat}) {
        std::vector<float> c(M * N, 9.f), d(M * N, 0.f);
        run_jit(f, {a.data(), b.data(), c.data(), d.data()});
        expect_close(c, want_c, 1e-5, "C jit");
        expect_close(d, want_d, 1e-5, "D jit");
        std::vector<float> ic(M * N, 9.f), id(M * N, 0.f);
        interpret(f, {a.data(), b.data(), ic.data(), id.data()});
        expect_close(ic, want_c, 1e-5, "C interpreter");
        expect_close(id, want_d, 1e-5, "D interpreter");
    }
}

TEST(FlattenBuffers, KeepsRampInLastDimensionContiguous) {
    const int64_t M = 3, N = 8;
    Buffer A = float_buffer("A", {M, N});
    Var i("i");
    Expr idx = Ramp::make(Expr(0), Expr(1), 8);
    PrimFunc f("ramp2d", {A},
               For::make(i, Expr(0), Expr(M), ForKind::Serial,
                         st(A, ld(A, {i, idx}) * Broadcast::make(Expr(2.0f), 8), {i, idx})));
    PrimFunc flat = flatten_buffers(f);
    int ramps = 0;
    post_order_visit(flat->body, [&](const Object* o) {
        if (o->node_type == NodeType::BufferStore) {
            const Ramp* r = static_cast<const BufferStore*>(o)->indices[0].as<Ramp>();
            ASSERT_NE(r, nullptr);
            EXPECT_TRUE(is_const_int(r->stride, 1));
            ++ramps;
        }
    });
    EXPECT_EQ(ramps, 1);
    auto a = random_floats(M * N, 32);
    auto want = a;
    for (float& x : want) x *= 2.f;
    run_jit(flat, {a.data()});
    expect_close(a, want, 0);
}

}  // namespace
}  // namespace tessera::test
