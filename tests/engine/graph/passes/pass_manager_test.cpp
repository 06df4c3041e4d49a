// The pass registry, pipeline resolution and the PassManager's instruments.
#include <gtest/gtest.h>

#include "engine/core/error.h"
#include "engine/graph/passes/pass_manager.h"
#include "tests/engine/graph/passes/passes_test_util.h"

namespace tessera::passes {
namespace {

using namespace testing;

TEST(PassRegistry, EveryPassHasANameADescriptionAndALevel) {
    const auto& list = all_passes();
    ASSERT_EQ(list.size(), 12u);
    for (const PassInfo& p : list) {
        EXPECT_FALSE(p.description.empty()) << p.name;
        EXPECT_NE(p.fn, nullptr) << p.name;
        EXPECT_EQ(find_pass(p.name), &p);
    }
    EXPECT_EQ(find_pass("no_such_pass"), nullptr);
}

TEST(PassRegistry, DefaultPipelinesGrowWithOptLevel) {
    EXPECT_TRUE(default_pipeline(0).empty());
    EXPECT_EQ(default_pipeline(1),
              (std::vector<std::string>{"simplify_inference", "dead_code_elimination", "fuse_ops"}));
    EXPECT_EQ(default_pipeline(2),
              (std::vector<std::string>{"fold_constants", "simplify_inference",
                                        "eliminate_common_subexpr", "fuse_layer_norm", "fuse_gelu",
                                        "fuse_attention", "convert_layout", "winograd",
                                        "sink_reshapes", "dead_code_elimination", "fuse_ops"}));
    EXPECT_EQ(default_pipeline(3).size(), 12u);
    EXPECT_THROW(default_pipeline(4), UserError);
}

TEST(PassRegistry, ResolvesExactAndRelativeLists) {
    EXPECT_EQ(resolve_pipeline({"fuse_ops,fold_constants"}, 2),
              (std::vector<std::string>{"fuse_ops", "fold_constants"}));
    EXPECT_EQ(resolve_pipeline({"-fuse_ops", "+fold_scale_axis"}, 2),
              (std::vector<std::string>{"fold_constants", "simplify_inference",
                                        "eliminate_common_subexpr", "fuse_layer_norm", "fuse_gelu",
                                        "fuse_attention", "fold_scale_axis", "convert_layout", "winograd",
                                        "sink_reshapes", "dead_code_elimination"}));
    EXPECT_TRUE(resolve_pipeline({"none"}, 2).empty());
    EXPECT_EQ(resolve_pipeline({}, 2), default_pipeline(2));
    try {
        resolve_pipeline({"fold_constant"}, 2);
        FAIL() << "no error for an unknown pass";
    } catch (const UserError& e) {
        EXPECT_NE(std::string(e.what()).find("unknown pass 'fold_constant'; passes are: "
                                             "fold_constants"),
                  std::string::npos)
            << e.what();
    }
    EXPECT_THROW(resolve_pipeline({"fuse_ops,-fold_constants"}, 2), UserError);
}

TEST(PassManager, EnableDisableAndPrintAfterEachPass) {
    graph::Graph g;
    int x = input(g, "x", {2, 3});
    int r1 = node(g, "nn.relu", "r1", {x});
    node(g, "nn.relu", "dead", {x});
    g.outputs = {r1};
    PassManager pm(0);
    EXPECT_TRUE(pm.pipeline().empty());
    pm.enable("fuse_ops");
    pm.enable("dead_code_elimination");
    pm.enable("fuse_ops");
    EXPECT_EQ(pm.pipeline(), (std::vector<std::string>{"dead_code_elimination", "fuse_ops"}));
    std::vector<std::string> seen;
    std::vector<size_t> sizes;
    pm.set_print_after([&](const std::string& name, const graph::Graph& after) {
        seen.push_back(name);
        sizes.push_back(after.nodes.size());
    });
    graph::Graph out = pm.run(g);
    EXPECT_EQ(seen, pm.pipeline());
    EXPECT_EQ(sizes, (std::vector<size_t>{1, 1}));
    ASSERT_EQ(pm.records().size(), 2u);
    EXPECT_TRUE(pm.records()[0].changed);
    EXPECT_EQ(pm.records()[0].nodes_before, 2);
    EXPECT_EQ(pm.records()[0].nodes_after, 1);
    pm.disable("fuse_ops");
    EXPECT_EQ(pm.pipeline(), (std::vector<std::string>{"dead_code_elimination"}));
    EXPECT_THROW(pm.disable("nope"), UserError);
}

TEST(PassManager, RejectsAnInvalidInputGraph) {
    graph::Graph g;
    int x = input(g, "x", {2, 3});
    int r = node(g, "nn.relu", "r", {x});
    g.outputs = {r};
    g.values[size_t(r)].type = f32({3, 2});  // disagrees with the op's shape rule
    PassManager pm(2);
    EXPECT_THROW(pm.run(g), UserError);
}

}  // namespace
}  // namespace tessera::passes
