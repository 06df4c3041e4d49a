// Every kernel the CPU build makes is a trace replayed on its fused group's
// unscheduled loop IR (driver::KernelSchedule): for each default rule (conv
// in NCHW[b]c, Winograd, depthwise, pooling, matmul with packed operands,
// row reductions, layout transforms, injective), replaying the recorded
// trace, also after a JSON round trip, rebuilds a kernel structurally equal
// to the one the compiler built, and a hand trace shows up as the kernel's.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "engine/core/error.h"
#include "engine/driver/driver.h"
#include "engine/tir/printer.h"
#include "engine/tir/structural_equal.h"
#include "tests/engine/graph/passes/passes_test_util.h"

namespace tessera::driver {
namespace {

using passes::testing::constant;
using passes::testing::input;
using passes::testing::node;

using Attrs = std::map<std::string, graph::AttrValue>;

// conv 3x3 + relu, depthwise 3x3 + relu, max pool, conv 1x1, global pool,
// flatten, dense with a constant weight, softmax.
graph::Graph small_cnn() {
    graph::Graph g;
    Attrs pad1 = {{"padding", std::vector<int64_t>{1, 1, 1, 1}}};
    int x = input(g, "x", {1, 16, 20, 20});
    int c1 = node(g, "nn.conv2d", "conv1",
                  {x, constant(g, "w1", {32, 16, 3, 3}, 1), constant(g, "b1", {32}, 2)}, pad1);
    int r1 = node(g, "nn.relu", "relu1", {c1});
    Attrs dw = pad1;
    dw["groups"] = int64_t(32);
    int c2 = node(g, "nn.conv2d", "dw", {r1, constant(g, "w2", {32, 1, 3, 3}, 3)}, dw);
    int r2 = node(g, "nn.relu", "relu2", {c2});
    int p = node(g, "nn.max_pool2d", "pool", {r2},
                 {{"kernel", std::vector<int64_t>{2, 2}}, {"strides", std::vector<int64_t>{2, 2}}});
    int c3 = node(g, "nn.conv2d", "conv3", {p, constant(g, "w3", {64, 32, 1, 1}, 4)});
    int gp = node(g, "nn.global_avg_pool2d", "gap", {c3});
    int f = node(g, "reshape", "flat", {gp}, {{"newshape", std::vector<int64_t>{1, 64}}});
    int d = node(g, "nn.matmul", "fc", {f, constant(g, "wf", {64, 40}, 5)});
    int s = node(g, "nn.softmax", "prob", {d}, {{"axis", int64_t(1)}});
    g.outputs = {s};
    return g;
}

// An encoder piece: dense (packed weight) + bias, layer norm, a product of
// two computed operands, gelu, a sum over the last axis.
graph::Graph encoder_piece() {
    graph::Graph g;
    int x = input(g, "x", {128, 256});
    int d = node(g, "nn.matmul", "proj", {x, constant(g, "w", {256, 256}, 1)});
    int b = node(g, "add", "bias", {d, constant(g, "b", {256}, 2)});
    int ln = node(g, "nn.layer_norm", "ln", {b, constant(g, "gamma", {256}, 3), constant(g, "beta", {256}, 4)},
                  {{"axis", int64_t(1)}, {"epsilon", 1e-5}});
    int t = node(g, "transpose", "lnT", {ln}, {{"axes", std::vector<int64_t>{1, 0}}});
    int sc = node(g, "nn.matmul", "scores", {ln, t});
    int ge = node(g, "nn.gelu", "gelu", {sc});
    int r = node(g, "reduce_sum", "rowsum", {ge}, {{"axes", std::vector<int64_t>{1}}, {"keepdims", int64_t(1)}});
    g.outputs = {r};
    return g;
}

/// Builds `g` without compiling and checks every kernel against its replay.
/// Returns the primitives the traces used; `anchors` gets the kernels' anchor ops.
std::set<std::string> expect_kernels_are_their_traces(const graph::Graph& g, BuildOptions o,
                                                      std::set<std::string>& anchors) {
    o.jit = false;
    auto model = build(g, o);
    EXPECT_EQ(model->schedules.size(), model->kernels.size());
    std::set<std::string> ops;
    for (size_t i = 0; i < model->schedules.size(); ++i) {
        const KernelSchedule& ks = model->schedules[i];
        const tir::PrimFunc& built = model->kernels[i];
        EXPECT_TRUE(ks.source == "default" || ks.source == "hand") << built->name << ": " << ks.source;
        tir::PrimFunc replayed = rebuild_kernel(*model, i, ks.trace);
        EXPECT_TRUE(tir::structural_equal(replayed, built))
            << built->name << " (opt level " << o.opt_level << "): the replayed trace gives\n"
            << tir::print(replayed) << "\nbut the build has\n" << tir::print(built);
        schedule::Trace round = schedule::Trace::from_json(ks.trace.to_json(), "test");
        EXPECT_TRUE(tir::structural_equal(rebuild_kernel(*model, i, round), built))
            << built->name << ": the trace does not survive JSON";
        for (const schedule::Step& s : ks.trace.steps) ops.insert(s.op);
        const int anchor = model->graph.find_node(ks.anchor);
        if (anchor >= 0) anchors.insert(model->graph.nodes[size_t(anchor)].op);
    }
    return ops;
}

TEST(KernelSchedules, EveryDefaultKernelIsItsTraceReplayed) {
    std::set<std::string> ops, anchors;
    for (int level : {1, 2}) {
        for (int threads : {1, 0}) {
            BuildOptions o;
            o.opt_level = level;
            o.threads = threads;
            for (const graph::Graph& g : {small_cnn(), encoder_piece()}) {
                std::set<std::string> used = expect_kernels_are_their_traces(g, o, anchors);
                ops.insert(used.begin(), used.end());
            }
        }
    }
    // Every rule was exercised.
    for (const char* op : {"nn.conv2d_NCHWc", "nn.conv2d_winograd_NCHWc", "nn.conv2d",
                           "nn.max_pool2d_NCHWc", "layout_transform", "nn.matmul", "nn.softmax",
                           "nn.layer_norm", "reduce_sum"})
        EXPECT_TRUE(anchors.count(op)) << "no kernel anchored at " << op;
    // The rules' layout and loop steps are all in the traces.
    for (const char* op : {"pack_operand", "split", "reorder", "vectorize", "parallel", "fuse",
                           "compute_at", "unroll"})
        EXPECT_TRUE(ops.count(op)) << "no trace used " << op;
}

/// The default trace of the kernel that runs `node`, less its last step: a
/// hand trace that applies and differs from the default.
schedule::Trace default_trace_less_last_step(const CompiledModel& model, const std::string& node) {
    const int k = model.kernel_of(node);
    EXPECT_GE(k, 0) << node;
    schedule::Trace hand = k >= 0 ? model.schedules[size_t(k)].trace : schedule::Trace{};
    EXPECT_FALSE(hand.steps.empty()) << node;
    if (!hand.steps.empty()) hand.steps.pop_back();
    return hand;
}

TEST(KernelSchedules, AHandTraceIsTheKernelsScheduleAndRebuildsIt) {
    const graph::Graph g = encoder_piece();
    BuildOptions o;
    o.jit = false;
    o.threads = 1;
    auto model = build(g, o);
    const int k = model->kernel_of("rowsum");
    ASSERT_GE(k, 0);
    const KernelSchedule& ks = model->schedules[size_t(k)];
    ASSERT_EQ(ks.source, "default");
    // The default trace less its last step, given as the hand trace of the node.
    const schedule::Trace hand = default_trace_less_last_step(*model, "rowsum");
    o.kernel_traces["rowsum"] = hand;
    auto edited = build(g, o);
    const KernelSchedule& eks = edited->schedules[size_t(edited->kernel_of("rowsum"))];
    EXPECT_EQ(eks.source, "hand");
    EXPECT_EQ(eks.traced_node, "rowsum");
    EXPECT_EQ(eks.trace.steps, hand.steps);
    EXPECT_EQ(eks.replaced.steps, ks.trace.steps);  // what the build would use without it
    EXPECT_EQ(eks.replaced_source, "default");
    EXPECT_TRUE(tir::structural_equal(rebuild_kernel(*model, size_t(k), hand),
                                      edited->kernels[size_t(edited->kernel_of("rowsum"))]));
    // A step that does not apply names the step.
    schedule::Trace bad = hand;
    schedule::Step split;
    split.op = "split";
    split.loops = {"no_such_loop"};
    split.ints = {-1, 4};
    bad.steps.push_back(split);
    try {
        rebuild_kernel(*model, size_t(k), bad);
        ADD_FAILURE() << "a split of a missing loop applied";
    } catch (const UserError& e) {
        EXPECT_NE(std::string(e.what()).find("no_such_loop"), std::string::npos) << e.what();
    }
}

// A hand trace whose key names no node or kernel of the build (a graph edit
// removed the node, or renumbered the kernel it named) schedules nothing, and
// unmatched_traces names it: the studio's Run and session check report it
// instead of counting it as replayed.
TEST(KernelSchedules, AHandTraceOfANameNotInTheBuildIsUnmatched) {
    const graph::Graph g = encoder_piece();
    BuildOptions o;
    o.jit = false;
    o.threads = 1;
    auto model = build(g, o);
    const schedule::Trace hand = default_trace_less_last_step(*model, "rowsum");
    o.kernel_traces = {{"rowsum", hand}, {"fused_gone_17", hand}, {"no_such_node", hand}};
    auto edited = build(g, o);
    EXPECT_EQ(edited->schedules[size_t(edited->kernel_of("rowsum"))].source, "hand");
    EXPECT_EQ(unmatched_traces(*edited, o.kernel_traces),
              (std::vector<std::string>{"fused_gone_17", "no_such_node"}));
    EXPECT_TRUE(unmatched_traces(*edited, {{"rowsum", hand}}).empty());
}

TEST(KernelSchedules, AHandTraceOfASharedNameSchedulesTheKernelFindNodePicksOrTheKernelNamed) {
    // One ONNX node expanded into two kernels under one name (a softmax of
    // the input, then a dense layer on it): a trace given for the name is
    // the heaviest node's, the kernel `inspect --op` and `tune --op` pick.
    graph::Graph g;
    int x = input(g, "x", {64, 64});
    int s = node(g, "nn.softmax", "shared", {x}, {{"axis", int64_t(1)}});
    int d = node(g, "nn.matmul", "shared", {s, constant(g, "w", {64, 64}, 1)});
    g.outputs = {d};
    BuildOptions o;
    o.jit = false;
    o.threads = 1;
    auto model = build(g, o);
    ASSERT_EQ(model->graph.nodes[size_t(model->graph.find_node("shared"))].op, "nn.matmul");
    const schedule::Trace hand = default_trace_less_last_step(*model, "shared");
    o.kernel_traces["shared"] = hand;
    auto edited = build(g, o);  // the softmax kernel would refuse the matmul's steps
    int hands = 0;
    for (const KernelSchedule& ks : edited->schedules) hands += ks.source == "hand" ? 1 : 0;
    EXPECT_EQ(hands, 1);
    const KernelSchedule& eks = edited->schedules[size_t(edited->kernel_of("shared"))];
    EXPECT_EQ(eks.source, "hand");
    EXPECT_EQ(eks.trace.steps, hand.steps);
    // The other kernel of the name (the softmax) by its kernel name, as
    // `run --profile` prints it: kernel_of, the driver and `inspect --op`
    // reach it, and its trace leaves the matmul's kernel alone.
    int softmax = -1;
    for (size_t k = 0; k < model->kernels.size(); ++k)
        if (int(k) != model->kernel_of("shared")) softmax = int(k);
    ASSERT_GE(softmax, 0);
    const std::string kernel = model->kernels[size_t(softmax)]->name;
    ASSERT_NE(kernel, "shared");
    EXPECT_EQ(model->kernel_of(kernel), softmax);
    EXPECT_EQ(model->kernel_of("shared", "nn.softmax"), softmax);  // by its node's op
    EXPECT_EQ(model->kernel_of("shared", "nn.matmul"), model->kernel_of("shared"));
    const schedule::Trace soft = default_trace_less_last_step(*model, kernel);
    BuildOptions by_kernel = o;
    by_kernel.kernel_traces = {{kernel, soft}};
    auto rebuilt = build(g, by_kernel);
    const KernelSchedule& sks = rebuilt->schedules[size_t(rebuilt->kernel_of(kernel))];
    EXPECT_EQ(sks.source, "hand");
    EXPECT_EQ(sks.traced_node, kernel);
    EXPECT_EQ(sks.trace.steps, soft.steps);
    EXPECT_EQ(rebuilt->schedules[size_t(rebuilt->kernel_of("shared"))].source, "default");
}

TEST(KernelSchedules, NodesOfOneNameAndOpReachTheirOwnKernelsByOutputType) {
    // A dynamically quantized conv (ConvInteger, its weights' zero point not
    // zero) runs as two nn.matmul_i8u8 nodes of the ONNX node's name: the
    // GEMM and its windows' byte sums (a row of ones). Each reaches the
    // kernel that runs it by its output type (the studio's node -> kernel).
    const graph::Graph g =
        load_model(std::string(TESSERA_SOURCE_DIR) +
                   "/tests/data/onnx_models/dynamic_conv_uint8_weights/model.onnx");
    BuildOptions o;
    o.jit = false;
    o.threads = 1;
    auto model = build(g, o);
    std::map<std::string, std::vector<int>> by_name;  // matmul_i8u8 nodes per name
    for (size_t n = 0; n < model->graph.nodes.size(); ++n)
        if (model->graph.nodes[n].op == "nn.matmul_i8u8")
            by_name[model->graph.nodes[n].name].push_back(int(n));
    int pairs = 0;
    for (const auto& [name, nodes] : by_name) {
        if (nodes.size() != 2) continue;
        ++pairs;
        std::set<int> kernels;
        for (int n : nodes) {
            const graph::Node& node = model->graph.nodes[size_t(n)];
            const std::string type = model->graph.values[size_t(node.outputs[0])].type.str();
            const int k = model->kernel_of(name, node.op, type);
            ASSERT_GE(k, 0) << name << " " << type;
            const std::vector<int>& members = model->kernel_nodes[size_t(k)];
            EXPECT_NE(std::find(members.begin(), members.end(), n), members.end())
                << name << " " << type << " is not run by kernel "
                << model->kernels[size_t(k)]->name;
            kernels.insert(k);
        }
        EXPECT_EQ(kernels.size(), 2u) << name;
    }
    EXPECT_EQ(pairs, 2);  // both convs
}

}  // namespace
}  // namespace tessera::driver
