// The schedule editor's measurement of a kernel against the profiler's.
#include "bench/cli/bench_editor.h"

#include <cstdio>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "app/cli/cli_common.h"
#include "engine/core/statistics.h"
#include "engine/driver/driver.h"
#include "engine/driver/measure_kernel.h"

namespace tessera::cli {

void add_bench_editor_options(CLI::App* sub, BenchEditorOptions& o) {
    sub->add_option("MODEL", o.model, ".onnx file or ONNX test-case folder")->required();
    sub->add_option("--threads", o.threads, "threads of the build")->check(CLI::Range(1, 256));
    sub->add_option("--opt-level", o.opt_level, "graph and LLVM level")->check(CLI::Range(0, 3));
    sub->add_option("--op", o.op, "only kernels whose anchor op contains this (e.g. conv2d)");
    sub->add_option("--rounds", o.rounds, "alternating rounds of profile and editor")
        ->check(CLI::Range(1, 100));
    sub->add_option("--repeat", o.repeat, "profiled model runs per round")->check(CLI::Range(1, 10000));
    sub->add_flag("--json", o.json, "print one JSON object as the last line");
}

int run_bench_editor(const BenchEditorOptions& o) {
    ModelPath mp = resolve_model_path(o.model);
    graph::Graph g = load(mp);
    driver::BuildOptions bo;
    bo.threads = o.threads;
    bo.opt_level = o.opt_level;
    auto model = driver::build(g, bo);
    model->executor->set_num_threads(o.threads);
    std::map<std::string, size_t> index;
    for (size_t k = 0; k < model->kernels.size(); ++k) index[model->kernels[k]->name] = k;

    struct Row {
        size_t kernel;
        std::string anchor_op;
        double flops;
        std::vector<double> profile_ms, editor_ms;
    };
    std::vector<Row> rows;
    for (size_t k = 0; k < model->schedules.size(); ++k) {
        const int anchor = model->graph.find_node(model->schedules[k].anchor);
        const std::string op = anchor >= 0 ? model->graph.nodes[size_t(anchor)].op : "";
        if (!o.op.empty() && op.find(o.op) == std::string::npos) continue;
        double flops = 0;
        for (int n : model->kernel_nodes[k])
            flops += graph::node_flops(model->graph, model->graph.nodes[size_t(n)]);
        rows.push_back({k, op, flops, {}, {}});
    }
    for (int r = 0; r < o.rounds; ++r) {
        std::map<std::string, double> profiled;
        for (const runtime::KernelProfile& p : model->executor->profile(o.repeat))
            profiled[p.kernel] = p.calls > 0 ? p.seconds * 1e3 / p.calls : 0;
        for (Row& row : rows) {
            row.profile_ms.push_back(profiled[model->kernels[row.kernel]->name]);
            // As the editor measures: its trace as the kernel's hand schedule,
            // the model rebuilt and profiled (ScheduleEditor::measure).
            const driver::KernelSchedule& ks = model->schedules[row.kernel];
            row.editor_ms.push_back(
                driver::profile_in_model(g, bo, ks.anchor, ks.trace, o.repeat).median_ms);
        }
    }
    std::printf("%s, -O%d, %d thread(s), %d rounds: the schedule editor's measurement of each "
                "kernel vs run --profile's\n",
                mp.file.c_str(), o.opt_level, o.threads, o.rounds);
    std::printf("%-36s %-26s %11s %11s %9s %9s\n", "kernel", "anchor op", "profile ms",
                "editor ms", "GFLOP/s", "ratio");
    int within = 0;
    nlohmann::json arr = nlohmann::json::array();
    for (const Row& row : rows) {
        const double p = median(row.profile_ms), e = median(row.editor_ms);
        const double ratio = p > 0 ? e / p : 0;
        const bool ok = ratio >= 0.9 && ratio <= 1.1;
        within += ok;
        std::printf("%-36s %-26s %11.4f %11.4f %9.1f %8.3fx%s\n",
                    model->kernels[row.kernel]->name.c_str(), row.anchor_op.c_str(), p, e,
                    e > 0 ? row.flops / (e * 1e-3) / 1e9 : 0.0, ratio, ok ? "" : "  (off by > 10 %)");
        arr.push_back({{"kernel", model->kernels[row.kernel]->name},
                       {"anchor_op", row.anchor_op},
                       {"profile_ms", p},
                       {"editor_ms", e},
                       {"editor_over_profile", ratio}});
    }
    std::printf("%d of %zu kernels within 10 %%\n", within, rows.size());
    if (o.json) {
        std::cout.flush();
        print_json_line({{"editor_vs_profile", arr}, {"threads", o.threads}, {"within_10pct", within}});
    }
    return kOk;
}

}  // namespace tessera::cli
