// Measurement isolation (crashing, hanging and wrong candidates), the
// tuning database (round trip, torn lines, resume), cancel, and a short
// tuning run on a small GEMM that must beat the naive loop nest.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "engine/autotune/space.h"
#include "tests/engine/autotune/quick_tune_options.h"
#include "engine/autotune/tuner.h"
#include "engine/driver/driver.h"
#include "engine/tir/interpreter.h"
#include "tests/engine/graph/passes/passes_test_util.h"

namespace tessera::autotune {
namespace {

namespace fs = std::filesystem;

// Deliberately broken candidates, run by the worker in place of a compiled kernel
// (a real SIGSEGV, not UBSan's report of one, under the sanitize preset).
__attribute__((no_sanitize("undefined"))) void segfaults(void**) {
    volatile int* p = nullptr;
    *p = 1;
}
void hangs(void**) {
    for (volatile unsigned i = 0;; i = i + 1) {
    }
}
void wrong(void** args) {  // writes C = 0 (A: 8x8, B: 8x8, C: 8x8)
    std::memset(args[2], 0, 8 * 8 * sizeof(float));
}
void right(void** args) {  // a correct naive GEMM written by hand
    auto* a = static_cast<const float*>(args[0]);
    auto* b = static_cast<const float*>(args[1]);
    auto* c = static_cast<float*>(args[2]);
    for (int i = 0; i < 8; ++i)
        for (int j = 0; j < 8; ++j) {
            float s = 0;
            for (int k = 0; k < 8; ++k) s += a[i * 8 + k] * b[k * 8 + j];
            c[i * 8 + j] = s;
        }
}

fs::path temp_db(const std::string& name) {
    fs::path p = fs::temp_directory_path() / ("tessera_autotune_" + std::to_string(getpid()) + "_" + name);
    fs::remove(p);
    return p;
}

TuneOptions quick(int trials) { return test::quick_tune_options(trials); }

graph::Graph two_layers() {
    graph::Graph g;
    g.name = "two_layers";
    auto value = [&](const std::string& name) {
        graph::Value v;
        v.name = name;
        v.type = {graph::DType::Float32, {16, 16}};
        return g.add_value(v);
    };
    int a = value("A"), b1 = value("B1"), b2 = value("B2");
    int x = value("X"), y = value("Y"), z = value("Z"), out = value("O");
    g.inputs = {a, b1, b2};
    g.outputs = {out};
    auto node = [&](const std::string& op, const std::string& name, std::vector<int> in, int o) {
        graph::Node n;
        n.op = op;
        n.name = name;
        n.inputs = std::move(in);
        n.outputs = {o};
        g.add_node(n);
    };
    node("nn.matmul", "mm1", {a, b1}, x);
    node("nn.relu", "relu1", {x}, y);
    node("nn.matmul", "mm2", {y, b2}, z);
    node("nn.relu", "relu2", {z}, out);
    return g;
}

TEST(Tasks, IdenticalFusedKernelsShareOneWeightedTask) {
    graph::Graph og = driver::optimize(two_layers());
    std::vector<TuneTask> tasks = extract_tasks(og);
    ASSERT_EQ(tasks.size(), 1u) << graph::print(og);
    EXPECT_EQ(tasks[0].weight, 2);
    EXPECT_EQ(tasks[0].kind, TaskKind::Matmul);
    EXPECT_GE(tasks[0].flops, 2.0 * 16 * 16 * 16);
    EXPECT_EQ(tasks[0].key.rfind("llvm:", 0), 0u);
    // Another shape is another workload; the same shape under other names is the same.
    EXPECT_NE(extract_tasks(gemm_graph(16, 16, 8))[0].key, extract_tasks(gemm_graph(16, 16, 16))[0].key);
    graph::Graph renamed = gemm_graph(16, 16, 8);
    renamed.nodes[0].name = "other";
    for (auto& v : renamed.values) v.name += "_x";
    EXPECT_EQ(extract_tasks(renamed)[0].key, extract_tasks(gemm_graph(16, 16, 8))[0].key);
}

// Whether `t`'s default schedule packs an operand into panels.
bool packs_an_operand(const TuneTask& t) {
    for (const schedule::Step& s : t.default_trace.steps)
        if (s.op == "pack_operand") return true;
    return false;
}

TEST(Tasks, AnIntegerConvReadsItsWindowsWhereTheyLie) {
    // An int8 conv's GEMM (64 channels at 56 x 56, 3 x 3): its B, the
    // im2col'd windows just written by the kernel before, is read in place
    // (copied into panels it was slower with warm caches), and with windows
    // of 144 words the product is unblocked; a float product of the same
    // shape with a B computed otherwise still packs it.
    using namespace passes::testing;
    graph::Graph g;
    const int x = input(g, "x", {1, 64, 56, 56});
    g.values[size_t(x)].type.dtype = graph::DType::UInt8;
    const int cols = node(g, "nn.im2col_int8x4", "cols", {x},
                          {{"kernel", std::vector<int64_t>{3, 3}},
                           {"padding", std::vector<int64_t>{1, 1, 1, 1}},
                           {"out_width", int64_t(56)},
                           {"squeeze_batch", int64_t(1)}});
    const int w = constant(g, "w", {64, 144}, 3);
    g.values[size_t(w)].type.dtype = graph::DType::Int32;
    g.outputs = {node(g, "nn.matmul_i8u8", "conv", {w, cols})};
    graph::Graph f;
    const int a = input(f, "a", {64, 144}), b = input(f, "b", {144, 3136});
    f.outputs = {node(f, "nn.matmul", "mm", {a, node(f, "nn.relu", "b_relu", {b})})};
    for (const graph::Graph* model : {&g, &f}) {
        bool found = false;
        for (const TuneTask& t : extract_tasks(driver::optimize(*model))) {
            if (topi::cpu_op_class(t.anchor) != topi::CpuOpClass::Matmul) continue;
            found = true;
            const bool integer = model == &g;
            EXPECT_EQ(packs_an_operand(t), !integer) << t.name;
            for (const char* name : {"matmul.pack_b", "matmul.blocked"}) {
                auto knob = t.cpu.knobs.find(name);
                EXPECT_EQ(knob != t.cpu.knobs.end() && knob->second == 0, integer) << name;
            }
        }
        EXPECT_TRUE(found);
    }
}

// C = A W with W a constant (seeded random values), A 96 x 256, W 256 x 128:
// large enough that the default rule packs W.
graph::Graph constant_weight_gemm() {
    using namespace passes::testing;
    graph::Graph g;
    g.name = "constant_weight_gemm";
    int a = input(g, "A", {96, 256});
    g.outputs = {node(g, "nn.matmul", "mm", {a, constant(g, "W", {256, 128}, 7)})};
    return g;
}

TEST(Measure, ConstantOperandsAreTimedPackedAtCompileTimeAsTheDriverBuildsThem) {
    std::vector<TuneTask> tasks = extract_tasks(constant_weight_gemm());
    ASSERT_EQ(tasks.size(), 1u);
    const TuneTask& task = tasks[0];
    ASSERT_EQ(task.constant_params, (std::vector<bool>{false, true, false}));
    MeasureOptions o;
    TaskMeasurer folded(task, o);
    ASSERT_TRUE(folded.baseline().ok()) << folded.baseline().error;
    // The default kernel is built without its packing nest: W's panels are
    // an argument, as in the driver's build (one packed copy at compile time).
    Built b = folded.build({task.default_func})[0];
    ASSERT_TRUE(b.error.empty()) << b.error;
    ASSERT_EQ(b.prepacked.size(), 1u);
    EXPECT_EQ(b.prepacked[0].param, 1u);
    EXPECT_EQ(b.prepacked[0].shape, (std::vector<int64_t>{256, 128}));
    // Independent check of the folded kernel and the panels the measurer
    // makes: a measurer that treats W as a run-time operand computes its
    // reference with the packing nest inside the kernel, on the same seeded
    // data; the folded kernel, given panels of that data, verifies against it.
    TuneTask unfolded_task = task;
    unfolded_task.constant_params.assign(task.constant_params.size(), false);
    TaskMeasurer unfolded(unfolded_task, o);
    Built in_kernel = unfolded.build({task.default_func})[0];
    ASSERT_TRUE(in_kernel.error.empty()) << in_kernel.error;
    EXPECT_TRUE(in_kernel.prepacked.empty());
    MeasureResult r = unfolded.run(b);
    EXPECT_TRUE(r.ok()) << r.error;
    // Without its panels (W's rows given where the panels belong) the folded
    // kernel computes something else, and verification says so.
    MeasureResult raw = unfolded.run(b.fn);
    EXPECT_NE(raw.error.find("wrong result"), std::string::npos) << raw.error;
}

TEST(Measure, CrashHangAndWrongResultAreErrorsNotFailures) {
    std::vector<TuneTask> tasks = extract_tasks(gemm_graph(8, 8, 8));
    ASSERT_EQ(tasks.size(), 1u);
    MeasureOptions o;
    o.timeout_s = 0.5;
    TaskMeasurer m(tasks[0], o);
    EXPECT_TRUE(m.baseline().ok());

    MeasureResult crash = m.run(&segfaults);
    EXPECT_NE(crash.error.find("crashed"), std::string::npos) << crash.error;
    EXPECT_TRUE(crash.times_ms.empty());

    MeasureResult hang = m.run(&hangs);
    EXPECT_NE(hang.error.find("timeout"), std::string::npos) << hang.error;

    MeasureResult bad = m.run(&wrong);
    EXPECT_NE(bad.error.find("wrong result"), std::string::npos) << bad.error;

    // The session goes on: a correct kernel (hand-written and compiled) still measures.
    MeasureResult good = m.run(&right);
    EXPECT_TRUE(good.ok()) << good.error;
    MeasureResult naive = m.measure(tasks[0].func);
    EXPECT_TRUE(naive.ok()) << naive.error;
    EXPECT_GT(naive.median_ms(), 0);
}

TEST(Database, RoundTripTornLineAndBest) {
    fs::path p = temp_db("roundtrip.jsonl");
    std::vector<TuneTask> tasks = extract_tasks(gemm_graph(16, 8, 4));
    std::mt19937_64 rng(4);
    Candidate c = sample(tasks[0].func, {}, rng);
    TuningRecord a;
    a.workload = tasks[0].key;
    a.task = "mm";
    a.trace = generate(tasks[0].func, c, {}).trace();
    a.decisions = c.to_json();
    a.times_ms = {2.0, 1.0, 3.0};
    a.timestamp = 5;
    a.machine = machine_fingerprint();
    TuningRecord b = a;
    b.times_ms = {0.5};
    TuningRecord e = a;
    e.times_ms.clear();
    e.error = "crashed: Segmentation fault";
    {
        Database db(p.string());
        db.append(a);
        db.append(e);
    }
    std::ofstream(p, std::ios::app) << R"({"workload": "llvm:00", "trace": {"ste)";  // torn write
    {
        Database db(p.string());
        EXPECT_EQ(db.skipped_lines(), 1);
        ASSERT_EQ(db.records().size(), 2u);
        EXPECT_EQ(db.records()[0].trace.steps, a.trace.steps);
        EXPECT_EQ(db.records()[0].times_ms, a.times_ms);
        EXPECT_EQ(db.records()[1].error, e.error);
        EXPECT_EQ(db.count(a.workload), 2);
        ASSERT_NE(db.best(a.workload), nullptr);
        EXPECT_DOUBLE_EQ(db.best(a.workload)->median_ms(), 2.0);
        db.append(b);  // goes on its own line after the torn one
    }
    Database db(p.string());
    EXPECT_EQ(db.records().size(), 3u);
    EXPECT_DOUBLE_EQ(db.best(a.workload)->median_ms(), 0.5);
    // A confirmed (re-measured) record outranks a faster single trial.
    TuningRecord conf = a;
    conf.times_ms = {0.9, 0.8, 1.0};
    conf.confirmed = true;
    db.append(conf);
    ASSERT_TRUE(db.best(a.workload)->confirmed);
    EXPECT_DOUBLE_EQ(db.best(a.workload)->median_ms(), 0.9);
    EXPECT_EQ(db.count(a.workload), 3);  // not a trial
    // The best record replays onto the function: compile-time application.
    bool applied = false;
    tir::PrimFunc f = apply_best(tasks[0].func, db, "llvm", &applied);
    EXPECT_TRUE(applied);
    EXPECT_EQ(Candidate::from_json(db.best(a.workload)->decisions), c);
    fs::remove(p);
}

TEST(Database, OneWriterAtATimeAndSkippedLinesAreReported) {
    fs::path p = temp_db("locked.jsonl");
    fs::remove(p);
    std::vector<TuneTask> tasks = extract_tasks(gemm_graph(16, 8, 4));
    TuningRecord a;
    a.workload = tasks[0].key;
    a.task = "mm";
    a.times_ms = {1.0};
    a.machine = machine_fingerprint();
    {
        Database writer(p.string());
        writer.append(a);
        writer.sync();
        // A second writer (another `tessera tune` on the same file) is refused
        // with the reason; the first keeps its file and its records.
        try {
            Database second(p.string());
            ADD_FAILURE() << "a second writer opened a locked database";
        } catch (const UserError& e) {
            EXPECT_THAT(e.what(), testing::HasSubstr("is in use by another process"));
            EXPECT_THAT(e.what(), testing::HasSubstr(p.string()));
        }
        // Readers (run/compile --records) do not need the lock.
        Database reader(p.string(), true);
        EXPECT_EQ(reader.records().size(), 1u);
        writer.append(a);
    }
    std::ofstream(p, std::ios::app) << "{\"workload\": 7}\n" << R"({"workload": "llvm:00", "tr)";
    Database db(p.string());  // the lock was released with the first writer
    EXPECT_EQ(db.records().size(), 2u);
    EXPECT_EQ(db.skipped_lines(), 2);
    const std::string note = skipped_lines_note(db);
    EXPECT_THAT(note, testing::HasSubstr("2 unreadable line(s) skipped"));
    EXPECT_THAT(note, testing::HasSubstr("first: " + p.string() + ":3: "));
    Database clean("");
    EXPECT_EQ(skipped_lines_note(clean), "");
    fs::remove(p);
}

