// The knobbed-default rule of the design space: the default schedule is its
// all-first-choices candidate, sampled and mutated knob values replay and
// match the reference, a knobbed record applied at build time rebuilds the
// same kernel (packing included), records from another machine are not
// applied, and runaway candidates hit the compile limit.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>

#include "engine/autotune/space.h"
#include "engine/autotune/tuner.h"
#include "engine/driver/driver.h"
#include "engine/tir/printer.h"
#include "tests/engine/schedule/random_schedule.h"

namespace tessera::autotune {
namespace {

namespace fs = std::filesystem;
using schedule::test::max_rel_diff;
using schedule::test::run_interpreted;
using schedule::test::run_jit;

fs::path temp_db(const std::string& name) {
    fs::path p =
        fs::temp_directory_path() / ("tessera_knobs_" + std::to_string(getpid()) + "_" + name);
    fs::remove(p);
    return p;
}

/// relu(A + B) on rows x cols: one injective kernel.
graph::Graph add_relu(int64_t rows, int64_t cols) {
    graph::Graph g;
    g.name = "add_relu";
    auto value = [&](const std::string& name) {
        graph::Value v;
        v.name = name;
        v.type = {graph::DType::Float32, {rows, cols}};
        return g.add_value(v);
    };
    int a = value("A"), b = value("B"), s = value("S"), y = value("Y");
    g.inputs = {a, b};
    g.outputs = {y};
    auto node = [&](const std::string& op, std::vector<int> in, int out) {
        graph::Node n;
        n.op = op;
        n.name = op + std::to_string(out);
        n.inputs = std::move(in);
        n.outputs = {out};
        g.add_node(n);
    };
    node("add", {a, b}, s);
    node("nn.relu", {s}, y);
    return g;
}

std::vector<TuneTask> tasks_of(const graph::Graph& g, int opt_level = 2) {
    driver::BuildOptions bo;
    bo.threads = 1;
    bo.opt_level = opt_level;
    return extract_tasks(driver::optimize(g, bo), "llvm", 1);
}

/// A knobbed candidate with every knob at its second choice (where it has one).
Candidate second_choices(const SpaceOptions& o) {
    Candidate c = default_candidate(o);
    for (const topi::CpuKnob& k : o.knobs)
        if (k.choices.size() > 1) c.knobs[k.name] = k.choices[1];
    return c;
}

TEST(Knobs, KnobbedDefaultsReplayAndMatchTheReference) {
    std::vector<TuneTask> tasks;
    for (auto& t : tasks_of(gemm_graph(32, 96, 128))) tasks.push_back(std::move(t));  // packs B
    for (auto& t : tasks_of(add_relu(24, 80))) tasks.push_back(std::move(t));
    for (auto& t : tasks_of(conv2d_graph(8, 10, 10, 16, 3, 3), 3)) tasks.push_back(std::move(t));
    std::mt19937_64 rng(17);
    int knobbed = 0, with_knobs = 0;
    for (const TuneTask& t : tasks) {
        SpaceOptions o = space_options(t, 1);
        ASSERT_NE(o.anchor, nullptr) << t.name;
        o.knob_share = 1.0;
        // All first choices: exactly the default schedule (operand packing included).
        Candidate d = default_candidate(o);
        EXPECT_EQ(tir::print(realize(t.func, d, o).func), tir::print(t.default_func)) << t.name;
        const auto want = run_interpreted(t.func, 5);
        if (!o.knobs.empty()) ++with_knobs;
        Candidate c = o.knobs.empty() ? d : sample(t.func, o, rng);
        for (int i = 0; i < 4; ++i) {
            ASSERT_TRUE(c.knobbed) << t.name;
            EXPECT_EQ(c.knobs.size(), o.knobs.size()) << t.name;
            EXPECT_EQ(Candidate::from_json(c.to_json()), c);
            Realized r = realize(t.func, c, o);
            EXPECT_LE(max_rel_diff(run_jit(r.func, 5), want), 1e-4)
                << t.name << " candidate " << c.to_json();
            // The trace (without the packing) replays on a fresh function too.
            tir::PrimFunc replayed =
                schedule::Trace::from_json(r.trace.to_json(), t.name).apply(t.func).func();
            if (i == 0)
                EXPECT_LE(max_rel_diff(run_interpreted(replayed, 5), want), 1e-4) << t.name;
            ++knobbed;
            Candidate m = mutate(t.func, c, o, rng);
            int changed = 0;
            for (const auto& [name, value] : m.knobs) changed += c.knobs.at(name) != value;
            bool movable = false;
            for (const topi::CpuKnob& k : o.knobs) movable |= k.choices.size() > 1;
            EXPECT_EQ(changed, movable ? 1 : 0) << t.name << ": mutation moves one knob";
            c = m;
        }
    }
    EXPECT_GE(with_knobs, 1) << "no task of the test graphs has knobs";
    EXPECT_GE(knobbed, 12);
}

TEST(Knobs, IllegalKnobValuesAreUserErrors) {
    std::vector<TuneTask> tasks = tasks_of(add_relu(24, 80));
    ASSERT_EQ(tasks.size(), 1u);
    SpaceOptions o = space_options(tasks[0], 1);
    ASSERT_FALSE(o.knobs.empty());
    Candidate c = default_candidate(o);
    c.knobs[o.knobs[0].name] = 7777;
    EXPECT_THROW(realize(tasks[0].func, c, o), UserError);
    Candidate u = default_candidate(o);
    u.knobs["no.such_knob"] = 1;
    EXPECT_THROW(realize(tasks[0].func, u, o), UserError);
    EXPECT_THROW(Candidate::from_json(R"({"rule": "default", "knobs": {"a": "x"}})"), UserError);
}

TEST(Knobs, KnobbedRecordRebuildsTheSameKernelAtBuildTime) {
    for (const graph::Graph& g : {add_relu(24, 80), gemm_graph(32, 96, 128)}) {
        std::vector<TuneTask> tasks = tasks_of(g);
        ASSERT_EQ(tasks.size(), 1u);
        const TuneTask& t = tasks[0];
        SpaceOptions o = space_options(t, 1);
        Candidate c = second_choices(o);
        Realized want = realize(t.func, c, o);
        fs::path p = temp_db("knobbed.jsonl");
        {
            Database db(p.string());
            TuningRecord r;
            r.workload = t.key;
            r.task = t.name;
            r.trace = want.trace;
            r.decisions = c.to_json();
            r.times_ms = {0.001};
            r.machine = machine_fingerprint();
            db.append(r);
        }
        driver::BuildOptions bo;
        bo.threads = 1;
        bo.records = p.string();
        {  // tuned for 4 threads: not applied to a 1-thread build
            Database db4("");
            TuningRecord r4;
            r4.workload = t.key;
            r4.decisions = c.to_json();
            r4.times_ms = {0.001};
            r4.threads = 4;
            db4.append(r4);
            bool applied = true;
            apply_best(t.func, t.anchor, t.cpu, db4, "llvm", &applied);
            EXPECT_FALSE(applied);
        }
        auto tuned = driver::build(g, bo);
        ASSERT_EQ(tuned->kernels.size(), 1u);
        EXPECT_EQ(tir::print(tuned->kernels[0]), tir::print(want.func)) << g.name;
        if (c != default_candidate(o)) {  // the knobs changed the kernel: the check can fail
            bo.records.clear();
            auto dflt = driver::build(g, bo);
            EXPECT_NE(tir::print(dflt->kernels[0]), tir::print(tuned->kernels[0])) << g.name;
        }
        auto inputs = driver::random_inputs(g, 7);
        auto got = tuned->run(inputs);
        auto ref = driver::interpret_graph(g, inputs);
        const float* a = static_cast<const float*>(got[0].raw());
        const float* b = static_cast<const float*>(ref[0].raw());
        for (int64_t i = 0; i < got[0].num_elements(); ++i)
            ASSERT_NEAR(a[i], b[i], 1e-3 + 1e-3 * std::fabs(b[i])) << g.name << " " << i;
        fs::remove(p);
    }
}

TEST(Knobs, RecordsFromAnotherMachineAreNotApplied) {
    std::vector<TuneTask> tasks = tasks_of(add_relu(24, 80));
    const TuneTask& t = tasks[0];
    SpaceOptions o = space_options(t, 1);
    fs::path p = temp_db("foreign.jsonl");
    TuningRecord r;
    r.workload = t.key;
    r.trace = realize(t.func, second_choices(o), o).trace;
    r.decisions = second_choices(o).to_json();
    r.times_ms = {0.001};
    r.machine = "riscv64, some other cpu; 64 cores";
    {
        Database db(p.string());
        db.append(r);
        EXPECT_EQ(db.best(t.key), nullptr);
        EXPECT_EQ(db.count(t.key), 0);
        EXPECT_EQ(db.foreign_records(), 1);
    }
    Database db(p.string(), /*read_only=*/true);
    EXPECT_EQ(db.foreign_records(), 1);
    EXPECT_EQ(db.best(t.key), nullptr);
    const std::string note = foreign_records_note(db);
    EXPECT_NE(note.find("another machine"), std::string::npos) << note;
    EXPECT_NE(note.find("riscv64"), std::string::npos) << note;
    bool applied = true;
    tir::PrimFunc f = apply_best(t.func, t.anchor, t.cpu, db, "llvm", &applied);
    EXPECT_FALSE(applied);
    EXPECT_EQ(f.get(), t.func.get());
    // The same record measured here is applied.
    Database local("");
    r.machine = machine_fingerprint();
    local.append(r);
    EXPECT_EQ(local.foreign_records(), 0);
    EXPECT_EQ(foreign_records_note(local), "");
    apply_best(t.func, t.anchor, t.cpu, local, "llvm", &applied);
    EXPECT_TRUE(applied);
    fs::remove(p);
}

TEST(Knobs, RunawayCandidatesHitTheCompileLimit) {
    std::vector<TuneTask> tasks = extract_tasks(gemm_graph(16, 16, 64));
    ASSERT_EQ(tasks.size(), 1u);
    const tir::PrimFunc& f = tasks[0].func;
    schedule::Schedule s(f);
    std::string block;
    for (const std::string& b : s.blocks())
        if (s.get_loops(b).size() == 3) block = b;
    ASSERT_FALSE(block.empty());
    auto loops = s.get_loops(block);
    auto ks = s.split(loops[2], {-1, 16});
    s.unroll(ks[1]);
    const int64_t plain = code_size_estimate(f), unrolled = code_size_estimate(s.func());
    EXPECT_GE(plain, 4);  // A, B and C read, C written
    EXPECT_GE(unrolled, plain + 15 * 4);  // the update's accesses copied 16 times

    MeasureOptions mo;
    mo.max_code_size = (plain + unrolled) / 2;  // the default schedule is exempt
    TaskMeasurer m(tasks[0], mo);
    MeasureResult big = m.measure(s.func());
    EXPECT_NE(big.error.find("compile limit"), std::string::npos) << big.error;
    EXPECT_TRUE(big.times_ms.empty());
    MeasureResult small = m.measure(f);
    EXPECT_TRUE(small.ok()) << small.error;
}

}  // namespace
}  // namespace tessera::autotune
