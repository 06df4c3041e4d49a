// `tessera bench gemm|conv2d`: our default-scheduled kernel and the vendor
// library (OpenBLAS, oneDNN) in one process, one after the other; medians,
// GFLOP/s and the ratio (their time / our time). `--ladder` prints the seeds'
// GEMM schedule ladder. Part of the `tessera-bench` program only: the
// comparators are benchmark dependencies, never the product's.
#include <cstdio>
#include <iostream>

#include "bench/cli/bench_editor.h"
#include "bench/cli/bench_gemm_cuda.h"
#include "bench/cli/bench_model.h"
#include "bench/cli/bench_opt_levels.h"
#include "app/cli/cli_common.h"
#include "bench/lib/bench.h"
#include "bench/lib/vendor.h"
#include "engine/core/error.h"

namespace tessera::cli {

namespace {

struct BenchOptions {
    CLI::App* gemm = nullptr;
    CLI::App* conv = nullptr;
    CLI::App* model = nullptr;
    CLI::App* opt_levels = nullptr;
    CLI::App* editor = nullptr;
    BenchModelOptions m;
    BenchEditorOptions ed;
    BenchOptLevelsOptions levels;
    bench::GemmShape g;
    bench::ConvShape c;
    int threads = 1;
    std::string compare;
    bool json = false;
    bool ladder = false;
    int rounds = 3;
    std::string print;
    std::string target = "cpu";
};

CLI::App* add_bench_command(CLI::App& app, BenchOptions& o) {
    CLI::App* cmd = app.add_subcommand(
        "bench", "Benchmark our GEMM / conv2d kernels against OpenBLAS / oneDNN");
    cmd->require_subcommand(1);
    o.gemm = cmd->add_subcommand("gemm", "C = A B, fp32 row-major (M x K) (K x N)");
    o.gemm->add_option("--m", o.g.m, "rows of A and C")->check(CLI::PositiveNumber);
    o.gemm->add_option("--n", o.g.n, "columns of B and C")->check(CLI::PositiveNumber);
    o.gemm->add_option("--k", o.g.k, "columns of A, rows of B")->check(CLI::PositiveNumber);
    o.gemm->add_option("--compare", o.compare, "library to compare with (cublas with --target cuda)")
        ->check(CLI::IsMember({"openblas", "cublas"}));
    o.gemm->add_option("--target", o.target,
                       "cpu (ours vs OpenBLAS) or cuda (ours vs cuBLAS, --compare cublas)")
        ->check(CLI::IsMember({"cpu", "cuda"}));
    o.gemm->add_option("--rounds", o.rounds,
                       "alternate ours and theirs this many times; median of the rounds")
        ->check(CLI::Range(1, 100));
    o.gemm->add_option("--print", o.print,
                       "print the scheduled kernel instead of timing it: tir, lowered, llvm, asm")
        ->check(CLI::IsMember({"tir", "lowered", "llvm", "asm"}));
    o.gemm->add_flag("--ladder", o.ladder,
                     "the seeds' schedule ladder for an M^3 GEMM (naive ... +unroll)");
    o.conv = cmd->add_subcommand("conv2d", "NCHW conv2d with OIHW weights, symmetric padding");
    o.conv->add_option("--n", o.c.n, "batch")->check(CLI::PositiveNumber);
    o.conv->add_option("--c", o.c.c, "input channels")->check(CLI::PositiveNumber);
    o.conv->add_option("--h", o.c.h, "input height")->check(CLI::PositiveNumber);
    o.conv->add_option("--w", o.c.w, "input width")->check(CLI::PositiveNumber);
    o.conv->add_option("--k", o.c.k, "output channels")->check(CLI::PositiveNumber);
    o.conv->add_option("--r", o.c.r, "kernel height")->check(CLI::PositiveNumber);
    o.conv->add_option("--s", o.c.s, "kernel width")->check(CLI::PositiveNumber);
    o.conv->add_option("--stride", o.c.stride, "stride")->check(CLI::PositiveNumber);
    o.conv->add_option("--pad", o.c.pad, "padding on every side")->check(CLI::NonNegativeNumber);
    o.conv->add_option("--compare", o.compare, "library to compare with")
        ->check(CLI::IsMember({"onednn"}));
    o.gemm->add_option("--records", o.g.records,
                       "tuning database whose best records apply to our kernel");
    o.conv->add_option("--records", o.c.records,
                       "tuning database whose best records apply to our kernel");
    for (CLI::App* sub : {o.gemm, o.conv}) {
        sub->add_option("--threads", o.threads, "threads of ours and theirs")
            ->check(CLI::Range(1, 256));
        sub->add_flag("--json", o.json, "print one JSON object as the last line");
    }
    o.model = cmd->add_subcommand("model", "a whole ONNX model, ours against ONNX Runtime");
    add_bench_model_options(o.model, o.m);
    o.opt_levels = cmd->add_subcommand(
        "opt-levels", "whole models at -O1, -O2 and -O3 against each other (alternating rounds)");
    add_bench_opt_levels_options(o.opt_levels, o.levels);
    o.editor = cmd->add_subcommand(
        "editor", "each kernel as the studio's schedule editor measures it vs run --profile");
    add_bench_editor_options(o.editor, o.ed);
    return cmd;
}

nlohmann::json side(const bench::Measurement& m, double flops) {
    return {{"latency_ms_median", m.median_ms},
            {"latency_ms_min", m.min_ms},
            {"repeat", m.repeat},
            {"gflops", bench::gflops(flops, m.median_ms)}};
}

int run_ladder(const BenchOptions& o) {
    std::vector<bench::LadderRow> rows = bench::gemm_ladder(o.g.m, o.threads);
    std::printf("GEMM %lld^3 fp32, %d thread(s)\n", static_cast<long long>(o.g.m), o.threads);
    std::printf("%-24s %10s %9s %8s\n", "Schedule", "Time (ms)", "GFLOP/s", "Speedup");
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& r : rows) {
        std::printf("%-24s %10.2f %9.1f %7.1fx\n", r.name.c_str(), r.m.median_ms, r.gflops,
                    r.speedup);
        arr.push_back({{"name", r.name},
                       {"latency_ms_median", r.m.median_ms},
                       {"gflops", r.gflops},
                       {"speedup", r.speedup},
                       {"trace", nlohmann::json::parse(r.trace.to_json())}});
    }
    if (o.json) {
        std::cout.flush();
        print_json_line({{"ladder", arr}, {"n", o.g.m}, {"threads", o.threads}});
    }
    return kOk;
}

int run_bench(const BenchOptions& o) {
    if (o.model->parsed()) return run_bench_model(o.m);
    if (o.opt_levels->parsed()) return run_bench_opt_levels(o.levels);
    if (o.editor->parsed()) return run_bench_editor(o.ed);
    const bool gemm = o.gemm->parsed();
    if (gemm && (o.target == "cuda") != (o.compare == "cublas") && !o.compare.empty()) {
        std::cerr << "tessera bench gemm: --compare " << o.compare << " needs --target "
                  << (o.compare == "cublas" ? "cuda" : "cpu") << "\n";
        return kUserError;
    }
    if (gemm && o.target == "cuda")
        return run_gemm_cuda_bench({o.g.m, o.g.n, o.g.k, o.compare, o.rounds, o.json, o.g.records});
    if (gemm && o.ladder) return run_ladder(o);
    if (gemm && !o.print.empty()) {
        std::cout << bench::gemm_kernel_text(o.g, o.threads, o.print);
        return kOk;
    }
    bench::Comparison r = gemm ? bench::bench_gemm(o.g, o.threads, o.compare, o.rounds)
                               : bench::bench_conv2d(o.c, o.threads, o.compare);
    char what[160];
    if (gemm)
        std::snprintf(what, sizeof what, "gemm m=%lld n=%lld k=%lld", (long long)o.g.m,
                      (long long)o.g.n, (long long)o.g.k);
    else
        std::snprintf(what, sizeof what, "conv2d n=%lld c=%lld h=%lld w=%lld k=%lld r=%lld s=%lld stride=%lld pad=%lld",
                      (long long)o.c.n, (long long)o.c.c, (long long)o.c.h, (long long)o.c.w,
                      (long long)o.c.k, (long long)o.c.r, (long long)o.c.s,
                      (long long)o.c.stride, (long long)o.c.pad);
    std::printf("%s, %d thread(s)\n", what, o.threads);
    if (!o.compare.empty()) std::fputs(bench::comparator_pin_warning().c_str(), stderr);
    std::printf("  tessera : %9.4f ms  %8.1f GFLOP/s  (%d runs)\n", r.ours.median_ms,
                bench::gflops(r.flops, r.ours.median_ms), r.ours.repeat);
    nlohmann::json j = {{"benchmark", what}, {"threads", o.threads}, {"flops", r.flops}};
    j["ours"] = side(r.ours, r.flops);
    j["latency_ms_median"] = r.ours.median_ms;
    j["latency_ms_min"] = r.ours.min_ms;
    j["gflops"] = bench::gflops(r.flops, r.ours.median_ms);
    if (r.have_theirs) {
        double ratio = r.theirs.median_ms / r.ours.median_ms;
        std::printf("  %-8s: %9.4f ms  %8.1f GFLOP/s  (%d runs) [%s]\n", "theirs",
                    r.theirs.median_ms, bench::gflops(r.flops, r.theirs.median_ms),
                    r.theirs.repeat, r.theirs_name.c_str());
        std::printf("  ratio (their time / our time): %.3f   max abs err %.2e\n", ratio,
                    r.max_abs_err);
        j["theirs"] = side(r.theirs, r.flops);
        j["theirs"]["name"] = r.theirs_name;
        j["ratio"] = ratio;
        j["max_abs_err"] = r.max_abs_err;
        j["max_rel_err"] = r.max_rel_err;
    }
    if (o.json) {
        std::cout.flush();
        print_json_line(j);
    }
    return kOk;
}

const CommandRegistrar kRegistered{make_command<BenchOptions>("bench", add_bench_command, run_bench)};

}  // namespace

}  // namespace tessera::cli
