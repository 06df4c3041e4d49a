// Whole-model benchmark against ONNX Runtime: our build timed in-process,
// ORT timed by a small Python runner in a child process on the same input
// files; outputs come back as TensorProto files and are compared here.
#include "app/cli/bench_model.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "app/cli/cli_common.h"
#include "engine/core/error.h"
#include "engine/driver/driver.h"
#include "engine/frontend/onnx/onnx_importer.h"

namespace tessera::cli {

namespace fs = std::filesystem;
using runtime::NDArray;

namespace {

// argv: model.onnx folder threads repeat; reads folder/input_N.pb, writes
// folder/ort_output_N.pb, prints one JSON line with the timings.
constexpr const char* kOrtRunner = R"PY(
import json, os, sys, time
import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper
model, folder, threads, repeat = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
so = ort.SessionOptions()
so.intra_op_num_threads = threads
so.inter_op_num_threads = 1
so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
sess = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
feeds = {}
for i, inp in enumerate(sess.get_inputs()):
    feeds[inp.name] = numpy_helper.to_array(onnx.load_tensor(os.path.join(folder, f"input_{i}.pb")))
outs = sess.run(None, feeds)
for i, y in enumerate(outs):
    onnx.save_tensor(numpy_helper.from_array(np.ascontiguousarray(y), f"out{i}"),
                     os.path.join(folder, f"ort_output_{i}.pb"))
times = []
for _ in range(repeat):
    t0 = time.perf_counter()
    sess.run(None, feeds)
    times.append((time.perf_counter() - t0) * 1e3)
times.sort()
n = len(times)
median = times[n // 2] if n % 2 else 0.5 * (times[n // 2 - 1] + times[n // 2])
print(json.dumps({"median_ms": median, "min_ms": times[0], "repeat": n, "version": ort.__version__}))
)PY";

std::string quote(const std::string& s) {
    std::string out = "'";
    for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

bool python_has_ort(const std::string& py) {
    std::string cmd = quote(py) + " -c 'import onnxruntime, onnx, numpy' > /dev/null 2>&1";
    return std::system(cmd.c_str()) == 0;
}

std::string find_python(const std::string& given) {
    if (!given.empty()) {
        TS_USER_CHECK(python_has_ort(given))
            << "--python '" << given << "' cannot import onnxruntime, onnx and numpy";
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
        if (fs::exists(c) && python_has_ort(c)) return c;
    TS_USER_FAIL() << "--compare ort needs Python with onnxruntime: run scripts/bench-setup.sh "
                      "(creates .venv), or pass --python or set TESSERA_PYTHON";
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

}  // namespace

void add_bench_model_options(CLI::App* sub, BenchModelOptions& o) {
    sub->add_option("MODEL", o.model, "an .onnx file or an ONNX test-case folder")->required();
    sub->add_option("--compare", o.compare, "runtime to compare with")->check(CLI::IsMember({"ort"}));
    sub->add_option("--threads", o.threads, "threads of ours and theirs")->check(CLI::Range(1, 256));
    sub->add_option("--repeat", o.repeat, "timed runs of each")->check(CLI::Range(1, 100000));
    sub->add_option("--python", o.python, "Python with onnxruntime (default: .venv/bin/python)");
    sub->add_option("--rtol", o.rtol, "relative tolerance of the output comparison");
    sub->add_flag("--json", o.json, "print one JSON object as the last line");
    sub->add_option("--records", o.records, "tuning database whose best records apply (tessera tune)");
}

int run_bench_model(const BenchModelOptions& o) {
    ModelPath mp = resolve_model_path(o.model);
    std::string python = o.compare == "ort" ? find_python(o.python) : "";
    graph::Graph g = load(mp);
    std::vector<NDArray> inputs =
        mp.default_input_dir.empty()
            ? driver::random_inputs(g, 1)
            : driver::match_test_inputs(g, driver::read_test_data(mp.default_input_dir, "input"));
    driver::BuildOptions bo;
    bo.records = o.records;
    // Compiled for the thread count it runs on, as `tessera tune --threads N`
    // tunes: records apply only to kernels built for their thread count.
    bo.threads = o.threads;
    std::shared_ptr<driver::CompiledModel> model = driver::build(g, bo);
    model->executor->set_num_threads(o.threads);
    std::vector<NDArray> ours = model->run(inputs);
    driver::Timing t = driver::time_runs(*model->executor, o.repeat);
    const double flops = model->total_flops;

    std::printf("model %s, %d thread(s), %zu kernels, compile %.2f s\n", mp.file.c_str(),
                o.threads, model->executor->calls().size(), model->compile_seconds);
    std::printf("  tessera     : %10.4f ms median  %10.4f ms min  %8.2f GFLOP/s  (%d runs)\n",
                t.median_ms, t.min_ms, flops / (t.median_ms * 1e-3) / 1e9, t.repeat);
    nlohmann::json j = {{"model", mp.file}, {"threads", o.threads}, {"flops", flops},
                        {"compile_seconds", model->compile_seconds}};
    j["ours"] = side(t.median_ms, t.min_ms, t.repeat, flops);
    j["latency_ms_median"] = t.median_ms;
    j["latency_ms_min"] = t.min_ms;
    j["gflops"] = flops / (t.median_ms * 1e-3) / 1e9;
    j["peak_bytes"] = model->executor->peak_bytes();
    bool failed = false;
    if (o.compare == "ort") {
        TempDir dir;
        for (size_t i = 0; i < inputs.size(); ++i)
            frontend::write_tensor_pb(inputs[i], g.values[size_t(g.inputs[i])].name,
                                      (dir.path / ("input_" + std::to_string(i) + ".pb")).string());
        fs::path script = dir.path / "ort_runner.py";
        {
            FILE* f = std::fopen(script.c_str(), "w");
            TS_USER_CHECK(f != nullptr) << "cannot write " << script.string();
            std::fputs(kOrtRunner, f);
            std::fclose(f);
        }
        fs::path result = dir.path / "ort.json";
        std::string cmd = quote(python) + " " + quote(script.string()) + " " + quote(mp.file) +
                          " " + quote(dir.path.string()) + " " + std::to_string(o.threads) + " " +
                          std::to_string(o.repeat) + " > " + quote(result.string());
        int rc = std::system(cmd.c_str());
        TS_USER_CHECK(rc == 0) << "ONNX Runtime failed on " << mp.file << " (exit " << rc
                               << "); its messages are above";
        nlohmann::json ort;
        try {
            std::ifstream in(result);
            ort = nlohmann::json::parse(in);
        } catch (const std::exception& e) {
            TS_USER_FAIL() << "cannot read ONNX Runtime's timings: " << e.what();
        }
        double max_abs = 0, max_rel = 0;
        for (size_t i = 0; i < ours.size(); ++i) {
            NDArray theirs = frontend::read_tensor_pb(
                (dir.path / ("ort_output_" + std::to_string(i) + ".pb")).string());
            TS_USER_CHECK(theirs.shape() == ours[i].shape())
                << "output " << i << ": ours " << ours[i].type().str() << ", ONNX Runtime's "
                << theirs.type().str();
            runtime::Difference d = runtime::compare(ours[i], theirs);
            max_abs = std::max(max_abs, d.max_abs);
            max_rel = std::max(max_rel, d.max_rel);
            if (!runtime::allclose(ours[i], theirs, o.rtol, 1e-5)) failed = true;
        }
        double median = ort["median_ms"].get<double>();
        double ratio = median / t.median_ms;
        std::printf("  onnxruntime : %10.4f ms median  %10.4f ms min  %8.2f GFLOP/s  (%d runs, %s)\n",
                    median, ort["min_ms"].get<double>(), flops / (median * 1e-3) / 1e9,
                    ort["repeat"].get<int>(), ort["version"].get<std::string>().c_str());
        std::printf("  ratio (their time / our time): %.3f   outputs %s (max abs err %.2e, max rel err %.2e, rtol %.0e)\n",
                    ratio, failed ? "DIFFER" : "match", max_abs, max_rel, o.rtol);
        j["theirs"] = side(median, ort["min_ms"].get<double>(), ort["repeat"].get<int>(), flops);
        j["theirs"]["name"] = "onnxruntime " + ort["version"].get<std::string>();
        j["ratio"] = ratio;
        j["max_abs_err"] = max_abs;
        j["max_rel_err"] = max_rel;
        j["passed"] = !failed;
        if (failed)
            std::cerr << "check failed: outputs differ from ONNX Runtime's beyond rtol " << o.rtol
                      << std::endl;
    }
    if (o.json) {
        std::cout.flush();
        print_json_line(j);
    }
    return failed ? kCheckFailed : kOk;
}

}  // namespace tessera::cli
