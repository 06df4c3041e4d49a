// Whole-model benchmark against ONNX Runtime: our build timed in-process (the
// LLVM JIT on the CPU, or the CUDA target with events around the whole graph),
// ORT timed by a small Python runner in a child process on the same input
// files (CPU or CUDA execution provider); outputs come back as TensorProto
// files and are compared here.
#include "bench/cli/bench_model.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "app/cli/cli_common.h"
#include "bench/cli/reference_runners.h"
#include "app/cli/cli_cuda.h"
#include "engine/core/error.h"
#include "engine/driver/driver.h"
#include "engine/frontend/onnx/onnx_importer.h"
#include "engine/driver/cuda_model.h"
#include "engine/runtime/cuda_driver.h"

namespace tessera::cli {

namespace fs = std::filesystem;
using runtime::NDArray;

namespace {


std::string quote(const std::string& s) {
    std::string out = "'";
    for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

// The Python module of each reference runtime (--compare).
const char* reference_module(const std::string& compare) {
    return compare == "torch" ? "torch" : "onnxruntime";
}

bool python_has(const std::string& py, const std::string& module) {
    std::string cmd = quote(py) + " -c 'import " + module + ", onnx, numpy' > /dev/null 2>&1";
    return std::system(cmd.c_str()) == 0;
}

std::string find_python(const std::string& given, const std::string& compare, bool gpu) {
    const std::string module = reference_module(compare);
    const std::string setup = gpu ? "scripts/bench-setup.sh --gpu" : "scripts/bench-setup.sh";
    if (!given.empty()) {
        TS_USER_CHECK(python_has(given, module))
            << "--python '" << given << "' cannot import " << module << ", onnx and numpy";
        return given;
    }
    std::vector<std::string> candidates;
    if (const char* env = std::getenv("TESSERA_PYTHON")) candidates.push_back(env);
    candidates.push_back(".venv/bin/python");
    std::error_code ec;
    fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    // build*/bin/tessera -> the source tree's .venv
    if (!ec) candidates.push_back((exe.parent_path().parent_path().parent_path() / ".venv/bin/python").string());
    for (const auto& c : candidates)
        if (fs::exists(c) && python_has(c, module)) return c;
    if (compare == "torch" && python_has("python3", module)) return "python3";
    TS_USER_FAIL() << "--compare " << compare << " needs Python with " << module
                   << (gpu && compare == "ort" ? "-gpu" : "")
                   << (compare == "ort" ? ": run " + setup + " (creates .venv)," : ":")
                   << " pass --python or set TESSERA_PYTHON";
}

struct TempDir {
    fs::path path;
    TempDir() {
        std::string tmpl = (fs::temp_directory_path() / "tessera-bench-XXXXXX").string();
        TS_USER_CHECK(mkdtemp(tmpl.data()) != nullptr) << "cannot create a temporary folder";
        path = tmpl;
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
};

nlohmann::json side(double median, double min, int repeat, double flops) {
    return {{"latency_ms_median", median},
            {"latency_ms_min", min},
            {"repeat", repeat},
            {"gflops", median > 0 ? flops / (median * 1e-3) / 1e9 : 0}};
}

/// Our side of one benchmark: outputs of one run and the run times.
struct Ours {
    std::vector<NDArray> outputs;
    double median_ms = 0, min_ms = 0;
    int repeat = 0;
    size_t kernels = 0;
    double compile_seconds = 0, flops = 0;
    std::string device;  // "" on the CPU
};

Ours run_ours_cpu(const BenchModelOptions& o, const graph::Graph& g,
                  const std::vector<NDArray>& inputs, nlohmann::json& j) {
    driver::BuildOptions bo;
    bo.records = o.records;
    // Compiled for the thread count it runs on, as `tessera tune --threads N`
    // tunes: records apply only to kernels built for their thread count.
    bo.threads = o.threads;
    std::shared_ptr<driver::CompiledModel> model = driver::build(g, bo);
    model->executor->set_num_threads(o.threads);
    Ours r;
    r.outputs = model->run(inputs);
    driver::Timing t = driver::time_runs(*model->executor, o.repeat);
    r.median_ms = t.median_ms;
    r.min_ms = t.min_ms;
    r.repeat = t.repeat;
    r.kernels = model->executor->calls().size();
    r.compile_seconds = model->compile_seconds;
    r.flops = model->total_flops;
    j["peak_bytes"] = model->executor->peak_bytes();
    return r;
}

// Built as `run --target cuda` builds (GPU passes, fusion, GPU schedules or
// records, NVRTC); timed with CUDA events around the whole graph's launches
// after a warm-up, inputs and outputs on the device.
Ours run_ours_cuda(const BenchModelOptions& o, const graph::Graph& g,
                   const std::vector<NDArray>& inputs, std::string& python, nlohmann::json& j) {
    nlohmann::json tuned;
    driver::BuildOptions defaults;
    std::shared_ptr<driver::CompiledModel> built =
        build_cuda_model(g, defaults.opt_level, {}, o.records, &tuned);
    const driver::CudaModel* model = built->cuda.get();
    std::printf("model compiled for cuda (%s), %zu kernels, compile %.2f s\n",
                model->compiled.arch.c_str(), model->calls.size(), model->compile_seconds);
    std::fflush(stdout);
    // Throws the UserError that names the missing driver or device (exit 2).
    std::shared_ptr<runtime::CudaGraphExecutor> ex = model->make_executor();
    if (o.compare == "ort") {  // before timing: say early that ORT cannot run on the GPU
        python = find_python(o.python, o.compare, true);
        std::string cmd = quote(python) +
                          " -c 'import sys, onnxruntime as o; getattr(o, \"preload_dlls\", "
                          "lambda: None)(); sys.exit(0 if \"CUDAExecutionProvider\" in "
                          "o.get_available_providers() else 3)' > /dev/null 2>&1";
        TS_USER_CHECK(std::system(cmd.c_str()) == 0)
            << "--compare ort --target cuda: the onnxruntime of " << python
            << " has no CUDAExecutionProvider; install onnxruntime-gpu into the venv "
               "(scripts/bench-setup.sh --gpu), or compare with --compare torch";
    } else if (o.compare == "torch") {
        python = find_python(o.python, o.compare, true);
        std::string cmd = quote(python) +
                          " -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 3)'"
                          " > /dev/null 2>&1";
        TS_USER_CHECK(std::system(cmd.c_str()) == 0)
            << "--compare torch --target cuda: the PyTorch of " << python << " sees no CUDA device";
    }
    for (size_t i = 0; i < inputs.size(); ++i) ex->set_input(i, inputs[i]);
    ex->run();
    Ours r;
    for (size_t i = 0; i < ex->num_outputs(); ++i) r.outputs.push_back(ex->get_output(i));
    std::vector<double> ms = ex->time_runs(o.repeat);
    std::sort(ms.begin(), ms.end());
    r.median_ms = ms[ms.size() / 2];
    r.min_ms = ms.front();
    r.repeat = int(ms.size());
    r.kernels = model->calls.size();
    r.compile_seconds = model->compile_seconds;
    r.flops = model->total_flops;
    r.device = runtime::cuda::device_info().name;
    if (tuned.is_object()) j.update(tuned);
    j["device"] = r.device;
    j["arch"] = model->compiled.arch;
    return r;
}

/// Runs the reference runtime of --compare (ONNX Runtime or PyTorch, on the
/// CPU or the GPU as ours) on `inputs`, or on the input files of the test-case
/// folder `input_dir` they came from (all of them: our import may have frozen
/// some into constants), compares its outputs with ours, prints its row;
/// returns false when the outputs differ.
bool compare_with_reference(const BenchModelOptions& o, const std::string& python, const std::string& file,
                      const graph::Graph& g, const std::vector<NDArray>& inputs,
                      const std::string& input_dir, const Ours& ours, nlohmann::json& j) {
    const bool gpu = o.target == "cuda";
    TempDir dir;
    // The reference runs the model as the file has it, on the folder's files.
    if (!input_dir.empty()) {
        std::vector<std::string> files = driver::test_data_files(input_dir, "input");
        for (size_t i = 0; i < files.size(); ++i)
            fs::copy_file(files[i], dir.path / ("input_" + std::to_string(i) + ".pb"));
    } else {
        for (size_t i = 0; i < inputs.size(); ++i)
            frontend::write_tensor_pb(inputs[i], g.values[size_t(g.inputs[i])].name,
                                      (dir.path / ("input_" + std::to_string(i) + ".pb")).string());
    }
    const bool torch = o.compare == "torch";
    const std::string who = torch ? "PyTorch" : "ONNX Runtime";
    fs::path script = dir.path / "reference_runner.py";
    {
        FILE* f = std::fopen(script.c_str(), "w");
        TS_USER_CHECK(f != nullptr) << "cannot write " << script.string();
        std::fputs(torch ? kTorchRunner : kOrtRunner, f);
        std::fclose(f);
    }
    fs::path result = dir.path / "reference.json";
    std::string cmd = quote(python) + " " + quote(script.string()) + " " + quote(file) + " " +
                      quote(dir.path.string()) + " " + std::to_string(o.threads) + " " +
                      std::to_string(o.repeat) + " " + (gpu ? "cuda" : "cpu") + " > " +
                      quote(result.string());
    int rc = std::system(cmd.c_str());
    if (rc != 0 && WIFEXITED(rc) && WEXITSTATUS(rc) == 3) {
        TS_USER_FAIL() << who << " cannot run " << file << (gpu ? " on the GPU" : "")
                       << " (message above)"
                       << (torch ? "" : "; install onnxruntime-gpu into the venv "
                                        "(scripts/bench-setup.sh --gpu)");
    }
    if (rc != 0 && WIFEXITED(rc) && WEXITSTATUS(rc) == 4) {
        TS_USER_FAIL() << "--compare torch cannot translate " << file << " (message above)";
    }
    TS_USER_CHECK(rc == 0) << who << " failed on " << file << " (exit " << rc
                           << "); its messages are above";
    nlohmann::json ref;
    try {
        std::ifstream in(result);
        ref = nlohmann::json::parse(in);
    } catch (const std::exception& e) {
        TS_USER_FAIL() << "cannot read " << who << "'s timings: " << e.what();
    }
    bool failed = false;
    double max_abs = 0, max_rel = 0;
    for (size_t i = 0; i < ours.outputs.size(); ++i) {
        NDArray theirs = frontend::read_tensor_pb(
            (dir.path / ("ref_output_" + std::to_string(i) + ".pb")).string());
        TS_USER_CHECK(theirs.shape() == ours.outputs[i].shape())
            << "output " << i << ": ours " << ours.outputs[i].type().str() << ", " << who << "'s "
            << theirs.type().str();
        runtime::Difference d = runtime::compare(ours.outputs[i], theirs);
        max_abs = std::max(max_abs, d.max_abs);
        max_rel = std::max(max_rel, d.max_rel);
        if (!runtime::allclose(ours.outputs[i], theirs, o.rtol, 1e-5)) failed = true;
    }
    const double median = ref["median_ms"].get<double>();
    const double ratio = median / ours.median_ms;
    const std::string name = ref["name"].get<std::string>();
    std::printf("  %-12s: %10.4f ms median  %10.4f ms min  %8.2f GFLOP/s  (%d runs, %s)\n",
                torch ? "pytorch" : "onnxruntime", median, ref["min_ms"].get<double>(), ours.flops / (median * 1e-3) / 1e9,
                ref["repeat"].get<int>(), name.c_str());
    std::printf("  ratio (their time / our time): %.3f   outputs %s (max abs err %.2e, max rel err %.2e, rtol %.0e)\n",
                ratio, failed ? "DIFFER" : "match", max_abs, max_rel, o.rtol);
    j["theirs"] = side(median, ref["min_ms"].get<double>(), ref["repeat"].get<int>(), ours.flops);
    j["theirs"]["name"] = name;
    j["ratio"] = ratio;
    j["max_abs_err"] = max_abs;
    j["max_rel_err"] = max_rel;
    j["passed"] = !failed;
    if (failed)
        std::cerr << "check failed: outputs differ from " << who << "'s beyond rtol " << o.rtol
                  << std::endl;
    return !failed;
}

}  // namespace

void add_bench_model_options(CLI::App* sub, BenchModelOptions& o) {
    sub->add_option("MODEL", o.model, "an .onnx file or an ONNX test-case folder")->required();
    sub->add_option("--target", o.target,
                    "cpu (LLVM JIT, ORT's CPU provider) or cuda (NVRTC, CUDA events, ORT's CUDA "
                    "provider)")
        ->check(CLI::IsMember({"cpu", "llvm", "cuda"}));
    sub->add_option("--compare", o.compare, "runtime to compare with")->check(CLI::IsMember({"ort", "torch"}));
    sub->add_option("--threads", o.threads, "threads of ours and theirs")->check(CLI::Range(1, 256));
    sub->add_option("--repeat", o.repeat, "timed runs of each")->check(CLI::Range(1, 100000));
    sub->add_option("--python", o.python,
                    "Python with onnxruntime or torch (default: $TESSERA_PYTHON, .venv/bin/python; "
                    "python3 for torch)");
    sub->add_option("--rtol", o.rtol, "relative tolerance of the output comparison");
    sub->add_flag("--json", o.json, "print one JSON object as the last line");
    sub->add_option("--records", o.records, "tuning database whose best records apply (tessera tune)");
    add_input_shape_option(sub, o.input_shapes);
    sub->add_option(
        "--input-dir", o.input_dir,
        "folder with input_N.pb files: their shapes fix symbolic dims and both runtimes "
        "run on them (default: a test-case folder's test_data_set_0)");
}

int run_bench_model(const BenchModelOptions& o) {
    const bool gpu = o.target == "cuda";
    ModelPath mp = resolve_model_path(o.model);
    if (!o.input_dir.empty()) mp.default_input_dir = o.input_dir;  // as a test-case folder's
    // On the GPU, after the device check (run_ours_cuda): no device is the first thing to say.
    std::string python = !o.compare.empty() && !gpu ? find_python(o.python, o.compare, false) : "";
    graph::Graph g = o.input_shapes.empty() ? load(mp) : load(mp, o.input_shapes);
    // --input-shape: random inputs of that shape (the folder's are of the model's own).
    const std::string input_dir = o.input_shapes.empty() ? mp.default_input_dir : "";
    std::vector<NDArray> inputs =
        input_dir.empty() ? driver::random_inputs(g, 1)
                          : driver::match_test_inputs(g, driver::read_test_data(input_dir, "input"));
    nlohmann::json j = {{"model", mp.file}, {"target", gpu ? "cuda" : "cpu"}};
    Ours ours = gpu ? run_ours_cuda(o, g, inputs, python, j) : run_ours_cpu(o, g, inputs, j);
    std::string shape;
    for (const NDArray& a : inputs) shape += (shape.empty() ? "" : ", ") + a.type().str();
    if (gpu)
        std::printf("model %s (%s) on %s, %zu kernels, compile %.2f s, CUDA events\n",
                    mp.file.c_str(), shape.c_str(), ours.device.c_str(), ours.kernels,
                    ours.compile_seconds);
    else
        std::printf("model %s (%s), %d thread(s), %zu kernels, compile %.2f s\n", mp.file.c_str(),
                    shape.c_str(), o.threads, ours.kernels, ours.compile_seconds);
    std::printf("  tessera     : %10.4f ms median  %10.4f ms min  %8.2f GFLOP/s  (%d runs)\n",
                ours.median_ms, ours.min_ms, ours.flops / (ours.median_ms * 1e-3) / 1e9,
                ours.repeat);
    j["inputs"] = shape;
    j["threads"] = o.threads;
    j["flops"] = ours.flops;
    j["compile_seconds"] = ours.compile_seconds;
    j["ours"] = side(ours.median_ms, ours.min_ms, ours.repeat, ours.flops);
    j["latency_ms_median"] = ours.median_ms;
    j["latency_ms_min"] = ours.min_ms;
    j["gflops"] = ours.flops / (ours.median_ms * 1e-3) / 1e9;
    bool failed = false;
    if (!o.compare.empty())
        failed = !compare_with_reference(o, python, mp.file, g, inputs, input_dir, ours, j);
    if (o.json) {
        std::cout.flush();
        print_json_line(j);
    }
    return failed ? kCheckFailed : kOk;
}

}  // namespace tessera::cli
