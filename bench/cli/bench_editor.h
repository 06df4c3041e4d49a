// `tessera bench editor MODEL [--threads N] [--opt-level L] [--op OP]
// [--rounds R]`: issue #19's figure. For each kernel of the build, what the
// studio's schedule editor measures when it opens on the kernel against what
// `tessera run --profile` measures for the same kernel inside the model;
// prints both, their ratio and how many kernels agree within 10 %. The editor's side rebuilds the model with the kernel's
// trace as its hand schedule (driver::profile_in_model), so this checks that
// the editor's kernel and measurement are the profiler's.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace tessera::cli {

struct BenchEditorOptions {
    std::string model;
    int threads = 1;
    int opt_level = 2;
    std::string op;    // only kernels whose anchor op contains this ("conv2d"); empty = all
    int rounds = 3;    // alternating rounds; medians of the rounds
    int repeat = 20;   // profiled runs per round
    bool json = false;
};

void add_bench_editor_options(CLI::App* sub, BenchEditorOptions& o);

/// Exit 0 (a figure, not a check).
int run_bench_editor(const BenchEditorOptions& o);

}  // namespace tessera::cli
