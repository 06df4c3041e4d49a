// sink_reshapes: a reshape that splits the last axis moves below the
// elementwise ops that read it when their other operands broadcast over the
// split axes; the outputs stay the same.
#include "engine/graph/passes/sink_reshapes.h"

#include <gtest/gtest.h>

#include <set>

#include "engine/graph/passes/fuse_ops.h"
#include "tests/engine/graph/passes/passes_test_util.h"

namespace tessera::passes::testing {
namespace {

// (64, 12) -> (1, 64, 3, 4), then a per-channel scale, a bias and relu.
graph::Graph gemm_like_epilogue(std::vector<int64_t> scale_shape) {
    graph::Graph g;
    int x = input(g, "x", {64, 12});
    int r = node(g, "reshape", "to_nchw", {x}, {{"newshape", std::vector<int64_t>{1, 64, 3, 4}}});
    int s = constant(g, "scale", scale_shape, 1);
    int b = constant(g, "bias", {64, 1, 1}, 2);
    int m = node(g, "multiply", "scaled", {r, s});
    int a = node(g, "add", "biased", {m, b});
    int y = node(g, "nn.relu", "relu", {a});
    g.outputs = {y};
    return g;
}

TEST(SinkReshapes, MovesTheReshapeBelowPerChannelEpilogues) {
    graph::Graph g = gemm_like_epilogue({64, 1, 1});
    graph::Graph after = sink_reshapes(g, {});
    ASSERT_EQ(count_op(after, "reshape"), 1);
    // The reshape is the last node; the ops before it work on (64, 12).
    const graph::Node& last = after.nodes.back();
    EXPECT_EQ(last.op, "reshape");
    for (size_t i = 0; i + 1 < after.nodes.size(); ++i)
        EXPECT_EQ(after.values[size_t(after.nodes[i].outputs[0])].type.shape,
                  (std::vector<int64_t>{64, 12}))
            << after.nodes[i].name;
    EXPECT_EQ(after.values[size_t(after.outputs[0])].type.shape,
              (std::vector<int64_t>{1, 64, 3, 4}));
    expect_same_outputs(g, after);
    // The three ops now fuse with what writes (64, 12): one group before the reshape.
    graph::Graph fused = fuse_ops(after, {});
    std::set<int64_t> groups;
    for (size_t i = 0; i + 1 < fused.nodes.size(); ++i)
        groups.insert(fused.nodes[i].attr_int(kFuseGroupAttr, -1));
    EXPECT_EQ(groups.size(), 1u);
}

TEST(SinkReshapes, KeepsTheReshapeWhenAnOperandVariesAlongTheSplitAxes) {
    graph::Graph g = gemm_like_epilogue({1, 1, 3, 4});  // differs along (3, 4)
    graph::Graph after = sink_reshapes(g, {});
    EXPECT_EQ(after.nodes.front().op, "reshape");
    EXPECT_EQ(graph::print(after), graph::print(g));
}

// broadcast_to is a broadcast op whose shape is its attribute: it stays
// below the reshape (its rule would not give the unsplit shape).
TEST(SinkReshapes, LeavesOpsWhoseShapeIsAnAttribute) {
    graph::Graph g;
    int x = input(g, "x", {1, 12});
    int r = node(g, "reshape", "split", {x}, {{"newshape", std::vector<int64_t>{1, 3, 4}}});
    int y = node(g, "broadcast_to", "wide", {r}, {{"shape", std::vector<int64_t>{2, 3, 4}}});
    g.outputs = {y};
    EXPECT_EQ(graph::print(sink_reshapes(g, {})), graph::print(g));
}

}  // namespace
}  // namespace tessera::passes::testing