/// A local record of task `t`'s default (knobbed) candidate: `ms`, tuned for
/// `threads`, measured at LLVM level `opt_level`.
TuningRecord default_record(const TuneTask& t, double ms, int threads, int opt_level) {
    TuningRecord r;
    r.workload = t.key;
    r.trace = t.default_trace;
    r.decisions = default_candidate(space_options(t, 1)).to_json();
    r.times_ms = {ms};
    r.machine = machine_fingerprint();
    r.threads = threads;
    r.opt_level = opt_level;
    return r;
}

TEST(Database, OptLevelIsPartOfTheRecordAndOldRecordsHaveTheDefault) {
    fs::path p = temp_db("levels.jsonl");
    std::vector<TuneTask> tasks = extract_tasks(gemm_graph(16, 8, 4));
    const TuneTask& t = tasks[0];
    TuningRecord o3 = default_record(t, 1.0, 1, 3);
    TuningRecord o1 = o3;
    o1.times_ms = {2.0};
    o1.opt_level = 1;
    // A record written before records held their level.
    nlohmann::json legacy = nlohmann::json::parse(o3.to_json_line());
    legacy.erase("opt_level");
    legacy["times_ms"] = {4.0};
    TuningRecord bad = o3;
    bad.opt_level = 7;
    {
        Database db(p.string());
        db.append(o3);
        db.append(o1);
    }
    std::ofstream(p, std::ios::app) << legacy.dump() << "\n" << bad.to_json_line() << "\n";
    Database db(p.string());
    EXPECT_EQ(db.skipped_lines(), 1);  // level 7 is not a level
    ASSERT_EQ(db.records().size(), 3u);
    EXPECT_EQ(db.records()[0].opt_level, 3);
    EXPECT_EQ(db.records()[1].opt_level, 1);
    EXPECT_EQ(db.records()[2].opt_level, kDefaultRecordOptLevel);
    ASSERT_NE(db.best(t.key, "llvm", 3), nullptr);
    EXPECT_DOUBLE_EQ(db.best(t.key, "llvm", 3)->median_ms(), 1.0);
    EXPECT_DOUBLE_EQ(db.best(t.key, "llvm", 1)->median_ms(), 2.0);
    EXPECT_DOUBLE_EQ(db.best(t.key, "llvm", 2)->median_ms(), 4.0);  // the old record
    EXPECT_EQ(db.best(t.key, "llvm", 0), nullptr);
    EXPECT_DOUBLE_EQ(db.best(t.key)->median_ms(), 1.0);  // any level
    EXPECT_EQ(db.count(t.key), 3);
    EXPECT_EQ(db.count(t.key, 1), 1);
    EXPECT_EQ(db.count(t.key, 0), 0);
    // Applied at compile time only at the level it was measured at.
    bool applied = false;
    apply_best(t.func, t.anchor, t.cpu, db, "llvm", &applied, 0);
    EXPECT_FALSE(applied);
    apply_best(t.func, t.anchor, t.cpu, db, "llvm", &applied, 2);
    EXPECT_TRUE(applied);
    fs::remove(p);
}

