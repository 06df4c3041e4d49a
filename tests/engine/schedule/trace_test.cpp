// Traces as data: JSON round trip, replay on a fresh function, edited and
// disabled steps, malformed JSON.
#include <gtest/gtest.h>

#include <filesystem>

#include "engine/schedule/schedule.h"
#include "engine/te/tensor.h"
#include "engine/tir/printer.h"
#include "tests/engine/schedule/random_schedule.h"

namespace tessera::schedule {
namespace {

using tir::DataType;

tir::PrimFunc matmul() {
    te::Tensor A = te::placeholder({16, 12}, DataType::float32(), "A");
    te::Tensor B = te::placeholder({12, 8}, DataType::float32(), "B");
    tir::IterVar k = te::reduce_axis(12, "k");
    te::Tensor C = te::compute(
        {16, 8}, [&](auto i) { return te::sum(A(i[0], k.var) * B(k.var, i[1]), {k}); }, "C");
    te::Tensor R = te::compute({16, 8}, [&](auto i) { return tir::max(C(i[0], i[1]), tir::Expr(0.0)); },
                               "R");
    return te::create_prim_func({A, B, R}, "mm_relu");
}

Schedule scheduled() {
    Schedule s(matmul());
    auto t = s.tile("i0", "i1", 4, 4);
    s.split("k", {-1, 4});
    s.reverse_compute_at("R", t[1]);
    s.cache_read("C", 0, "shared");
    s.decompose_reduction("C", t[2]);
    s.parallel(t[0]);
    s.vectorize(s.get_loops("R").back());
    s.annotate(t[1], "pragma_auto_unroll_max_step", "16");
    return s;
}

TEST(Trace, JsonRoundTripAndReplay) {
    Schedule s = scheduled();
    std::string json = s.trace().to_json();
    EXPECT_NE(json.find("\"op\": \"tile\""), std::string::npos) << json;
    EXPECT_NE(json.find("\"factors\": ["), std::string::npos) << json;
    EXPECT_NE(json.find("\"scope\": \"shared\""), std::string::npos) << json;
    Trace t = Trace::from_json(json, "t.json");
    EXPECT_EQ(t.steps, s.trace().steps);
    Schedule r = t.apply(matmul());
    EXPECT_EQ(tir::print(r.func()), tir::print(s.func()));
    EXPECT_EQ(r.trace().steps, s.trace().steps);
    // The scheduled function computes the same as the unscheduled one.
    auto want = test::run_interpreted(matmul(), 3), got = test::run_interpreted(r.func(), 3);
    EXPECT_LE(test::max_rel_diff(got, want), 1e-5);
}

TEST(Trace, TransformLayoutTransposesAnIntermediateAndReplays) {
    Schedule s(matmul());
    s.transform_layout("C", {1, 0});
    const tir::Block* root = s.func()->body.as<tir::BlockRealize>()->block_node();
    ASSERT_EQ(root->alloc_buffers.size(), 1u);
    EXPECT_EQ(root->alloc_buffers[0]->name, "C");
    EXPECT_EQ(root->alloc_buffers[0].const_shape(), (std::vector<int64_t>{8, 16}));
    const std::string text = tir::print(s.func());
    EXPECT_NE(text.find("C[i1_2, i0_2] = C[i1_2, i0_2] + A[i0_2, k_1]"), std::string::npos) << text;
    EXPECT_NE(text.find("T.max(C[i1_3, i0_3]"), std::string::npos) << text;
    auto want = test::run_interpreted(matmul(), 5), got = test::run_interpreted(s.func(), 5);
    EXPECT_LE(test::max_rel_diff(got, want), 1e-6);
    const std::string json = s.trace().to_json();
    EXPECT_NE(json.find("\"buffer\": \"C\""), std::string::npos) << json;
    EXPECT_NE(json.find("\"permutation\": ["), std::string::npos) << json;
    Schedule r = Trace::from_json(json, "t.json").apply(matmul());
    EXPECT_EQ(tir::print(r.func()), text);
}

TEST(Trace, DesignDocFormatParses) {
    Trace t = Trace::from_json(
        R"({"workload": "w", "target": "llvm", "steps": [
            {"op": "split", "loop": "i0", "factors": [2, 8], "out": ["i0_0", "i0_1"]},
            {"op": "vectorize", "loop": "i0_1"}]})",
        "doc");
    ASSERT_EQ(t.steps.size(), 2u);
    EXPECT_EQ(t.workload, "w");
    EXPECT_EQ(t.steps[0].ints, (std::vector<int64_t>{2, 8}));
    te::Tensor A = te::placeholder({16}, DataType::float32(), "A");
    te::Tensor B = te::compute({16}, [&](auto i) { return A(i[0]) * 3.0; }, "B");
    Schedule s = t.apply(te::create_prim_func({A, B}, "scale"));
    EXPECT_NE(tir::print(s.func()).find("for i0_1 in T.vectorized(8)"), std::string::npos)
        << tir::print(s.func());
}

