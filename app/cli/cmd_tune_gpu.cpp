// `tessera tune --target cuda`: the CUDA pass pipeline, the model's tasks,
// then driver::tune_gpu with a line per task (or JSON lines with --json).
#include "app/cli/cmd_tune_gpu.h"

#include <iostream>

#include "app/cli/cli_common.h"
#include "engine/driver/driver.h"
#include "engine/driver/tune_gpu.h"
#include "engine/runtime/cuda_driver.h"

namespace tessera::cli {

int run_tune_gpu(const graph::Graph& g, const std::string& records, int trials, uint64_t seed,
                 bool json, int opt_level, const std::vector<std::string>& passes) {
    driver::require_gpu_for_tuning();  // before any work: exit 2 without a device
    driver::BuildOptions bo;
    bo.opt_level = opt_level;
    bo.target = "cuda";  // the graph passes compile/run --target cuda use (same keys)
    bo.passes = passes;
    graph::Graph og = driver::optimize(g, bo);
    std::vector<autotune::TuneTask> tasks = autotune::extract_tasks(og, "cuda", 1);
    autotune::Database db(records);
    driver::GpuTuneOptions to;
    to.trials = trials;
    to.seed = seed;
    if (!json)
        std::cerr << "tuning " << tasks.size() << " task(s) of '" << g.name << "' on "
                  << runtime::cuda::device_info().name << ", " << trials << " trials, records "
                  << records << "\n";
    auto progress = [&](const driver::GpuTaskResult& t) {
        if (json)
            print_json_line({{"event", "trial"}, {"task", t.name}, {"trials", t.trials},
                             {"resumed", t.resumed},
                             {"errors", t.errors}, {"best_ms", t.best_ms},
                             {"default_ms", t.default_ms}, {"confirmed", t.confirmed}});
    };
    driver::GpuTuneResult r = driver::tune_gpu(tasks, db, to, progress);
    nlohmann::json tj = nlohmann::json::array();
    for (const auto& t : r.tasks) {
        const double gflops = t.best_ms > 0 ? t.flops / (t.best_ms * 1e6) : 0;
        tj.push_back({{"name", t.name}, {"key", t.key}, {"trials", t.trials},
                      {"resumed", t.resumed}, {"errors", t.errors}, {"best_ms", t.best_ms}, {"best_gflops", gflops},
                      {"best", t.best}, {"weight", t.weight}, {"default_ms", t.default_ms},
                      {"confirmed", t.confirmed}});
        if (!json)
            std::cout << t.name << ": " << t.trials << " trials (" << t.resumed << " resumed), "
                      << t.errors << " errors, best "
                      << fixed(t.best_ms, 4) << " ms (" << fixed(gflops, 1) << " GFLOP/s"
                      << (t.confirmed ? ", confirmed" : "") << "), default "
                      << fixed(t.default_ms, 4) << " ms\n";
    }
    if (json)
        print_json_line({{"event", "done"}, {"target", "cuda"}, {"records", records},
                         {"measured", r.measured}, {"isolated", r.isolated},
                         {"skipped_tasks", r.skipped}, {"tasks", tj}});
    else
        std::cout << r.measured << " trials measured"
                  << (r.measured == 0 ? ""
                      : r.isolated    ? " in a worker process (a faulting kernel fails alone)"
                                      : " in this process")
                  << "; " << r.skipped
                  << " task(s) without a single reduction block left to the default schedule\n";
    return kOk;
}

}  // namespace tessera::cli