// One database for two thread counts: each build gets the best record tuned
// for its own count (a faster record for another count must not hide it), and
// records that name no thread count serve any.
TEST(Database, BestRecordPerThreadCount) {
    std::vector<TuneTask> tasks = extract_tasks(gemm_graph(16, 8, 4));
    const TuneTask& t = tasks[0];
    TuningRecord one = default_record(t, 3.0, 1, 2);
    TuningRecord two = one;
    two.times_ms = {1.0};
    two.threads = 2;
    Database db("");
    db.append(one);
    db.append(two);
    ASSERT_NE(db.best(t.key, "llvm", 2, 1), nullptr);
    EXPECT_DOUBLE_EQ(db.best(t.key, "llvm", 2, 1)->median_ms(), 3.0);
    EXPECT_DOUBLE_EQ(db.best(t.key, "llvm", 2, 2)->median_ms(), 1.0);
    EXPECT_DOUBLE_EQ(db.best(t.key, "llvm", 2)->median_ms(), 1.0);  // any thread count
    EXPECT_EQ(db.best(t.key, "llvm", 2, 4), nullptr);
    TuningRecord legacy = one;
    legacy.times_ms = {5.0};
    legacy.threads = -1;
    db.append(legacy);
    EXPECT_DOUBLE_EQ(db.best(t.key, "llvm", 2, 4)->median_ms(), 5.0);
    EXPECT_DOUBLE_EQ(db.best(t.key, "llvm", 2, 1)->median_ms(), 3.0);
    // The 1-thread build applies the 1-thread record despite the faster 2-thread one.
    topi::CpuScheduleOptions cpu = t.cpu;
    cpu.threads = 1;
    bool applied = false;
    apply_best(t.func, t.anchor, cpu, db, "llvm", &applied, 2);
    EXPECT_TRUE(applied);
}

