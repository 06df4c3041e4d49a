// `tessera tune MODEL|--gemm MxNxK|--conv CxHxWxKxRxS --trials N --records DB`: autotunes the
// fused kernels of a model, appending every measurement to the database
// (resumable); a progress bar on a terminal, JSON lines with --json; Ctrl-C
// stops within a second keeping what was recorded.
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <iostream>

#include "app/cli/cli_common.h"
#include "app/cli/cmd_tune_gpu.h"
#include "engine/autotune/pin.h"
#include "engine/autotune/tuner.h"
#include "engine/core/error.h"
#include "engine/driver/driver.h"

namespace tessera::cli {

namespace {

struct TuneCmdOptions {
    std::string model;
    std::string gemm;  // "MxNxK"
    std::string conv;  // "CxHxWxKxRxS"
    std::string records;
    int trials = 64;
    int workers = 1;
    int threads = 1;
    int batch = 8;
    double timeout = 10;
    uint64_t seed = 1;
    bool json = false;
    int opt_level = 2;
    int llvm_opt_level = -1;  // -1: the same as opt_level (what `tessera run/compile` use)
    std::vector<std::string> passes;
    bool print_after_all = false;
    std::string target = "llvm";            // "cuda": GPU tuning (cmd_tune_gpu.h)
    std::vector<std::string> input_shapes;  // --input-shape NAME:DIMS
    InputFiles input_files;                 // --input-dir / --inputs
    std::string op;                         // --op NODE: only the kernel that runs this node
    std::string pin;                        // --pin FILE: knob values fixed (autotune/pin.h)
};

autotune::CancelToken* g_cancel = nullptr;
extern "C" void on_sigint(int) {
    if (g_cancel) g_cancel->cancel();
}

CLI::App* add_tune_command(CLI::App& app, TuneCmdOptions& o) {
    CLI::App* cmd = app.add_subcommand(
        "tune", "Autotune the kernels of a model, recording measurements in a database");
    auto* model = cmd->add_option("MODEL", o.model, "an .onnx file or an ONNX test-case folder");
    add_input_shape_option(cmd, o.input_shapes);
    add_input_files_options(cmd, o.input_files);
    auto* gemm =
        cmd->add_option("--gemm", o.gemm, "tune one fp32 GEMM instead: MxNxK (A: MxK, B: KxN)");
    auto* conv = cmd->add_option("--conv", o.conv,
                                 "tune one fp32 conv2d instead: CxHxWxKxRxS (batch 1, stride 1, "
                                 "same padding; opt level 3 gives the blocked NCHWc kernel)");
    model->excludes(gemm);
    model->excludes(conv);
    gemm->excludes(conv);
    cmd->add_option("--records", o.records, "tuning database (JSON lines; appended, resumed)")
        ->required();
    cmd->add_option("--trials", o.trials, "measured candidates in all (recorded ones count)")
        ->check(CLI::NonNegativeNumber);
    cmd->add_option("--workers", o.workers, "parallel compile threads")->check(CLI::PositiveNumber);
    cmd->add_option("--timeout", o.timeout, "seconds one candidate may run")
        ->check(CLI::PositiveNumber);
    cmd->add_option("--threads", o.threads, "threads the kernels run on (1 = no parallel loops)")
        ->check(CLI::NonNegativeNumber);
    cmd->add_option("--batch", o.batch, "candidates measured per round of a task")
        ->check(CLI::PositiveNumber);
    cmd->add_option("--seed", o.seed, "search seed");
    cmd->add_flag("--json", o.json, "one JSON line per trial, a summary object last");
    cmd->add_option("--op", o.op,
                    "tune only the kernel that runs this node (or the kernel of this name, as "
                    "`run --profile` prints it)");
    cmd->add_option("--pin", o.pin,
                    "JSON {\"knobs\": {NAME: VALUE}}: knob values of the --op kernel kept "
                    "fixed; the tuner searches the others")
        ->check(CLI::ExistingFile);
    cmd->add_option("--target", o.target, "llvm (CPU) or cuda (measures on the GPU)")
        ->check(CLI::IsMember({"llvm", "cuda"}));
    add_pass_options(cmd, o.passes, o.opt_level, o.print_after_all);
    cmd->add_option("--llvm-opt-level", o.llvm_opt_level,
                    "LLVM level candidates are compiled and measured at (default: --opt-level, "
                    "as the build that applies the records compiles them)")
        ->check(CLI::Range(0, 3));
    return cmd;
}

graph::Graph gemm_from(const std::string& spec) {
    long long m = 0, n = 0, k = 0;
    char tail = 0;
    TS_USER_CHECK(std::sscanf(spec.c_str(), "%lldx%lldx%lld%c", &m, &n, &k, &tail) == 3 && m > 0 &&
                  n > 0 && k > 0)
        << "--gemm must be MxNxK with positive sizes, got '" << spec << "'";
    return autotune::gemm_graph(m, n, k);
}

graph::Graph conv_from(const std::string& spec) {
    long long c = 0, h = 0, w = 0, k = 0, r = 0, sz = 0;
    char tail = 0;
    TS_USER_CHECK(std::sscanf(spec.c_str(), "%lldx%lldx%lldx%lldx%lldx%lld%c", &c, &h, &w, &k, &r,
                              &sz, &tail) == 6)
        << "--conv must be CxHxWxKxRxS, got '" << spec << "'";
    return autotune::conv2d_graph(c, h, w, k, r, sz);
}

nlohmann::json task_json(const autotune::TaskProgress& t) {
    return {{"name", t.name},
            {"key", t.key},
            {"kind", t.kind},
            {"weight", t.weight},
            {"trials", t.trials},
            {"errors", t.errors},
            {"default_ms", t.default_ms},
            {"best_ms", t.best_ms},
            {"default_gflops", t.default_gflops()},
            {"best_gflops", t.best_gflops()}};
}

void draw_bar(const autotune::Progress& p) {
    const int width = 30;
    const int filled = p.total > 0 ? int(double(p.trials) / p.total * width) : width;
    std::string bar(size_t(std::min(filled, width)), '#');
    bar.resize(size_t(width), '-');
    std::string task;
    if (p.task >= 0 && p.task < int(p.tasks.size())) {
        const auto& t = p.tasks[size_t(p.task)];
        task = t.name.substr(0, 24) + " " + fixed(t.best_gflops(), 1) + " GFLOP/s";
    }
    std::fprintf(stderr, "\r[%s] %d/%d  %s  est %s ms (default %s)   ", bar.c_str(), p.trials,
                 p.total, task.c_str(), fixed(p.latency_ms, 3).c_str(),
                 fixed(p.default_latency_ms, 3).c_str());
    std::fflush(stderr);
}

int run_tune(const TuneCmdOptions& o) {
    TS_USER_CHECK(!o.model.empty() || !o.gemm.empty() || !o.conv.empty())
        << "tune: give a MODEL, --gemm MxNxK or --conv CxHxWxKxRxS";
    graph::Graph g = !o.gemm.empty() ? gemm_from(o.gemm)
                     : !o.conv.empty()
                         ? conv_from(o.conv)
                         : load(resolve_model_path(o.model), o.input_files, o.input_shapes);
    if (o.target == "cuda")
        return run_tune_gpu(g, o.records, o.trials, o.seed, o.json, o.opt_level, o.passes);
    driver::BuildOptions bo;
    bo.opt_level = o.opt_level;
    bo.passes = o.passes;
    bo.threads = o.threads;
    graph::Graph og = driver::optimize(g, bo);
    std::vector<autotune::TuneTask> tasks = autotune::extract_tasks(og, "llvm", o.threads);
    TS_USER_CHECK(o.pin.empty() || !o.op.empty())
        << "tune: --pin needs --op NODE (the kernel it pins)";
    autotune::KnobPins pins;
    if (!o.op.empty()) {
        autotune::TuneTask task = autotune::task_of_node(og, o.op, "llvm", o.threads);
        if (!o.pin.empty()) {
            pins = autotune::KnobPins::load(o.pin);
            autotune::pin_task(task, pins);
        }
        tasks = {task};
    }

    autotune::TuneOptions to;
    to.trials = o.trials;
    to.threads = o.threads;
    to.batch = o.batch;
    to.seed = o.seed;
    to.measure.timeout_s = o.timeout;
    to.measure.workers = o.workers;
    // Measured as they will run: a kernel's speed can depend on the LLVM level.
    to.measure.opt_level = o.llvm_opt_level >= 0 ? o.llvm_opt_level : o.opt_level;
    autotune::Database db(o.records);
    // Records from another CPU neither seed the search nor count as trials.
    const std::string foreign = autotune::foreign_records_note(db);
    if (!foreign.empty() && !o.json) std::cerr << foreign << "\n";
    if (const std::string skipped = autotune::skipped_lines_note(db); !skipped.empty())
        std::cerr << skipped << "\n";

    autotune::CancelToken cancel;
    g_cancel = &cancel;
    auto old = std::signal(SIGINT, on_sigint);
    const bool tty = !o.json && isatty(2);
    if (!o.json)
        std::cerr << "tuning " << tasks.size() << " task(s) of '" << g.name << "', " << o.trials
                  << " trials, records " << o.records << " (" << db.records().size()
                  << " already)\n";
    if (!o.json)
        for (const autotune::TuneTask& t : tasks) {
            if (t.knobs.empty()) continue;
            std::cerr << "  " << t.name << ": default-rule knobs";
            for (const topi::CpuKnob& k : t.knobs) {
                if (o.op.empty()) {  // how many choices; with --op, the choices (for --pin)
                    std::cerr << " " << k.name << "(" << k.choices.size() << ")";
                    continue;
                }
                std::cerr << "\n    " << k.name << (pins.knobs.count(k.name) ? " pinned:" : ":");
                for (int64_t c : k.choices) std::cerr << " " << c;
            }
            std::cerr << "\n";
        }
    auto progress = [&](const autotune::Progress& p) {
        if (o.json) {
            nlohmann::json j = {{"event", "trial"},
                                {"trials", p.trials},
                                {"total", p.total},
                                {"latency_ms", p.latency_ms},
                                {"default_latency_ms", p.default_latency_ms},
                                {"rank_correlation", p.rank_correlation},
                                {"elapsed_s", p.elapsed_s}};
            if (p.task >= 0) j["task"] = task_json(p.tasks[size_t(p.task)]);
            if (!p.last_error.empty()) j["error"] = p.last_error;
            std::cout << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n"
                      << std::flush;
        } else if (tty) {
            draw_bar(p);
        }
    };
    autotune::TuneResult r;
    try {
        r = autotune::tune(tasks, db, to, progress, &cancel);
    } catch (...) {
        std::signal(SIGINT, old);
        g_cancel = nullptr;
        throw;
    }
    std::signal(SIGINT, old);
    g_cancel = nullptr;
    if (tty) std::cerr << "\n";

    nlohmann::json summary = {{"event", "done"},
                              {"model", !o.gemm.empty()   ? "gemm " + o.gemm
                                        : !o.conv.empty() ? "conv " + o.conv
                                                          : o.model},
                              {"foreign_records", db.foreign_records()},
                              {"records", o.records},
                              {"trials", r.final.trials},
                              {"resumed", r.final.resumed},
                              {"measured", r.measured},
                              {"cancelled", r.cancelled},
                              {"exhausted", r.exhausted},
                              {"trials_per_minute", r.trials_per_minute},
                              {"latency_ms", r.final.latency_ms},
                              {"default_latency_ms", r.final.default_latency_ms},
                              {"rank_correlation", r.final.rank_correlation},
                              {"rank_samples", r.final.rank_samples},
                              {"threads", o.threads}};
    nlohmann::json tj = nlohmann::json::array();
    for (const auto& t : r.final.tasks) tj.push_back(task_json(t));
    summary["tasks"] = tj;
    if (o.json) {
        print_json_line(summary);
    } else {
        for (const auto& t : r.final.tasks)
            std::cout << t.name << " (" << t.kind << ", x" << t.weight << "): " << t.trials
                      << " trials, " << t.errors << " errors, default " << fixed(t.default_ms, 3)
                      << " ms (" << fixed(t.default_gflops(), 1) << " GFLOP/s), best "
                      << fixed(t.best_ms, 3) << " ms (" << fixed(t.best_gflops(), 1)
                      << " GFLOP/s)\n";
        std::cout << "estimated latency " << fixed(r.final.latency_ms, 3) << " ms (default "
                  << fixed(r.final.default_latency_ms, 3) << " ms); " << r.measured
                  << " trials measured at " << fixed(r.trials_per_minute, 1)
                  << "/min; cost-model rank correlation " << fixed(r.final.rank_correlation, 2)
                  << (r.cancelled ? "; cancelled" : "")
                  << (r.exhausted ? "; stopped early: the search space has no unmeasured "
                                    "candidate left (pinned steps or knobs leave few)"
                                  : "")
                  << "\n";
    }
    return kOk;
}

const CommandRegistrar kRegistered{
    make_command<TuneCmdOptions>("tune", add_tune_command, run_tune)};

}  // namespace

}  // namespace tessera::cli
