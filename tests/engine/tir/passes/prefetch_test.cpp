// inject_prefetch: where the prefetches of an annotated loop go, what they
// address, and that they change no result (the interpreter skips them, also
// past the end of the buffer).
#include <gtest/gtest.h>

#include "engine/core/error.h"
#include "engine/tir/functor.h"
#include "engine/tir/op.h"
#include "engine/tir/passes/inject_prefetch.h"
#include "engine/tir/printer.h"
#include "tests/engine/tir/passes/pass_test_util.h"

namespace tessera::tir {
namespace {

using testing::expect_same_results;

const DataType f32 = DataType::float32();

/// for b in 4 (annotated): for r in 3: for k in 8 [: for j in 2 (unrolled)]:
///   C[b*3 + r] += W[b*24 + r*8 + k] * X[k] [+ W[j]]
PrimFunc blocked_dot(const std::string& annotation, bool inner_unrolled = false) {
    Buffer W("W", f32, {Expr(96)}), X("X", f32, {Expr(8)}), C("C", f32, {Expr(12)});
    Var b("b"), r("r"), k("k"), j("j");
    Expr c = b * 3 + r;
    Expr prod = BufferLoad::make(W, {b * 24 + r * 8 + k}) * BufferLoad::make(X, {k});
    Stmt body;
    if (inner_unrolled) {
        // The load of W here depends on j, bound inside k's body: not prefetched.
        body = For::make(j, Expr(0), Expr(2), ForKind::Unrolled,
                         BufferStore::make(C, BufferLoad::make(C, {c}) +
                                                  BufferLoad::make(W, {b * 24 + j}) * Expr(0.5),
                                           {c}));
        body = SeqStmt::make({BufferStore::make(C, BufferLoad::make(C, {c}) + prod, {c}), body});
    } else {
        body = BufferStore::make(C, BufferLoad::make(C, {c}) + prod, {c});
    }
    Stmt s = For::make(k, Expr(0), Expr(8), ForKind::Serial, body);
    s = For::make(r, Expr(0), Expr(3), ForKind::Serial, s);
    std::map<std::string, std::string> ann;
    if (!annotation.empty()) ann[kPrefetchAnnotation] = annotation;
    s = For::make(b, Expr(0), Expr(4), ForKind::Serial, s, "", ann);
    return PrimFunc("f", {W, X, C}, s);
}

/// The prefetch calls of `f` in order, printed.
std::vector<std::string> prefetches(const PrimFunc& f) {
    std::vector<std::string> out;
    post_order_visit(f->body, [&](const Object* n) {
        if (n->node_type != NodeType::Call) return;
        const auto* c = static_cast<const Call*>(n);
        if (c->op == kPrefetchIntrinsic) out.push_back(print(c->args.at(0)));
    });
    return out;
}

TEST(InjectPrefetch, NextIterationsLoadsAtTheTopOfTheInnermostLoop) {
    PrimFunc f = blocked_dot("W:1");
    PrimFunc g = inject_prefetch(f);
    // One prefetch (X does not depend on b): W one b-iteration (24 floats) ahead.
    ASSERT_EQ(prefetches(g), std::vector<std::string>{"W[b * 24 + r * 8 + k + 24]"});
    EXPECT_EQ(print(g->body),
              "for b in T.serial(4, annotations={\"software_prefetch\": \"W:1\"}):\n"
              "    for r, k in T.grid(3, 8):\n"
              "        T.evaluate(T.tir.prefetch(W[b * 24 + r * 8 + k + 24]))\n"
              "        C[b * 3 + r] = C[b * 3 + r] + W[b * 24 + r * 8 + k] * X[k]\n");
    // At b = 3 the prefetched address lies past W: still the same results.
    expect_same_results(f, g);
}

TEST(InjectPrefetch, DistanceAndSeveralBuffers) {
    PrimFunc g = inject_prefetch(blocked_dot("W:2,X:1,Q:1"));
    // X does not depend on b and there is no buffer Q: only W, two ahead.
    EXPECT_EQ(prefetches(g), std::vector<std::string>{"W[b * 24 + r * 8 + k + 48]"});
}

TEST(InjectPrefetch, LoadsOfVariablesBoundInsideTheBodyAreSkipped) {
    PrimFunc f = blocked_dot("W:1", true);
    PrimFunc g = inject_prefetch(f);
    EXPECT_EQ(prefetches(g), std::vector<std::string>{"W[b * 24 + r * 8 + k + 24]"});
    expect_same_results(f, g);
}

TEST(InjectPrefetch, NoAnnotationNoChangeMalformedAnnotationFails) {
    PrimFunc f = blocked_dot("");
    EXPECT_TRUE(inject_prefetch(f).get() == f.get());
    EXPECT_THROW(inject_prefetch(blocked_dot("W")), UserError);
    EXPECT_THROW(inject_prefetch(blocked_dot("W:one")), UserError);
}

}  // namespace
}  // namespace tessera::tir