TEST(Trace, EditedAndDisabledStepsReplay) {
    Schedule s = scheduled();
    Trace t = s.trace();
    // Change the tile factors and drop the vectorize step: the trace still replays.
    t.steps[0].ints = {8, 2};
    t.steps[6].enabled = false;
    Trace back = Trace::from_json(t.to_json(), "edited");
    EXPECT_FALSE(back.steps[6].enabled);
    Schedule r = back.apply(matmul());
    std::string text = tir::print(r.func());
    EXPECT_EQ(text.find("T.vectorized"), std::string::npos) << text;
    EXPECT_NE(text.find("in T.parallel(2):"), std::string::npos) << text;
    EXPECT_NE(text.find("T.grid(8, 2, 3, 4)"), std::string::npos) << text;
    EXPECT_EQ(r.trace().steps.size(), t.steps.size());
    auto want = test::run_interpreted(matmul(), 4), got = test::run_interpreted(r.func(), 4);
    EXPECT_LE(test::max_rel_diff(got, want), 1e-5);
    // An edit that breaks a later step names that step.
    Trace broken = s.trace();
    broken.steps.erase(broken.steps.begin());  // the tile that made the loops
    try {
        broken.apply(matmul());
        ADD_FAILURE();
    } catch (const ScheduleError& e) {
        EXPECT_EQ(e.step_index(), 1);
        EXPECT_EQ(e.primitive(), "reverse_compute_at");
    }
}

TEST(Trace, SaveAndLoad) {
    Schedule s = scheduled();
    auto path = std::filesystem::temp_directory_path() / "tessera_trace_test.json";
    s.trace().save(path.string());
    Trace t = Trace::load(path.string());
    EXPECT_EQ(t.steps, s.trace().steps);
    std::filesystem::remove(path);
    EXPECT_THROW(Trace::load(path.string()), UserError);
}

void expect_json_error(const std::string& text, const std::string& part) {
    try {
        Trace::from_json(text, "my.json");
        ADD_FAILURE() << "accepted: " << text;
    } catch (const ScheduleError&) {
        ADD_FAILURE() << "a JSON error must be a plain UserError";
    } catch (const UserError& e) {
        EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("my.json"), std::string::npos) << e.what();
    }
}

TEST(Trace, BadJsonNamesOriginAndStep) {
    expect_json_error("{not json", "not valid JSON");
    expect_json_error(R"({"steps": 3})", "\"steps\" list");
    expect_json_error(R"({"steps": [{"op": "split", "loop": "i", "factors": [2, "x"]}]})",
                      "step 1: \"factors\" must be integers");
    expect_json_error(R"({"steps": [{"op": "fuse", "loops": ["a", "b"]}, {"loop": "i"}]})",
                      "step 2: missing \"op\"");
    expect_json_error(R"({"steps": [{"op": "bind", "loop": "i", "thread": 3}]})",
                      "step 1: \"thread\" must be a string");
}

}  // namespace
}  // namespace tessera::schedule