TEST(Tune, ResumesAndCancels) {
    fs::path p = temp_db("resume.jsonl");
    graph::Graph g = gemm_graph(16, 16, 8);
    std::vector<TuneTask> tasks = extract_tasks(g);
    int first_measured = 0;
    {
        Database db(p.string());
        CancelToken cancel;
        TuneResult r = tune(tasks, db, quick(12), [&](const Progress& pr) {
            if (pr.trials >= 3) cancel.cancel();  // like Ctrl-C from the callback's thread
        }, &cancel);
        EXPECT_TRUE(r.cancelled);
        first_measured = r.measured;
        EXPECT_EQ(first_measured, 3);
    }
    Database db(p.string());
    EXPECT_EQ(db.count(tasks[0].key), 3);
    TuneResult r = tune(tasks, db, quick(12));
    EXPECT_FALSE(r.cancelled);
    EXPECT_EQ(r.final.resumed, 3);
    EXPECT_EQ(r.measured, 9);          // only what was left
    EXPECT_EQ(r.final.trials, 12);
    EXPECT_EQ(db.count(tasks[0].key), 12);
    // Distinct candidates: the resumed session did not re-measure recorded ones.
    std::set<std::string> decisions;
    for (const auto& rec : db.records())
        if (!rec.baseline) decisions.insert(rec.decisions);
    EXPECT_EQ(decisions.size(), 12u);
    for (const auto& rec : db.records()) EXPECT_EQ(rec.opt_level, quick(1).measure.opt_level);
    // Trials measured at another LLVM level are not this level's trials.
    TuneOptions o1 = quick(2);
    o1.measure.opt_level = 1;
    o1.confirm_top = 0;
    TuneResult r1 = tune(tasks, db, o1);
    EXPECT_EQ(r1.final.resumed, 0);
    EXPECT_EQ(r1.measured, 2);
    EXPECT_EQ(db.count(tasks[0].key, 1), 2);
    EXPECT_EQ(db.count(tasks[0].key, quick(1).measure.opt_level), 12);
    fs::remove(p);
}

