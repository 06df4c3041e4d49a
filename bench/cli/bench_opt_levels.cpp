// -O1 / -O2 / -O3 of the same models, timed against each other in one run.
#include "bench/cli/bench_opt_levels.h"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "app/cli/cli_common.h"
#include "engine/core/statistics.h"
#include "engine/driver/driver.h"
#include "engine/runtime/ndarray.h"

namespace tessera::cli {

using runtime::NDArray;

namespace {

constexpr int kLevels[] = {1, 2, 3};

struct LevelResult {
    std::shared_ptr<driver::CompiledModel> model;
    std::vector<double> round_medians;
    double max_rel_vs_o1 = 0;
    bool outputs_match = true;
};

/// Builds, checks and times one model; prints its rows; returns its JSON.
nlohmann::json bench_one(const BenchOptLevelsOptions& o, const std::string& arg, bool& differ,
                         bool& slower) {
    ModelPath mp = resolve_model_path(arg);
    graph::Graph g = load(mp);
    std::vector<NDArray> inputs =
        mp.default_input_dir.empty()
            ? driver::random_inputs(g, 1)
            : driver::match_test_inputs(g, driver::read_test_data(mp.default_input_dir, "input"));
    std::vector<LevelResult> levels(std::size(kLevels));
    std::vector<NDArray> reference;
    for (size_t l = 0; l < levels.size(); ++l) {
        driver::BuildOptions bo;
        bo.opt_level = kLevels[l];
        bo.threads = o.threads;
        levels[l].model = driver::build(g, bo);
        levels[l].model->executor->set_num_threads(o.threads);
        std::vector<NDArray> out = levels[l].model->run(inputs);
        if (l == 0) {
            reference = out;
            continue;
        }
        for (size_t i = 0; i < out.size(); ++i) {
            runtime::Difference d = runtime::compare(out[i], reference[i]);
            levels[l].max_rel_vs_o1 = std::max(levels[l].max_rel_vs_o1, d.max_rel);
            if (!runtime::allclose(out[i], reference[i], 1e-4, 1e-5)) levels[l].outputs_match = false;
        }
    }
    // Alternating rounds: drift of the machine's speed hits every level alike.
    for (int r = 0; r < o.rounds; ++r)
        for (LevelResult& lr : levels)
            lr.round_medians.push_back(driver::time_runs(*lr.model->executor, o.repeat).median_ms);
    const double o1 = median(levels[0].round_medians);
    std::printf("%s, %d thread(s), %d rounds x %d runs\n", mp.file.c_str(), o.threads, o.rounds,
                o.repeat);
    nlohmann::json j = {{"model", mp.file}, {"threads", o.threads}};
    for (size_t l = 0; l < levels.size(); ++l) {
        const LevelResult& lr = levels[l];
        const double t = median(lr.round_medians);
        const double ratio = o1 / t;
        const bool is_slower = l > 0 && t > o1 * (1.0 + o.slack);
        std::printf("  -O%d  %10.4f ms  %3zu kernels  %6.3fx -O1's speed  %s\n", kLevels[l], t,
                    lr.model->executor->calls().size(), ratio,
                    !lr.outputs_match ? "OUTPUTS DIFFER"
                    : is_slower       ? "SLOWER than -O1"
                                      : "ok");
        differ = differ || !lr.outputs_match;
        slower = slower || is_slower;
        j["O" + std::to_string(kLevels[l])] = {{"latency_ms_median", t},
                                               {"speed_vs_O1", ratio},
                                               {"kernels", lr.model->executor->calls().size()},
                                               {"outputs_match", lr.outputs_match},
                                               {"max_rel_err_vs_O1", lr.max_rel_vs_o1}};
    }
    std::fflush(stdout);
    return j;
}

}  // namespace

void add_bench_opt_levels_options(CLI::App* sub, BenchOptLevelsOptions& o) {
    sub->add_option("MODEL", o.models, ".onnx files or ONNX test-case folders")->required();
    sub->add_option("--threads", o.threads, "threads of every build")->check(CLI::Range(1, 256));
    sub->add_option("--rounds", o.rounds, "alternating rounds over the levels")
        ->check(CLI::Range(1, 1000));
    sub->add_option("--repeat", o.repeat, "timed runs per level and round")
        ->check(CLI::Range(1, 100000));
    sub->add_option("--slack", o.slack, "a level is slower when above -O1's time by more (0.05 = 5 %)")
        ->check(CLI::Range(0.0, 10.0));
    sub->add_flag("--fail-if-slower", o.fail_if_slower,
                  "exit 1 when -O2 or -O3 is slower than -O1 beyond the slack");
    sub->add_flag("--json", o.json, "print one JSON object as the last line");
}

int run_bench_opt_levels(const BenchOptLevelsOptions& o) {
    bool differ = false, slower = false;
    nlohmann::json rows = nlohmann::json::array();
    for (const std::string& m : o.models) rows.push_back(bench_one(o, m, differ, slower));
    if (o.json) {
        std::cout.flush();
        print_json_line({{"opt_levels", rows}, {"threads", o.threads}});
    }
    if (differ) std::cerr << "check failed: a level's outputs differ from -O1's" << std::endl;
    return differ || (o.fail_if_slower && slower) ? kCheckFailed : kOk;
}

}  // namespace tessera::cli
