// `tessera run`: load, build, run a model; compare, time and profile it.
#include <algorithm>
#include <filesystem>
#include <iostream>

#include "app/cli/cli_common.h"
#include "app/cli/cli_cuda.h"
#include "app/cli/profile_table.h"
#include "app/cli/run_package.h"
#include "engine/autotune/database.h"
#include "engine/core/error.h"
#include "engine/driver/driver.h"
#include "engine/frontend/onnx/onnx_importer.h"
#include "engine/runtime/graph_executor.h"

namespace tessera::cli {

using runtime::NDArray;

CLI::App* add_run_command(CLI::App& app, RunOptions& o) {
    CLI::App* cmd =
        app.add_subcommand("run", "Compile a model, run it, time it and check its outputs");
    cmd->add_option("MODEL", o.model, "an .onnx file, an ONNX test-case folder or a package .tar")
        ->required();
    auto* input_dir = cmd->add_option(
        "--input-dir", o.input_dirs,
        "folder with input_N.pb files; repeated: each set in turn in one process, the model built "
        "once per input shapes and only the kernels whose shapes changed compiled again");
    auto* inputs = cmd->add_option("--inputs", o.inputs, "input TensorProto files, in input order");
    input_dir->excludes(inputs);
    auto* compare =
        cmd->add_option("--compare-dir", o.compare_dir, "folder with expected output_N.pb files");
    auto* check =
        cmd->add_flag("--check", o.check, "compare with the loop-IR interpreter (the reference)");
    compare->excludes(check);
    cmd->add_option("--repeat", o.repeat, "timed runs (median and min are reported)")
        ->check(CLI::Range(1, 1000000));
    cmd->add_option("--threads", o.threads, "threads of parallel loops (0 = the OpenMP default)")
        ->check(CLI::NonNegativeNumber);
    cmd->add_flag("--profile", o.profile, "print a per-kernel time table");
    cmd->add_option("--target", o.target, "code generation target")->check(CLI::IsMember({"llvm", "cuda"}));
    cmd->add_flag("--json", o.json, "print one JSON object as the last line");
    cmd->add_option("--seed", o.seed, "seed of the random inputs");
    cmd->add_option("--records", o.records, "tuning database whose best records to apply");
    cmd->add_flag("--package", o.package,
                  "MODEL is a compiled package (native code: run only trusted ones); implied by a .tar name");
    add_input_shape_option(cmd, o.input_shapes);
    add_pass_options(cmd, o.passes, o.opt_level, o.print_after_all);
    return cmd;
}

namespace {

struct Check {
    double max_abs = 0, max_rel = 0;
    bool close = true;
    std::string detail;  // which output failed
};

Check compare_outputs(const std::vector<NDArray>& actual, const std::vector<NDArray>& expected,
                      const std::string& what) {
    TS_USER_CHECK(actual.size() == expected.size())
        << "the model has " << actual.size() << " outputs but " << what << " has "
        << expected.size();
    Check c;
    for (size_t i = 0; i < actual.size(); ++i) {
        TS_USER_CHECK(actual[i].shape() == expected[i].shape())
            << "output " << i << " is " << actual[i].type().str() << " but " << what << " has "
            << expected[i].type().str();
        runtime::Difference d = runtime::compare(actual[i], expected[i]);
        c.max_abs = std::max(c.max_abs, d.max_abs);
        c.max_rel = std::max(c.max_rel, d.max_rel);
        if (!runtime::allclose(actual[i], expected[i], kRtol, kAtol) && c.close) {
            c.close = false;
            c.detail = "output " + std::to_string(i) + " differs from " + what + ": max abs err " +
                       sci(d.max_abs) + ", max rel err " + sci(d.max_rel) +
                       " (rtol 1e-3, atol 1e-5)";
        }
    }
    return c;
}

/// Activations the model quantizes at run time: values of 8-bit integer type
/// that a node computes (QuantizeLinear, DynamicQuantizeLinear, QLinear*).
int requantized_values(const graph::Graph& g) {
    int n = 0;
    for (const graph::Value& v : g.values)
        n += v.producer >= 0 && !v.is_constant() &&
             (v.type.dtype == graph::DType::Int8 || v.type.dtype == graph::DType::UInt8);
    return n;
}

std::vector<NDArray> gather_inputs(const RunOptions& o, const ModelPath& mp, const graph::Graph& g,
                                   std::string& source) {
    std::vector<NDArray> given;
    if (!o.inputs.empty()) {
        for (const auto& f : o.inputs) {
            TS_USER_CHECK(std::filesystem::is_regular_file(f))
                << "input file '" << f << "' does not exist";
            given.push_back(frontend::read_tensor_pb(f));
        }
        source = "--inputs";
    } else {
        std::string dir = !o.input_dir.empty() ? o.input_dir : mp.default_input_dir;
        if (dir.empty()) {
            source = "random (seed " + std::to_string(o.seed) + ")";
            return driver::random_inputs(g, o.seed);
        }
        given = driver::read_test_data(dir, "input");
        TS_USER_CHECK(!given.empty()) << "input folder '" << dir << "' holds no input_0.pb";
        source = dir;
    }
    return driver::match_test_inputs(g, given);
}

}  // namespace

int run_run(const RunOptions& given) {
    RunOptions o = given;
    if (!o.input_dirs.empty()) o.input_dir = o.input_dirs.front();
    if (o.input_dirs.size() > 1) return run_shape_sets(o);
    if (is_package_path(o.model, o.package)) return run_package(o);
    ModelPath mp = resolve_model_path(o.model);
    // Input files are also what a model with shape operands as graph inputs needs.
    graph::Graph g = load(mp, InputFiles{o.input_dir, o.inputs}, o.input_shapes);
    std::string source;
    std::vector<NDArray> inputs = gather_inputs(o, mp, g, source);
    if (o.target == "cuda") return run_cuda_target(o, mp.file, g, inputs, source);

    driver::BuildOptions bo;
    bo.target = o.target;
    bo.opt_level = o.opt_level;
    bo.passes = o.passes;
    bo.records = o.records;
    bo.threads = o.threads;  // kernels are scheduled for the thread count they run on
    if (!o.records.empty()) {  // unreadable lines and records from another CPU: say so
        const autotune::Database db(o.records, true);
        for (const std::string& note : {autotune::skipped_lines_note(db), autotune::foreign_records_note(db)})
            if (!note.empty()) std::cerr << note << "\n";
    }
    if (o.print_after_all)
        bo.print_after = [](const std::string& pass, const graph::Graph& after) {
            std::cerr << "// ---- graph after " << pass << "\n" << graph::print(after);
        };
    std::shared_ptr<driver::CompiledModel> model = driver::build(g, bo);
    if (!o.records.empty()) std::cerr << model->records_summary(o.records) << "\n";
    model->executor->set_num_threads(o.threads);
    std::vector<NDArray> outputs = model->run(inputs);

    nlohmann::json j;
    bool failed = false;
    std::string failure;
    if (!o.compare_dir.empty() || o.check) {
        std::vector<NDArray> expected;
        std::string what;
        if (o.check) {
            expected = driver::interpret_graph(g, inputs);
            what = "the loop-IR interpreter";
        } else {
            expected = driver::read_test_data(o.compare_dir, "output");
            TS_USER_CHECK(!expected.empty())
                << "compare folder '" << o.compare_dir << "' holds no output_0.pb";
            what = o.compare_dir;
        }
        Check c = compare_outputs(outputs, expected, what);
        j["max_abs_err"] = c.max_abs;
        j["max_rel_err"] = c.max_rel;
        j["passed"] = c.close;
        failed = !c.close;
        failure = c.detail;
    }

    runtime::GraphExecutor& ex = *model->executor;
    driver::Timing t = driver::time_runs(ex, o.repeat);
    double gflops = t.median_ms > 0 ? model->total_flops / (t.median_ms * 1e-3) / 1e9 : 0;
    // What the figure counts: int8 dot products are operations, not FLOPs;
    // a Winograd conv counts its direct conv's FLOPs (the figure may then
    // exceed the float peak).
    std::vector<int> all_nodes(model->graph.nodes.size());
    for (size_t i = 0; i < all_nodes.size(); ++i) all_nodes[i] = int(i);
    const bool integer = graph::any_integer_gemm(model->graph, all_nodes);
    bool effective = false;
    for (const graph::Node& n : model->graph.nodes)
        effective =
            effective || runtime::executes_other_work(graph::node_flops(model->graph, n),
                                                      graph::node_work_flops(model->graph, n));
    std::string unit = integer ? "GOP/s (int8 and float operations)" : "GFLOP/s";
    if (effective) unit += " effective (Winograd convs counted as direct ones)";

    std::cout << "model:      " << mp.file << "\n"
              << "inputs:     " << source << "\n"
              << "nodes:      " << g.nodes.size()
              << (model->graph.nodes.size() != g.nodes.size()
                      ? " (" + std::to_string(model->graph.nodes.size()) +
                            " after the graph passes)"
                      : std::string())
              << "\n"
              << "kernels:    " << ex.calls().size() << " (" << model->kernels_compiled()
              << " compiled, the others the same code as one of them)\n"
              << "compile:    " << fixed(model->compile_seconds, 3) << " s\n"
              << "latency:    median " << fixed(t.median_ms, 4) << " ms, min " << fixed(t.min_ms, 4)
              << " ms (" << t.repeat << " runs)\n"
              << "throughput: " << fixed(gflops, 2) << " " << unit << " ("
              << fixed(model->total_flops / 1e6, 3) << (integer ? " MOP" : " MFLOP")
              << " per run)\n";
    if (j.contains("max_abs_err")) {
        std::cout << "check:      " << (failed ? "FAIL" : "ok") << " (max abs err "
                  << sci(j["max_abs_err"].get<double>()) << ", max rel err "
                  << sci(j["max_rel_err"].get<double>()) << ")\n";
    }

    if (o.profile) {
        std::vector<std::string> names, ops;
        for (const auto& n : model->graph.nodes) {
            names.push_back(n.name);
            ops.push_back(n.op);
        }
        j["profile"] = print_profile(profile_rows(ex.profile(o.repeat), names, ops), std::cout);
    }
    if (failed) {
        std::cerr << "check failed: " << failure << std::endl;
        if (const int q = requantized_values(g); q > 0)
            std::cerr << "note: the model computes " << q
                      << " 8-bit integer tensors at run time (quantized activations). A value on "
                         "a rounding boundary can "
                         "round to the neighbouring 8-bit step in compiled code (fused multiply-"
                         "adds, vector sums in another order) and not in the reference, and the "
                         "step carries through the later layers; ONNX Runtime differs from "
                         "ONNX's reference evaluator by as much on such models."
                      << std::endl;
    }

    if (o.json) {
        j["model"] = mp.file;
        j["latency_ms_median"] = t.median_ms;
        j["latency_ms_min"] = t.min_ms;
        j["repeat"] = t.repeat;
        j["gflops"] = gflops;
        j["flops"] = model->total_flops;
        j["compile_seconds"] = model->compile_seconds;
        j["kernels"] = ex.calls().size();
        j["kernels_compiled"] = model->kernels_compiled();
        nlohmann::json passes_run = nlohmann::json::array();
        for (const auto& r : model->pass_records)
            passes_run.push_back({{"name", r.name}, {"ms", r.seconds * 1e3}, {"changed", r.changed}});
        j["passes"] = passes_run;
        j["nodes"] = g.nodes.size();
        j["threads"] = o.threads;
        j["target"] = o.target;
        if (!o.records.empty()) j["records_applied"] = model->records_applied();
        j["peak_bytes"] = ex.peak_bytes();
        j["naive_bytes"] = ex.naive_bytes();
        j["param_bytes"] = ex.param_bytes();
        std::cout.flush();
        print_json_line(j);
    }
    return failed ? kCheckFailed : kOk;
}

namespace {
const CommandRegistrar kRegistered{make_command<RunOptions>("run", add_run_command, run_run)};
}  // namespace

}  // namespace tessera::cli
