// `tessera bench opt-levels MODEL... [--threads N] [--rounds R]`: each model
// built at -O1, -O2 and -O3 and timed in alternating rounds in one process on
// the same inputs; prints each level's median and the ratio to -O1, and says
// where a higher level is slower (issue #20: the default -O2 must never lose
// to -O1).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace tessera::cli {

struct BenchOptLevelsOptions {
    std::vector<std::string> models;
    int threads = 1;
    int rounds = 5;     // alternating rounds; the median of the rounds' medians is reported
    int repeat = 50;    // timed runs per round
    double slack = 0.05;  // a level counts as slower when its time exceeds -O1's by more
    bool fail_if_slower = false;
    bool json = false;
};

void add_bench_opt_levels_options(CLI::App* sub, BenchOptLevelsOptions& o);

/// Exit 0; 1 when a level's outputs differ from -O1's (rtol 1e-4), or with
/// --fail-if-slower when -O2 or -O3 is slower than -O1 beyond the slack.
int run_bench_opt_levels(const BenchOptLevelsOptions& o);

}  // namespace tessera::cli
