// The default CPU schedules (topi/schedule_cpu.h): every op class compiled
// with its schedule, serial and parallel, against the interpreter on the
// unscheduled function, on random data with tails (sizes that do not divide
// the register tiles, odd channel counts). Nothing is timed.
#include "tests/engine/codegen/llvm/codegen_test_util.h"

#include "engine/codegen/llvm/llvm_codegen.h"
#include "engine/runtime/ndarray.h"
#include "engine/topi/cpu/schedule_cpu.h"
#include "engine/tir/printer.h"
#include "engine/topi/topi.h"

namespace tessera::test {
namespace {

/// Schedules node 0 for the host, checks the schedule did something, runs it
/// at `threads` and compares with the interpreter on the default loop nest.
void check(const graph::Graph& g, int threads, double tol = 1e-4) {
    tir::PrimFunc f = topi::lower_node(g, 0);
    topi::CpuScheduleOptions o;
    o.threads = threads;
    o.vector_lanes = codegen::host_vector_lanes();
    schedule::Trace trace = topi::cpu_default_trace(f, g.nodes[0], o);
    EXPECT_FALSE(trace.steps.empty()) << g.nodes[0].op << ": no schedule step applied";
    tir::PrimFunc s = topi::schedule_cpu_default(f, g.nodes[0], o);

    std::vector<runtime::NDArray> arrays, expected;
    std::vector<void*> args, ref_args;
    for (size_t i = 0; i < g.inputs.size(); ++i) {
        arrays.push_back(runtime::random_ndarray(g.values[size_t(g.inputs[i])].type, 10 + i));
        args.push_back(arrays.back().raw());
        ref_args.push_back(arrays.back().raw());
    }
    runtime::NDArray out = runtime::NDArray::empty(g.values[size_t(g.outputs[0])].type);
    runtime::NDArray want = runtime::NDArray::empty(out.type());
    args.push_back(out.raw());
    ref_args.push_back(want.raw());
    codegen::LlvmOptions lo;
    lo.threads = threads;
    auto module = codegen::jit_compile({s}, lo);
    module->lookup(s->name)(args.data());
    tir::interpret(f, ref_args);
    const float* got = out.data<float>();
    const float* ref = want.data<float>();
    int bad = 0;
    for (int64_t i = 0; i < out.num_elements() && bad < 5; ++i) {
        if (!(std::fabs(got[i] - ref[i]) <= tol * (1 + std::fabs(ref[i])))) {
            ADD_FAILURE() << g.nodes[0].op << " threads " << threads << " element " << i << ": got "
                          << got[i] << ", want " << ref[i];
            ++bad;
        }
    }
}

topi::CpuScheduleOptions one_thread() {
    topi::CpuScheduleOptions o;
    o.threads = 1;
    o.vector_lanes = codegen::host_vector_lanes();
    return o;
}

/// The default CPU trace of node 0 for the host, one thread.
schedule::Trace default_trace(const graph::Graph& g) {
    return topi::cpu_default_trace(topi::lower_node(g, 0), g.nodes[0], one_thread());
}

TEST(ScheduleCpu, MatmulWithTails) {
    for (int threads : {1, 0}) {
        check(one_node("nn.matmul", {{37, 19}, {19, 45}}, {37, 45}), threads);
        check(one_node("nn.matmul", {{1, 70}, {70, 100}}, {1, 100}), threads);  // GEMV-like
        check(one_node("nn.matmul", {{64, 64}, {64, 64}}, {64, 64}), threads);  // exact tiles
    }
}

TEST(ScheduleCpu, BatchedMatmul) {
    check(one_node("nn.matmul", {{3, 9, 11}, {3, 11, 35}}, {3, 9, 35}), 0);
}

TEST(ScheduleCpu, GemmWithBiasEpilogue) {
    graph::Graph g = one_node("nn.gemm", {{13, 21}, {21, 33}, {33}}, {13, 33});
    check(g, 0);
    check(g, 1);
}

TEST(ScheduleCpu, Conv2dOddChannelsPaddingStride) {
    std::map<std::string, graph::AttrValue> a1 = {
        {"strides", std::vector<int64_t>{1, 1}}, {"padding", std::vector<int64_t>{1, 1, 1, 1}}};
    check(one_node("nn.conv2d", {{1, 7, 9, 11}, {13, 7, 3, 3}}, {1, 13, 9, 11}, a1), 0);
    check(one_node("nn.conv2d", {{2, 3, 10, 37}, {5, 3, 3, 3}}, {2, 5, 10, 37}, a1), 1);
    std::map<std::string, graph::AttrValue> a2 = {
        {"strides", std::vector<int64_t>{2, 2}}, {"padding", std::vector<int64_t>{3, 3, 3, 3}}};
    check(one_node("nn.conv2d", {{1, 3, 23, 23}, {6, 3, 7, 7}, {6}}, {1, 6, 12, 12}, a2), 0);
}

// A quantized depthwise conv's: uint8 data read as floats, padded with its
// zero point. The padded rows of each block of output rows are made right
// before it (at column strides > 1 split by column phase); the padding's vectors are
// plain or strided reads, its edges partitioned off (no gather, no select
// per lane). Narrow planes compute over the flattened padded plane.
TEST(ScheduleCpu, ADepthwiseConvOnBytesPadsRowBlocks) {
    // Strides (rows, columns): 1, 2 and 3 (phases of 3 columns), and 1 x 2.
    const std::vector<std::pair<int64_t, int64_t>> strides = {{1, 1}, {2, 2}, {3, 3}, {1, 2}};
    for (const auto& [sh, stride] : strides)
        for (int64_t k : {3, 5}) {
            const int64_t p = k / 2, H = 23, W = 45;
            const int64_t OH = (H + 2 * p - k) / sh + 1, OW = (W + 2 * p - k) / stride + 1;
            std::map<std::string, graph::AttrValue> a = {
                {"strides", std::vector<int64_t>{sh, stride}},
                {"padding", std::vector<int64_t>{p, p, p, p}},
                {"groups", int64_t(12)},
                {"pad_value", int64_t(7)}};
            graph::Graph g =
                one_node("nn.conv2d", {{1, 12, H, W}, {12, 1, k, k}, {12}}, {1, 12, OH, OW}, a);
            g.values[size_t(g.inputs[0])].type.dtype = graph::DType::UInt8;
            for (int threads : {1, 0}) check(g, threads);
            EXPECT_NE(default_trace(g).to_json().find("compute_at"), std::string::npos);
            // The codegen's reads before LLVM's passes (which may settle the
            // test of a vector whose position is known after unrolling).
            codegen::LlvmOptions unoptimized;
            unoptimized.opt_level = 0;
            const std::string ir = codegen::emit_llvm_ir(
                {topi::schedule_cpu_default(topi::lower_node(g, 0), g.nodes[0], one_thread())},
                unoptimized);
            EXPECT_EQ(ir.find("masked.gather"), std::string::npos)
                << "strides " << sh << " x " << stride << " k " << k;
        }
    // Narrow planes (7x7, 14x14, a batch of 2) at stride 1 run over the
    // flattened padded plane: full vectors across rows.
    for (const int64_t side : {7, 14})
        for (const int64_t k : {3, 5}) {
            const int64_t p = k / 2;
            std::map<std::string, graph::AttrValue> a = {
                {"padding", std::vector<int64_t>{p, p, p, p}},
                {"groups", int64_t(12)},
                {"pad_value", int64_t(5)}};
            graph::Graph g = one_node("nn.conv2d", {{2, 12, side, side}, {12, 1, k, k}, {12}},
                                      {2, 12, side, side}, a);
            g.values[size_t(g.inputs[0])].type.dtype = graph::DType::UInt8;
            for (int threads : {1, 0}) check(g, threads);
            const std::string trace = default_trace(g).to_json();
            EXPECT_NE(trace.find("conv2d_flat"), std::string::npos) << trace;
            EXPECT_NE(trace.find("reverse_compute_at"), std::string::npos) << trace;
        }
    // Two channels per group: padded whole, the same values.
    std::map<std::string, graph::AttrValue> a = {{"padding", std::vector<int64_t>{1, 1, 1, 1}},
                                                 {"groups", int64_t(6)},
                                                 {"pad_value", int64_t(3)}};
    graph::Graph g = one_node("nn.conv2d", {{2, 12, 9, 19}, {12, 2, 3, 3}}, {2, 12, 9, 19}, a);
    g.values[size_t(g.inputs[0])].type.dtype = graph::DType::UInt8;
    check(g, 0);
}

TEST(ScheduleCpu, ElementwiseAndReductions) {
    for (int threads : {1, 0}) {
        check(one_node("add", {{3, 5, 1001}, {3, 5, 1001}}, {3, 5, 1001}), threads);
        check(one_node("nn.relu", {{70000}}, {70000}), threads);
        check(one_node("nn.softmax", {{300, 129}}, {300, 129}, {{"axis", int64_t(1)}}), threads, 1e-5);
        check(one_node("nn.global_avg_pool2d", {{2, 33, 17, 19}}, {2, 33, 1, 1}), threads, 1e-5);
    }
}

TEST(ScheduleCpu, ATransposeCopiesTilesWhoseLinesStayInCache) {
    // K^T of attention heads, [S, H, D] -> [H, D, S]: the output row over S
    // reads its input H * D elements apart, D one element apart. The loop
    // over blocks of S runs outside the D loop, so a block's input lines are
    // read once for all of its D columns.
    graph::Graph kt = one_node("transpose", {{128, 4, 40}}, {4, 40, 128},
                               {{"axes", std::vector<int64_t>{1, 2, 0}}});
    tir::PrimFunc f = topi::lower_node(kt, 0);
    topi::CpuScheduleOptions o;
    o.threads = 1;
    o.vector_lanes = codegen::host_vector_lanes();
    const std::string text = tir::print(topi::schedule_cpu_default(f, kt.nodes[0], o));
    // (H, S / W) fused, then D, then the vector of W positions.
    EXPECT_NE(text.find("for i0_i2_0_fused, i1 in T.grid("), std::string::npos) << text;
    for (int threads : {1, 0}) check(kt, threads, 0);
    // A copy without a transposed last axis keeps its rows.
    graph::Graph rows = one_node("transpose", {{4, 40, 128}}, {40, 4, 128},
                                 {{"axes", std::vector<int64_t>{1, 0, 2}}});
    const std::string rows_text =
        tir::print(topi::schedule_cpu_default(topi::lower_node(rows, 0), rows.nodes[0], o));
    EXPECT_NE(rows_text.find("for i0_i1_fused, i2_0 in T.grid("), std::string::npos) << rows_text;
    check(rows, 0, 0);
}

/// Whether the default schedule of node 0 accumulates a reduction in
/// vectors: an rfactor buffer (X_rf) and a vectorized loop.
bool reduces_in_vectors(const graph::Graph& g) {
    tir::PrimFunc f = topi::lower_node(g, 0);
    topi::CpuScheduleOptions o;
    o.threads = 1;
    o.vector_lanes = codegen::host_vector_lanes();
    const std::string text = tir::print(topi::schedule_cpu_default(f, g.nodes[0], o));
    return text.find("_rf") != std::string::npos && text.find("T.vectorized") != std::string::npos;
}

TEST(ScheduleCpu, RowReductionsAccumulateInVectors) {
    // Softmax and LayerNorm rows (a transformer's), a sum over the last axis:
    // W partial sums per row in one vector, then combined.
    graph::Graph softmax = one_node("nn.softmax", {{2, 4, 16, 128}}, {2, 4, 16, 128},
                                    {{"axis", int64_t(-1)}});
    graph::Graph ln = one_node("nn.layer_norm", {{1, 37, 256}, {256}, {256}}, {1, 37, 256},
                               {{"axis", int64_t(-1)}, {"epsilon", 1e-5}});
    graph::Graph sum = one_node("reduce_sum", {{6, 5, 96}}, {6, 5, 1},
                                {{"axes", std::vector<int64_t>{2}}, {"keepdims", int64_t(1)}});
    // A long row no vector divides: partial vectors of 4 (an ArgMax over
    // 3,788 classes; 3,788 = 4 x 947).
    graph::Graph argmax = one_node("argmax", {{3, 3788}}, {3, 1},
                                   {{"axis", int64_t(1)}, {"keepdims", int64_t(1)}});
    argmax.values[size_t(argmax.outputs[0])].type.dtype = graph::DType::Int64;
    // A global max pool over one row (H = 1: magika's max over 508
    // positions) has no reduction axis of extent 1, so it is a row reduction.
    graph::Graph row_pool = one_node("nn.global_max_pool2d", {{1, 24, 1, 508}}, {1, 24, 1, 1});
    for (const graph::Graph* g : {&softmax, &ln, &sum, &argmax, &row_pool}) {
        EXPECT_TRUE(reduces_in_vectors(*g)) << g->nodes[0].op;
        for (int threads : {1, 0}) check(*g, threads, 1e-5);
    }
    // Softmax and LayerNorm kernels: every stage inside one row loop, which
    // runs in parallel; softmax's exponentials in a local row buffer.
    graph::Graph big_softmax = one_node("nn.softmax", {{4, 4, 32, 128}}, {4, 4, 32, 128},
                                        {{"axis", int64_t(-1)}});
    graph::Graph big_ln = one_node("nn.layer_norm", {{1, 256, 256}, {256}, {256}}, {1, 256, 256},
                                   {{"axis", int64_t(-1)}, {"epsilon", 1e-5}});
    for (const graph::Graph* g : {&big_softmax, &big_ln}) {
        check(*g, 0, 1e-5);
        tir::PrimFunc f = topi::lower_node(*g, 0);
        topi::CpuScheduleOptions o;
        o.threads = 0;
        o.vector_lanes = codegen::host_vector_lanes();
        const std::string text = tir::print(topi::schedule_cpu_default(f, g->nodes[0], o));
        size_t parallel = 0;
        for (size_t p = text.find("T.parallel"); p != std::string::npos; p = text.find("T.parallel", p + 1))
            ++parallel;
        EXPECT_EQ(parallel, 1u) << text;
        if (g == &big_softmax) EXPECT_NE(text.find("scope=\"local\""), std::string::npos) << text;
    }
    // Over a strided axis, or a row too short to split: the rows stay serial.
    graph::Graph strided = one_node("reduce_sum", {{64, 96, 8}}, {64, 1, 8},
                                    {{"axes", std::vector<int64_t>{1}}, {"keepdims", int64_t(1)}});
    graph::Graph short_rows = one_node("nn.softmax", {{4096, 12}}, {4096, 12}, {{"axis", int64_t(1)}});
    for (const graph::Graph* g : {&strided, &short_rows}) {
        EXPECT_FALSE(reduces_in_vectors(*g)) << g->nodes[0].op;
        check(*g, 0, 1e-5);
    }
}

TEST(ScheduleCpu, ShortPlanesReduceEightChannelsAtATime) {
    // A global average pool over 7 x 7 planes (too short for a vector row):
    // 8 channels summed side by side (8 independent sums), their means
    // written right after them from a local buffer; 1 and 2 threads, a
    // batch of 2, against the interpreter. A channel count 8 does not
    // divide keeps the default loops.
    graph::Graph gap = one_node("nn.global_avg_pool2d", {{2, 48, 7, 7}}, {2, 48, 1, 1});
    graph::Graph odd = one_node("nn.global_avg_pool2d", {{1, 36, 7, 7}}, {1, 36, 1, 1});
    graph::Graph mean = one_node("reduce_mean", {{1, 64, 5, 5}}, {1, 64},
                                 {{"axes", std::vector<int64_t>{2, 3}}, {"keepdims", int64_t(0)}});
    topi::CpuScheduleOptions o;
    o.threads = 1;
    o.vector_lanes = codegen::host_vector_lanes();
    for (const graph::Graph* g : {&gap, &odd, &mean}) {
        const std::string text =
            tir::print(topi::schedule_cpu_default(topi::lower_node(*g, 0), g->nodes[0], o));
        const bool interleaved = text.find("T.unroll(8)") != std::string::npos;
        EXPECT_EQ(interleaved, g != &odd) << text;
        if (g != &odd) EXPECT_NE(text.find("scope=\"local\""), std::string::npos) << text;
        for (int threads : {1, 2}) check(*g, threads, 1e-5);
    }
}

}  // namespace
}  // namespace tessera::test
