// The packed GEMM schedule (topi/schedule_cpu_matmul.h, topi/pack_gemm.h):
// operand packing alone and with the blocked schedule, serial and parallel,
// against the interpreter on the unscheduled function, with tails in every
// dimension (M, N, K not multiples of the register and cache tiles),
// transposed B and a fused bias epilogue. Nothing is timed.
#include "tests/engine/codegen/llvm/codegen_test_util.h"

#include "engine/codegen/llvm/llvm_codegen.h"
#include "engine/runtime/ndarray.h"
#include "engine/schedule/schedule_util.h"
#include "engine/tir/functor.h"
#include "engine/tir/printer.h"
#include "engine/tir/structural_equal.h"
#include "engine/schedule/schedule.h"
#include "engine/topi/lower_group.h"
#include "engine/topi/cpu/pack_gemm.h"
#include "engine/topi/cpu/schedule_cpu.h"
#include "engine/topi/topi.h"

namespace tessera::test {
namespace {

std::vector<std::string> block_names(const tir::PrimFunc& f) {
    std::vector<std::string> out;
    tir::post_order_visit(f->body, [&](const tir::Object* o) {
        if (o->node_type == tir::NodeType::Block)
            out.push_back(static_cast<const tir::Block*>(o)->name);
    });
    return out;
}

bool has_block_ending(const tir::PrimFunc& f, const std::string& suffix) {
    for (const std::string& b : block_names(f))
        if (b.size() >= suffix.size() && b.compare(b.size() - suffix.size(), suffix.size(), suffix) == 0)
            return true;
    return false;
}

/// Runs `s` (JIT, or the interpreter when `jit` is false) and the
/// interpreter on `ref` on the same random inputs; compares the output.
void compare(const graph::Graph& g, const tir::PrimFunc& ref, const tir::PrimFunc& s, int threads,
             bool jit) {
    std::vector<runtime::NDArray> arrays;
    std::vector<void*> args, ref_args;
    for (size_t i = 0; i < g.inputs.size(); ++i) {
        arrays.push_back(runtime::random_ndarray(g.values[size_t(g.inputs[i])].type, 20 + i));
        args.push_back(arrays.back().raw());
        ref_args.push_back(arrays.back().raw());
    }
    runtime::NDArray out = runtime::NDArray::empty(g.values[size_t(g.outputs[0])].type);
    runtime::NDArray want = runtime::NDArray::empty(out.type());
    args.push_back(out.raw());
    ref_args.push_back(want.raw());
    if (jit) {
        codegen::LlvmOptions lo;
        lo.threads = threads;
        auto module = codegen::jit_compile({s}, lo);
        module->lookup(s->name)(args.data());
    } else {
        tir::interpret(s, args);
    }
    tir::interpret(ref, ref_args);
    const float* got = out.data<float>();
    const float* r = want.data<float>();
    int bad = 0;
    for (int64_t i = 0; i < out.num_elements() && bad < 5; ++i) {
        if (!(std::fabs(got[i] - r[i]) <= 1e-4 * (1 + std::fabs(r[i])))) {
            ADD_FAILURE() << "threads " << threads << " element " << i << ": got " << got[i]
                          << ", want " << r[i];
            ++bad;
        }
    }
}

/// The default schedule packs B (a block named *_pack exists) and computes
/// the same as the interpreter on the default loop nest.
void check_packed_schedule(const graph::Graph& g, int threads) {
    tir::PrimFunc f = topi::lower_node(g, 0);
    topi::CpuScheduleOptions o;
    o.threads = threads;
    o.vector_lanes = codegen::host_vector_lanes();
    tir::PrimFunc s = topi::schedule_cpu_default(f, g.nodes[0], o);
    EXPECT_TRUE(has_block_ending(s, "_pack")) << "B was not packed:\n" << tir::print(s);
    compare(g, f, s, threads, /*jit=*/true);
}

TEST(GemmPack, PackingAlonePreservesTheResult) {
    // Tail panel (N = 21 is not a multiple of 8): zero padding and v // F, v % F indexing.
    graph::Graph g = one_node("nn.matmul", {{5, 13}, {13, 21}}, {5, 21});
    tir::PrimFunc f = topi::lower_node(g, 0);
    const std::string block = "T_matmul";
    auto packed = [&](const tir::PrimFunc& fn, int tiled_dim, bool parallel, int lanes) {
        schedule::Schedule s(fn);
        const std::string pack = s.pack_operand(block, "in1", tiled_dim, 8, parallel, lanes);
        EXPECT_EQ(s.trace().steps.back().op, "pack_operand");
        EXPECT_EQ(s.trace().steps.back().outputs.at(0), pack);
        // The step replays on the unscheduled function to the same kernel.
        EXPECT_TRUE(tir::structural_equal(s.trace().apply(fn).func(), s.func()));
        return s.func();
    };
    tir::PrimFunc r = packed(f, 1, false, 0);
    EXPECT_TRUE(has_block_ending(r, "_pack"));
    compare(g, f, r, 1, /*jit=*/false);
    compare(g, f, r, 1, /*jit=*/true);
    // The packing nest in parallel (rows of B split over the threads), vectorized.
    compare(g, f, packed(f, 1, true, 8), 0, /*jit=*/true);
    // B transposed (N x K): the panels tile its first dimension.
    graph::Graph gt = one_node("nn.gemm", {{5, 13}, {21, 13}}, {5, 21}, {{"transB", int64_t(1)}});
    tir::PrimFunc ft = topi::lower_node(gt, 0);
    compare(gt, ft, packed(ft, 0, true, 0), 0, /*jit=*/true);
    // What cannot be packed is a ScheduleError naming the reason; nothing changes.
    schedule::Schedule s(f);
    for (auto [blk, buffer, dim, why] :
         {std::tuple{block, "nope", 1, "no parameter named 'nope'"},
          std::tuple{block, "in1", 2, "tiled dimension must be 0 or 1"},
          std::tuple{std::string("nope_block"), "in1", 1, "no block named 'nope_block'"}}) {
        try {
            s.pack_operand(blk, buffer, dim, 8);
            ADD_FAILURE() << "packing " << buffer << " of " << blk << " applied";
        } catch (const schedule::ScheduleError& e) {
            EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
        }
    }
    EXPECT_TRUE(s.trace().steps.empty());
    EXPECT_TRUE(tir::structural_equal(s.func(), schedule::Schedule(f).func()));
}

TEST(GemmPack, BlockedScheduleWithTailsInEveryDimension) {
    for (int threads : {1, 0}) {
        // M % MR, N % NR, K % KC all non-zero (K = 523 is prime and above KC).
        check_packed_schedule(one_node("nn.matmul", {{33, 523}, {523, 45}}, {33, 45}), threads);
        // Exact tiles.
        check_packed_schedule(one_node("nn.matmul", {{64, 128}, {128, 128}}, {64, 128}), threads);
    }
}

TEST(GemmPack, TransposedBWithBiasEpilogue) {
    // ONNX Gemm with transB = 1 (B is N x K): the panels are a transposing copy.
    graph::Graph g = one_node("nn.gemm", {{40, 150}, {100, 150}, {100}}, {40, 100},
                              {{"transB", int64_t(1)}});
    check_packed_schedule(g, 1);
    check_packed_schedule(g, 0);
    // The epilogue (alpha, beta, bias: block T_gemm) runs inside the matmul's outer tile loop.
    tir::PrimFunc f = topi::lower_node(g, 0);
    topi::CpuScheduleOptions o;
    o.vector_lanes = codegen::host_vector_lanes();
    tir::PrimFunc s = topi::schedule_cpu_default(f, g.nodes[0], o);
    auto mm = schedule::detail::find_block(s->body, "T_matmul");
    auto epi = schedule::detail::find_block(s->body, "T_gemm");
    ASSERT_TRUE(mm && epi);
    auto outer = [](const schedule::detail::Path& p) {
        auto loops = schedule::detail::loops_on_path(p);
        return loops.empty() ? nullptr : loops.front();
    };
    EXPECT_TRUE(outer(*mm) != nullptr && outer(*mm) == outer(*epi)) << tir::print(s);
}

TEST(GemmPack, FusedBiasReluGroupRunsInTheTileLoop) {
    // matmul -> add(bias) -> relu lowered as one fused group (lower_group):
    // the epilogue block is computed at the matmul's outer tile loop.
    graph::Graph g;
    auto add = [&](const std::string& name, std::vector<int64_t> shape) {
        graph::Value v;
        v.name = name;
        v.type = {graph::DType::Float32, std::move(shape)};
        return g.add_value(v);
    };
    int a = add("A", {45, 150}), b = add("B", {150, 100}), bias = add("bias", {100});
    int mm = add("mm", {45, 100}), sum = add("sum", {45, 100}), y = add("y", {45, 100});
    g.inputs = {a, b, bias};
    g.outputs = {y};
    auto node = [&](const std::string& op, std::vector<int> ins, int out) {
        graph::Node n;
        n.op = op;
        n.name = op + std::to_string(out);
        n.inputs = std::move(ins);
        n.outputs = {out};
        g.add_node(n);
    };
    node("nn.matmul", {a, b}, mm);
    node("add", {mm, bias}, sum);
    node("nn.relu", {sum}, y);
    topi::LoweredGroup lg = topi::lower_group(g, {0, 1, 2});
    ASSERT_EQ(lg.func->params.size(), 4u);  // A, B, bias, y
    for (int threads : {1, 0}) {
        topi::CpuScheduleOptions o;
        o.threads = threads;
        o.vector_lanes = codegen::host_vector_lanes();
        tir::PrimFunc s = topi::schedule_cpu_default(lg.func, g.nodes[0], o);
        EXPECT_TRUE(has_block_ending(s, "_pack")) << tir::print(s);
        // Every block but the packing nest sits under one outer loop.
        const tir::BlockRealize* root = s->body.as<tir::BlockRealize>();
        const tir::SeqStmt* seq = root->block_node()->body.as<tir::SeqStmt>();
        ASSERT_TRUE(seq != nullptr);
        EXPECT_EQ(seq->seq.size(), 2u) << tir::print(s);
        std::vector<runtime::NDArray> in;
        std::vector<void*> args, ref_args;
        for (int v : g.inputs) {
            in.push_back(runtime::random_ndarray(g.values[size_t(v)].type, 30 + v));
            args.push_back(in.back().raw());
            ref_args.push_back(in.back().raw());
        }
        runtime::NDArray out = runtime::NDArray::empty(g.values[size_t(y)].type);
        runtime::NDArray want = runtime::NDArray::empty(out.type());
        args.push_back(out.raw());
        ref_args.push_back(want.raw());
        codegen::LlvmOptions lo;
        lo.threads = threads;
        auto module = codegen::jit_compile({s}, lo);
        module->lookup(s->name)(args.data());
        tir::interpret(lg.func, ref_args);
        int bad = 0;
        for (int64_t i = 0; i < out.num_elements() && bad < 5; ++i) {
            float got = out.data<float>()[i], ref = want.data<float>()[i];
            if (!(std::fabs(got - ref) <= 1e-4 * (1 + std::fabs(ref)))) {
                ADD_FAILURE() << "element " << i << ": got " << got << ", want " << ref;
                ++bad;
            }
        }
    }
}

}  // namespace
}  // namespace tessera::test
