// The packed GEMM schedule (topi/schedule_cpu_matmul.h, topi/pack_gemm.h):
// operand packing alone and with the blocked schedule, serial and parallel,
// against the interpreter on the unscheduled function, with tails in every
// dimension (M, N, K not multiples of the register and cache tiles),
// transposed B and a fused bias epilogue. Nothing is timed.
#include "tests/engine/codegen/codegen_test_util.h"

#include "engine/codegen/llvm/llvm_codegen.h"
#include "engine/runtime/ndarray.h"
#include "engine/schedule/schedule_util.h"
#include "engine/tir/functor.h"
#include "engine/tir/printer.h"
#include "engine/topi/pack_gemm.h"
#include "engine/topi/schedule_cpu.h"
#include "engine/topi/topi.h"

namespace tessera::test {
namespace {

graph::Graph one_node(const std::string& op, const std::vector<std::vector<int64_t>>& ins,
                      std::vector<int64_t> out, std::map<std::string, graph::AttrValue> attrs = {}) {
    graph::Graph g;
    graph::Node n;
    n.op = op;
    n.name = "k";
    n.attrs = std::move(attrs);
    auto add = [&](const std::string& name, std::vector<int64_t> shape) {
        graph::Value v;
        v.name = name;
        v.type = {graph::DType::Float32, std::move(shape)};
        return g.add_value(v);
    };
    for (size_t i = 0; i < ins.size(); ++i) {
        int v = add("in" + std::to_string(i), ins[i]);
        g.inputs.push_back(v);
        n.inputs.push_back(v);
    }
    int o = add("out", std::move(out));
    g.outputs = {o};
    n.outputs = {o};
    g.add_node(n);
    return g;
}

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
    auto r = topi::pack_matmul_operand(f, topi::PackSpec{block, "in1", 1, 8, false, 0});
    ASSERT_TRUE(r.has_value());
    EXPECT_TRUE(has_block_ending(r->func, "_pack"));
    compare(g, f, r->func, 1, /*jit=*/false);
    compare(g, f, r->func, 1, /*jit=*/true);
    // Not a parameter of the function: nothing happens.
    EXPECT_FALSE(topi::pack_matmul_operand(f, topi::PackSpec{block, "nope", 1, 8}).has_value());
}

TEST(GemmPack, BlockedScheduleWithTailsInEveryDimension) {
    for (int threads : {1, 0}) {
        // M % MR, N % NR, K % KC all non-zero (K = 263 is prime).
        check_packed_schedule(one_node("nn.matmul", {{67, 263}, {263, 77}}, {67, 77}), threads);
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

}  // namespace
}  // namespace tessera::test
