// Hybrid scheduling (autotune/pin.h): a pinned knob keeps its value in every
// candidate the tuner measures and in the record that wins; the tuned kernel
// is measured against the pinned configuration, and a build with the records
// computes what the interpreter computes. Bad pins are UserErrors naming the
// knob. Nothing is timed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "engine/autotune/pin.h"
#include "engine/autotune/tuner.h"
#include "tests/engine/autotune/quick_tune_options.h"
#include "engine/core/error.h"
#include "engine/driver/driver.h"

namespace tessera::autotune {
namespace {

namespace fs = std::filesystem;

using test::quick_tune_options;

// A fresh records file for one test (removed if a run before left it).
fs::path temp_records(const std::string& tag) {
    const fs::path p =
        fs::temp_directory_path() / ("tessera_" + tag + "_" + std::to_string(getpid()) + ".jsonl");
    fs::remove(p);
    return p;
}

// The tests' kernel: a 96x80x64 GEMM's task, built for one thread.
struct GemmCase {
    graph::Graph g = gemm_graph(96, 80, 64);
    driver::BuildOptions bo = one_thread();
    graph::Graph og = driver::optimize(g, bo);
    TuneTask task() const { return task_of_node(og, og.nodes[0].name, "llvm", 1); }
    static driver::BuildOptions one_thread() {
        driver::BuildOptions o;
        o.threads = 1;
        return o;
    }
};

TEST(Pin, TheTunerSearchesOnlyTheUnpinnedKnobsAndRecordsApply) {
    GemmCase c;
    const graph::Graph& g = c.g;
    driver::BuildOptions bo = c.bo;
    TuneTask t = c.task();
    ASSERT_FALSE(t.knobs.empty());
    // Pin the register tile's rows to a value the default rule does not take.
    const topi::CpuKnob* mr = nullptr;
    for (const topi::CpuKnob& k : t.knobs)
        if (k.name == "matmul.mr") mr = &k;
    ASSERT_NE(mr, nullptr);
    ASSERT_GT(mr->choices.size(), 1u);
    KnobPins pins = KnobPins::from_json(
        "{\"knobs\": {\"matmul.mr\": " + std::to_string(mr->choices[1]) + "}}", "test");
    const int64_t pinned = mr->choices[1];
    pin_task(t, pins);
    EXPECT_EQ(t.knob_share, 1.0);
    // The baseline is the pinned configuration.
    topi::CpuScheduleOptions cpu = t.cpu;
    cpu.knobs["matmul.mr"] = pinned;
    EXPECT_EQ(t.default_trace.steps, topi::cpu_default_trace(t.func, t.anchor, cpu).steps);

    const fs::path p = temp_records("pin");
    {
        Database db(p.string());
        TuneResult r = tune({t}, db, quick_tune_options(10, bo.opt_level));
        ASSERT_GT(r.final.trials, 0);
        int knobbed = 0;
        for (const TuningRecord& rec : db.records()) {
            ASSERT_FALSE(rec.decisions.empty()) << "a free-form candidate ignores the pins";
            const Candidate c = Candidate::from_json(rec.decisions);
            ASSERT_TRUE(c.knobbed);
            EXPECT_EQ(c.knobs.at("matmul.mr"), pinned) << rec.decisions;
            ++knobbed;
        }
        EXPECT_GT(knobbed, 1);
    }
    // The build with the records rebuilds a pinned kernel and computes the product.
    bo.records = p.string();
    auto model = driver::build(g, bo);
    ASSERT_EQ(model->schedules.size(), 1u);
    EXPECT_EQ(model->schedules[0].source, "record");
    auto in = driver::random_inputs(g, 3);
    auto got = model->run(in);
    auto want = driver::interpret_graph(g, in);
    EXPECT_TRUE(runtime::allclose(got[0], want[0], 1e-4, 1e-4));
    fs::remove(p);
}

// Every knob pinned leaves one configuration: the tuner stops when no
// unmeasured candidate is left and says so (TuneResult::exhausted), instead
// of a run that quietly measured less than its budget.
TEST(Pin, APinnedSpaceWithNothingLeftToTryStopsAndSaysSo) {
    GemmCase c;
    TuneTask t = c.task();
    std::string knobs;
    for (const topi::CpuKnob& k : t.knobs)
        knobs += (knobs.empty() ? "" : ", ") + ("\"" + k.name + "\": ") +
                 std::to_string(k.choices.front());
    pin_task(t, KnobPins::from_json("{\"knobs\": {" + knobs + "}}", "test"));
    const fs::path p = temp_records("pin_all");
    {
        Database db(p.string());
        TuneResult r = tune({t}, db, quick_tune_options(10, c.bo.opt_level));
        EXPECT_TRUE(r.exhausted);
        EXPECT_FALSE(r.cancelled);
        EXPECT_LT(r.final.trials, 10);
        EXPECT_GE(r.final.trials, 1);
    }
    {  // a space with room for the budget is not exhausted
        Database db(p.string() + ".free");
        TuneResult r = tune({c.task()}, db, quick_tune_options(4, c.bo.opt_level));
        EXPECT_FALSE(r.exhausted);
        EXPECT_EQ(r.final.trials, 4);
    }
    fs::remove(p);
    fs::remove(p.string() + ".free");
}

// Pinned steps (a trace prefix, as the schedule editor writes it): every
// record's trace starts with them, the search schedules what they leave, the
// baseline is the steps alone, and the build with the records computes the
// product.
TEST(Pin, PinnedStepsStartEveryRecordAndTheSearchSchedulesTheRest) {
    GemmCase c;
    const graph::Graph& g = c.g;
    driver::BuildOptions bo = c.bo;
    const graph::Graph& og = c.og;
    TuneTask t = c.task();
    ASSERT_GE(t.default_trace.steps.size(), 3u);
    // The default rule's first two steps, pinned through a pin file's JSON.
    schedule::Trace prefix;
    prefix.steps.assign(t.default_trace.steps.begin(), t.default_trace.steps.begin() + 2);
    const KnobPins pins = KnobPins::from_json(prefix.to_json(), "steps.json");
    ASSERT_EQ(pins.steps, prefix.steps);
    pin_task(t, pins);
    EXPECT_EQ(t.pinned.steps, prefix.steps);
    EXPECT_EQ(t.default_trace.steps, prefix.steps);  // the baseline: the steps alone

    const fs::path p = temp_records("pin_steps");
    {
        Database db(p.string());
        TuneResult r = tune({t}, db, quick_tune_options(8, bo.opt_level));
        ASSERT_GT(r.final.trials, 0);
        int longer = 0;
        for (const TuningRecord& rec : db.records()) {
            ASSERT_GE(rec.trace.steps.size(), prefix.steps.size()) << rec.decisions;
            EXPECT_TRUE(std::equal(prefix.steps.begin(), prefix.steps.end(), rec.trace.steps.begin()))
                << "a record without the pinned steps: " << rec.trace.to_json();
            if (!rec.decisions.empty()) EXPECT_FALSE(Candidate::from_json(rec.decisions).knobbed);
            longer += rec.trace.steps.size() > prefix.steps.size();
        }
        EXPECT_GT(longer, 0);  // the search added steps after the pinned ones
    }
    bo.records = p.string();
    auto model = driver::build(g, bo);
    ASSERT_EQ(model->schedules.size(), 1u);
    EXPECT_EQ(model->schedules[0].source, "record");
    ASSERT_GE(model->schedules[0].trace.steps.size(), prefix.steps.size());
    EXPECT_TRUE(std::equal(prefix.steps.begin(), prefix.steps.end(),
                           model->schedules[0].trace.steps.begin()));
    auto in = driver::random_inputs(g, 5);
    EXPECT_TRUE(runtime::allclose(model->run(in)[0], driver::interpret_graph(g, in)[0], 1e-4, 1e-4));
    fs::remove(p);

    // Steps that do not replay on the kernel name the step; knobs and steps together are refused.
    schedule::Trace bad = prefix;
    bad.steps[0].block = "no_such_block";
    bad.steps[0].loops = {"no_such_loop"};
    TuneTask copy = task_of_node(og, og.nodes[0].name, "llvm", 1);
    EXPECT_THROW(pin_task(copy, KnobPins::from_json(bad.to_json(), "bad.json")), UserError);
    EXPECT_THROW(KnobPins::from_json("{\"knobs\": {}, \"steps\": []}", "both.json"), UserError);
}

// A search after pinned steps resumes from its own records only: records of
// an unpinned search of the same kernel in the same database are neither its
// trials nor points of its space; its own records are.
TEST(Pin, APinnedSearchResumesOnlyFromItsOwnRecords) {
    GemmCase c;
    const driver::BuildOptions& bo = c.bo;
    TuneTask free_task = c.task();
    TuneTask pinned = free_task;
    schedule::Trace prefix;
    prefix.steps.assign(free_task.default_trace.steps.begin(),
                        free_task.default_trace.steps.begin() + 2);
    pin_task(pinned, KnobPins::from_json(prefix.to_json(), "steps.json"));
    const fs::path p = temp_records("pin_resume");
    Database db(p.string());
    TuneResult unpinned = tune({free_task}, db, quick_tune_options(6, bo.opt_level));
    ASSERT_EQ(unpinned.final.trials, 6);
    TuneResult first = tune({pinned}, db, quick_tune_options(4, bo.opt_level));
    EXPECT_EQ(first.final.resumed, 0);  // the 6 unpinned trials are not its own
    EXPECT_EQ(first.measured, 4);
    TuneResult again = tune({pinned}, db, quick_tune_options(6, bo.opt_level));
    EXPECT_EQ(again.final.resumed, 4);  // its own 4, read back
    EXPECT_EQ(again.measured, 2);
    fs::remove(p);
}

TEST(Pin, BadPinsNameTheKnobAndItsChoices) {
    const graph::Graph og = [] {
        driver::BuildOptions bo;
        bo.threads = 1;
        return driver::optimize(gemm_graph(32, 48, 16), bo);
    }();
    TuneTask t = task_of_node(og, og.nodes[0].name, "llvm", 1);
    auto error = [&](const std::string& json) {
        try {
            TuneTask copy = t;
            pin_task(copy, KnobPins::from_json(json, "pins.json"));
        } catch (const UserError& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_NE(error("{\"knobs\": {\"matmul.nope\": 1}}").find("has no knob 'matmul.nope'"), std::string::npos);
    EXPECT_NE(error("{\"knobs\": {\"matmul.mr\": 7777}}").find("legal:"), std::string::npos);
    EXPECT_NE(error("{\"knobs\": {\"matmul.mr\": \"4\"}}").find("must be an integer"), std::string::npos);
    EXPECT_NE(error("[1, 2]").find("pins.json"), std::string::npos);
    EXPECT_NE(error("{not json").find("not JSON"), std::string::npos);
    EXPECT_THROW(task_of_node(og, "no_such_node", "llvm", 1), UserError);
}

}  // namespace
}  // namespace tessera::autotune