TEST(Tune, FinalistsAreRemeasuredAndTheConfirmedMedianWins) {
    fs::path p = temp_db("confirm.jsonl");
    std::vector<TuneTask> tasks = extract_tasks(gemm_graph(32, 32, 16));
    Database db(p.string());
    TuneOptions o = quick(10);
    o.confirm_top = 3;
    o.confirm_rounds = 3;
    TuneResult r = tune(tasks, db, o);
    ASSERT_EQ(r.final.trials, 10);
    EXPECT_EQ(db.count(tasks[0].key), 10);  // confirmations are not trials
    const std::string dflt = default_candidate(space_options(tasks[0], 1)).to_json();
    std::vector<const TuningRecord*> fin;
    std::map<std::string, double> trial_ms;  // fastest single trial per candidate
    for (const auto& rec : db.records()) {
        if (rec.confirmed) fin.push_back(&rec);
        else if (!rec.baseline && rec.ok()) {
            // A candidate measured twice ranks by its faster trial, as the tuner's list does.
            auto it = trial_ms.find(rec.decisions);
            if (it == trial_ms.end() || rec.median_ms() < it->second)
                trial_ms[rec.decisions] = rec.median_ms();
        }
    }
    ASSERT_EQ(fin.size(), 4u);  // the default and the 3 fastest others
    std::vector<std::pair<double, std::string>> ranked;
    for (const auto& [d, ms] : trial_ms)
        if (d != dflt) ranked.push_back({ms, d});
    std::sort(ranked.begin(), ranked.end());
    ASSERT_GE(ranked.size(), 3u);
    // The default and three of the fastest others: each other finalist's
    // trial is at most the third fastest (trials can tie at the timer's
    // resolution, and then either of the tied ones may be taken).
    std::set<std::string> got;
    const TuningRecord* fastest = nullptr;
    for (const TuningRecord* f : fin) {
        got.insert(f->decisions);
        ASSERT_TRUE(f->ok()) << f->error;
        EXPECT_EQ(f->times_ms.size(), 3u);  // one median per round
        EXPECT_EQ(f->threads, 1);
        if (!fastest || f->median_ms() < fastest->median_ms()) fastest = f;
        if (f->decisions == dflt) continue;
        ASSERT_TRUE(trial_ms.count(f->decisions)) << f->decisions;
        EXPECT_LE(trial_ms[f->decisions], ranked[2].first) << f->decisions;
    }
    EXPECT_EQ(got.size(), 4u);
    EXPECT_TRUE(got.count(dflt));
    // best() picks among confirmed records even when a single trial was faster.
    EXPECT_EQ(db.best(tasks[0].key), fastest);
    EXPECT_DOUBLE_EQ(r.final.tasks[0].best_ms, fastest->median_ms());
    // Round trip, and a resumed session neither counts nor repeats them.
    Database again(p.string(), true);  // a reader beside the open writer
    ASSERT_NE(again.best(tasks[0].key), nullptr);
    EXPECT_TRUE(again.best(tasks[0].key)->confirmed);
    EXPECT_EQ(again.best(tasks[0].key)->decisions, fastest->decisions);
    TuneResult r2 = tune(tasks, again, o);
    EXPECT_EQ(r2.measured, 0);
    EXPECT_EQ(r2.final.trials, 10);
    fs::remove(p);
}

