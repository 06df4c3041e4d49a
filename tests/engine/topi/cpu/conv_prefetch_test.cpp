// The small-plane conv2d_NCHWc rule prefetches the next input-channel
// block's weights: the lowered loop IR and the LLVM IR carry the prefetches,
// and the kernel (serial, and parallel with its outlined body) still matches
// the interpreter, prefetch off or on.
#include <gtest/gtest.h>

#include <cmath>

#include "engine/codegen/llvm/llvm_codegen.h"
#include "engine/tir/interpreter.h"
#include "engine/tir/passes/inject_prefetch.h"
#include "engine/tir/passes/pass_manager.h"
#include "engine/tir/printer.h"
#include "engine/topi/cpu/schedule_cpu.h"
#include "engine/topi/topi.h"
#include "tests/engine/graph/passes/passes_test_util.h"

namespace tessera {
namespace {

using passes::testing::constant;
using passes::testing::input;
using passes::testing::node;
using runtime::NDArray;

/// A 3x3 conv with bias over a 5x6 plane, 4 input and 4 output channel blocks.
graph::Graph small_plane_conv(int64_t lanes) {
    graph::Graph g;
    int x = input(g, "x", {1, 4, 5, 6, lanes});
    int w = constant(g, "w", {4, 4, 3, 3, lanes, lanes}, 21);
    node(g, "nn.conv2d_NCHWc", "conv", {x, w, constant(g, "bias", {4, lanes}, 22)},
         {{"padding", std::vector<int64_t>{1, 1, 1, 1}}});
    g.outputs = {g.nodes[0].outputs[0]};
    return g;
}

TEST(ConvPrefetch, WeightsOfTheNextChannelBlockArePrefetchedAndResultsMatch) {
    const int64_t lanes = codegen::host_vector_lanes();
    graph::Graph g = small_plane_conv(lanes);
    const graph::Node& n = g.nodes[0];
    tir::PrimFunc f = topi::lower_node(g, 0);

    std::vector<NDArray> args;
    std::vector<void*> ptrs;
    for (size_t i = 0; i < n.inputs.size(); ++i)
        args.push_back(runtime::random_ndarray(g.values[size_t(n.inputs[i])].type, 30 + i));
    args.push_back(NDArray::empty(g.values[size_t(n.outputs[0])].type));
    for (NDArray& a : args) ptrs.push_back(a.raw());
    tir::interpret(f, ptrs);
    const std::vector<float> want(args.back().data<float>(),
                                  args.back().data<float>() + args.back().num_elements());

    for (int prefetch : {1, 0})
        for (int threads : {1, 0}) {
            SCOPED_TRACE("prefetch " + std::to_string(prefetch) + ", threads " +
                         std::to_string(threads));
            topi::CpuScheduleOptions o;
            o.threads = threads;
            o.vector_lanes = int(lanes);
            o.knobs["conv2d.prefetch"] = prefetch;
            tir::PrimFunc s = topi::schedule_cpu_default(f, n, o);
            const std::string lowered = tir::print(tir::lower_for_codegen(s));
            const std::string ir = codegen::emit_llvm_ir({s}, {});
            EXPECT_EQ(lowered.find("T.tir.prefetch(w") != std::string::npos, prefetch == 1);
            EXPECT_EQ(ir.find("@llvm.prefetch") != std::string::npos, prefetch == 1);
            codegen::LlvmOptions lo;
            lo.threads = threads;
            auto module = codegen::jit_compile({s}, lo);
            std::fill(args.back().data<float>(),
                      args.back().data<float>() + args.back().num_elements(), std::nanf(""));
            module->lookup(s->name)(ptrs.data());
            for (size_t i = 0; i < want.size(); ++i)
                ASSERT_NEAR(args.back().data<float>()[i], want[i], 1e-4 * (1 + std::fabs(want[i])))
                    << "element " << i;
        }
}

}  // namespace
}  // namespace tessera
