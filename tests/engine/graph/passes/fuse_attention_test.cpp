// fuse_attention on hand-built graphs in the forms exporters write: one
// nn.attention after the pass, the same outputs on random data (through the
// loop-IR interpreter, and compiled at -O2 against the unfused build), and
// nothing changed where the pattern does not hold or does not pay.
#include "engine/graph/passes/fuse_attention.h"

#include <gtest/gtest.h>

#include <limits>

#include "engine/driver/driver.h"
#include "engine/frontend/onnx/onnx_importer.h"
#include "engine/tir/printer.h"
#include "engine/tir/structural_equal.h"
#include "tests/engine/graph/passes/passes_test_util.h"

namespace tessera::passes {
namespace {

using namespace testing;

enum class Scaling { kNone, kMultiply, kDivide };

struct AttentionForm {
    std::vector<int64_t> batch = {1, 2};
    int64_t sq = 256, sk = 256, d = 8, dv = 12;
    Scaling scaling = Scaling::kMultiply;
    std::vector<int64_t> mask;  // empty: no mask; else its shape
    bool mask_first = false;    // add(mask, scores) instead of add(scores, mask)
    bool causal = false;        // where(keep, scores, lowest float): keep[i][j] = j <= i
    bool probs_read_elsewhere = false;
    int64_t softmax_axis = -1;
};

std::vector<int64_t> with(std::vector<int64_t> batch, std::initializer_list<int64_t> last) {
    batch.insert(batch.end(), last);
    return batch;
}

/// A bool constant [sq, sk]: j <= i (a decoder's causal mask).
int causal_keep(graph::Graph& g, int64_t sq, int64_t sk) {
    auto data = std::make_shared<graph::ConstantData>();
    for (int64_t i = 0; i < sq; ++i)
        for (int64_t j = 0; j < sk; ++j) data->bytes.push_back(j <= i ? 1 : 0);
    graph::Value v;
    v.name = "keep";
    v.type = graph::TensorType{graph::DType::Bool, {sq, sk}};
    v.constant = data;
    return g.add_value(std::move(v));
}

/// matmul(softmax(matmul(q, kt) [* or / c] [+ mask | where(keep, ., lowest)]), v)
/// as exporters write it.
graph::Graph attention(const AttentionForm& f) {
    graph::Graph g;
    int q = input(g, "q", with(f.batch, {f.sq, f.d}));
    int kt = input(g, "kt", with(f.batch, {f.d, f.sk}));
    int v = input(g, "v", with(f.batch, {f.sk, f.dv}));
    int s = node(g, "nn.matmul", "qk", {q, kt});
    if (f.scaling == Scaling::kMultiply)
        s = node(g, "multiply", "scaled", {s, constant(g, "c", {}, 0, 0.35f)});
    if (f.scaling == Scaling::kDivide)
        s = node(g, "divide", "scaled", {s, constant(g, "c", {}, 0, 2.83f)});
    if (f.causal)
        s = node(g, "where", "masked",
                 {causal_keep(g, f.sq, f.sk), s,
                  constant(g, "lowest", {}, 0, std::numeric_limits<float>::lowest())});
    if (!f.mask.empty()) {
        int m = constant(g, "mask", f.mask, 7);
        s = node(g, "add", "masked",
                 f.mask_first ? std::vector<int>{m, s} : std::vector<int>{s, m});
    }
    int p = node(g, "nn.softmax", "probs", {s}, {{"axis", f.softmax_axis}});
    int y = node(g, "nn.matmul", "y", {p, v});
    g.outputs = {y};
    if (f.probs_read_elsewhere) g.outputs.push_back(p);
    return g;
}

TEST(FuseAttention, WrittenOutFormsBecomeOneNodeWithTheSameOutputs) {
    std::vector<AttentionForm> forms(5);
    forms[4].causal = true;  // GPT-2's where(causal mask, scores, lowest)
    forms[1].scaling = Scaling::kDivide;
    forms[1].mask = {1, 1, 256};  // a padding mask over the keys
    forms[2].scaling = Scaling::kNone;
    forms[2].mask = {256, 256};  // a causal-style mask over all scores
    forms[2].mask_first = true;
    forms[3].batch = {3};
    forms[3].softmax_axis = 2;
    for (const AttentionForm& f : forms) {
        graph::Graph g = attention(f);
        graph::Graph after = fuse_attention(g, {});
        ASSERT_EQ(after.nodes.size(), 1u) << graph::print(after);
        const graph::Node& n = after.nodes[0];
        EXPECT_EQ(n.op, "nn.attention");
        EXPECT_EQ(n.inputs.size(), f.mask.empty() && !f.causal ? 3u : 4u);
        EXPECT_EQ(n.attrs.count("mask_fill"), f.causal ? 1u : 0u);
        const double scale = f.scaling == Scaling::kMultiply ? 0.35
                             : f.scaling == Scaling::kDivide ? 1 / 2.83
                                                             : 1.0;
        EXPECT_NEAR(n.attr_float("scale", 1.0), scale, 1e-6);
        EXPECT_EQ(after.values[size_t(n.outputs[0])].name, "y");
        // The FLOP count is the ops' it replaces.
        double flops = 0;
        for (const graph::Node& m : g.nodes) flops += graph::node_flops(g, m);
        EXPECT_DOUBLE_EQ(graph::node_flops(after, n), flops);
        expect_same_outputs(g, after);
    }
}

// A graph after the pass saves as ONNX (nn.attention in the ai.tessera
// domain, its mask_fill exactly) and reads back as the same graph.
TEST(FuseAttention, TheFusedGraphSavesAsOnnxAndReadsBack) {
    AttentionForm f;
    f.causal = true;
    const graph::Graph fused = fuse_attention(attention(f), {});
    ASSERT_EQ(count_op(fused, "nn.attention"), 1);
    const graph::Graph back = frontend::import_onnx_bytes(frontend::export_onnx_bytes(fused), "saved");
    EXPECT_EQ(graph::print(back), graph::print(fused));
    expect_same_outputs(fused, back);
}

TEST(FuseAttention, LeavesWhatIsNotExactlyThePatternOrDoesNotPay) {
    AttentionForm shared;
    shared.probs_read_elsewhere = true;  // the probabilities are an output too
    AttentionForm other_axis;
    other_axis.softmax_axis = 2;  // over the queries, not the keys
    AttentionForm short_sequence;
    short_sequence.sq = short_sequence.sk = 128;  // runs faster as three kernels
    AttentionForm growing_mask;
    growing_mask.batch = {2};
    growing_mask.mask = {3, 1, 256, 256};  // broadcasting would grow the scores
    for (const AttentionForm& f : {shared, other_axis, short_sequence, growing_mask}) {
        graph::Graph g = attention(f);
        EXPECT_EQ(graph::print(fuse_attention(g, {})), graph::print(g));
    }
}

// The kernel the CPU rule schedules (a block of query rows at a time) against
// the three kernels it replaces, compiled, on 2 threads, with row counts
// that take each row block (4, 2, 1) and key counts with and without a
// column tail.
TEST(FuseAttention, TheCompiledKernelMatchesTheUnfusedBuild) {
    for (auto [sq, sk] :
         {std::pair<int64_t, int64_t>{256, 256}, {258, 260}, {257, 300}, {300, 300}}) {
        AttentionForm f;
        f.batch = {2, 3};
        f.sq = sq;
        f.sk = sk;
        f.d = 16;
        f.dv = 24;
        f.scaling = Scaling::kDivide;
        f.mask = {1, 1, 1, sk};
        if (sq == 300) {  // a decoder's causal mask instead
            f.mask.clear();
            f.causal = true;
        }
        graph::Graph g = attention(f);
        driver::BuildOptions fused;
        fused.threads = 2;
        driver::BuildOptions unfused = fused;
        unfused.passes = {"-fuse_attention"};
        std::shared_ptr<driver::CompiledModel> a = driver::build(g, fused);
        std::shared_ptr<driver::CompiledModel> b = driver::build(g, unfused);
        ASSERT_EQ(count_op(a->graph, "nn.attention"), 1) << sq << "x" << sk;
        ASSERT_EQ(count_op(b->graph, "nn.attention"), 0);
        // The attention rule scheduled it (its accumulator tile, vector
        // loops, the row blocks in parallel), and its trace replays to it.
        const int k = a->kernel_of("y");
        ASSERT_GE(k, 0);
        const std::string ir = tir::print(a->kernels[size_t(k)]);
        EXPECT_NE(ir.find("T_attn_qk_local_local"), std::string::npos) << ir;
        EXPECT_NE(ir.find("T.vectorized"), std::string::npos) << ir;
        EXPECT_NE(ir.find("T.parallel"), std::string::npos) << ir;
        EXPECT_TRUE(tir::structural_equal(
            driver::rebuild_kernel(*a, size_t(k), a->schedules[size_t(k)].trace),
            a->kernels[size_t(k)]));
        std::vector<runtime::NDArray> in = driver::random_inputs(g, 5);
        std::vector<runtime::NDArray> ya = a->run(in);
        std::vector<runtime::NDArray> yb = b->run(in);
        runtime::Difference d = runtime::compare(ya[0], yb[0]);
        EXPECT_TRUE(runtime::allclose(ya[0], yb[0], 1e-4, 1e-5))
            << sq << "x" << sk << ": max abs err " << d.max_abs << ", max rel err " << d.max_rel;
    }
}

// A causal attention over 1024 positions runs in four blocks of 256 query
// rows, block c against the first 256 (c + 1) keys: the scores above the
// diagonal, all masked, are never computed (6/16 of them here; 28/64 at
// 2048). The blocks' outputs, concatenated, are the unsplit attention's.
TEST(FuseAttention, ALongCausalAttentionRunsInBlocksOfRowsAgainstTheKeysUpToThem) {
    AttentionForm f;
    f.batch = {1, 2};
    f.sq = f.sk = 1024;
    f.d = 16;
    f.dv = 16;
    f.causal = true;
    graph::Graph g = attention(f);
    graph::Graph after = fuse_attention(g, {});
    ASSERT_EQ(count_op(after, "nn.attention"), 4) << graph::print(after);
    int64_t keys = 0;
    for (const graph::Node& n : after.nodes)
        if (n.op == "nn.attention") keys += after.values[size_t(n.inputs[1])].type.shape.back();
    EXPECT_EQ(keys, 256 + 512 + 768 + 1024);
    const graph::Node& last = after.nodes.back();
    EXPECT_EQ(last.op, "concatenate");
    EXPECT_EQ(after.values[size_t(last.outputs[0])].name, "y");
    graph::verify(after);
    driver::BuildOptions fused;
    fused.threads = 2;
    driver::BuildOptions unfused = fused;
    unfused.passes = {"-fuse_attention"};
    std::vector<runtime::NDArray> in = driver::random_inputs(g, 7);
    std::vector<runtime::NDArray> ya = driver::build(g, fused)->run(in);
    std::vector<runtime::NDArray> yb = driver::build(g, unfused)->run(in);
    runtime::Difference d = runtime::compare(ya[0], yb[0]);
    EXPECT_TRUE(runtime::allclose(ya[0], yb[0], 1e-4, 1e-5))
        << "max abs err " << d.max_abs << ", max rel err " << d.max_rel;
    // Shorter, or a mask that is not causal: one attention.
    f.sq = f.sk = 512;
    EXPECT_EQ(count_op(fuse_attention(attention(f), {}), "nn.attention"), 1);
}

}  // namespace
}  // namespace tessera::passes