TEST(Tune, ShortRunBeatsTheNaiveLoopNestAndBuildsWithRecords) {
    fs::path p = temp_db("gemm.jsonl");
    graph::Graph g = gemm_graph(96, 96, 64);
    std::vector<TuneTask> tasks = extract_tasks(g);
    ASSERT_EQ(tasks.size(), 1u);
    Database db(p.string());
    TuneOptions o = quick(24);
    o.batch = 8;
    o.measure.opt_level = driver::BuildOptions{}.opt_level;  // the build below applies its level
    TuneResult r = tune(tasks, db, o);
    ASSERT_EQ(r.final.trials, 24);
    const TaskProgress& t = r.final.tasks[0];
    ASSERT_GT(t.best_ms, 0);
    // The naive loop nest measured in the same way.
    MeasureOptions mo = o.measure;
    TaskMeasurer m(tasks[0], mo);
    MeasureResult naive = m.measure(tasks[0].func);
    ASSERT_TRUE(naive.ok());
    EXPECT_LT(t.best_ms * 2, naive.median_ms()) << "best " << t.best_ms << " ms, naive "
                                                 << naive.median_ms() << " ms";
    // The default schedule (all knobs at their first choices) is one of the
    // trials, so the tuned kernel is never slower than it.
    const std::string dflt = default_candidate(space_options(tasks[0], 1)).to_json();
    const TuningRecord* dr = nullptr;
    const TuningRecord* confirmed_default = nullptr;
    for (const auto& rec : db.records())
        if (!rec.baseline && rec.decisions == dflt) (rec.confirmed ? confirmed_default : dr) = &rec;
    ASSERT_NE(dr, nullptr);
    EXPECT_TRUE(dr->ok()) << dr->error;
    // The default is among the re-measured finalists, so the record is never slower than it.
    ASSERT_NE(confirmed_default, nullptr);
    ASSERT_TRUE(confirmed_default->ok()) << confirmed_default->error;
    EXPECT_LE(t.best_ms, confirmed_default->median_ms());
    // The ranking in the database agrees with the progress report.
    ASSERT_NE(db.best(tasks[0].key), nullptr);
    EXPECT_DOUBLE_EQ(db.best(tasks[0].key)->median_ms(), t.best_ms);

    // Building with the records applies the best trace and computes the same.
    driver::BuildOptions bo;
    bo.threads = 1;
    bo.records = p.string();
    auto model = driver::build(g, bo);
    auto inputs = driver::random_inputs(g, 7);
    auto got = model->run(inputs);
    auto want = driver::interpret_graph(g, inputs);
    const float* a = static_cast<const float*>(got[0].raw());
    const float* b = static_cast<const float*>(want[0].raw());
    for (int64_t i = 0; i < got[0].num_elements(); ++i)
        ASSERT_NEAR(a[i], b[i], 1e-3 + 1e-3 * std::fabs(b[i])) << i;
    fs::remove(p);
}

// A thread that ran parallel kernels leads an OpenMP pool; a worker forked
// from it inherited that pool without its threads and hung (the studio tuned
// on a job thread that had run the model before).
TEST(Measure, ParallelCandidatesMeasureAfterThisThreadRanParallelKernels) {
    const graph::Graph g = gemm_graph(128, 128, 128);
    driver::BuildOptions bo;
    bo.threads = 2;
    std::shared_ptr<driver::CompiledModel> model = driver::build(g, bo);
    model->executor->set_num_threads(2);
    model->run(driver::random_inputs(model->graph));

    std::vector<TuneTask> tasks = extract_tasks(driver::optimize(g, bo), "llvm", 2);
    ASSERT_EQ(tasks.size(), 1u);
    MeasureOptions o;
    o.threads = 2;
    o.timeout_s = 5;
    TaskMeasurer m(tasks[0], o);  // measures the default schedule in a worker
    EXPECT_TRUE(m.baseline().ok()) << m.baseline().error;
    MeasureResult again = m.measure(tasks[0].func);
    EXPECT_TRUE(again.ok()) << again.error;
}

}  // namespace
}  // namespace tessera::autotune
