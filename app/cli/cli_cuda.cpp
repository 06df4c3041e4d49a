// `inspect --print cuda` and `run --target cuda`: NVRTC compilation always,
// execution only where a CUDA driver and device are present.
#include "app/cli/cli_cuda.h"

#include <algorithm>
#include <iostream>

#include "engine/core/error.h"
#include "engine/driver/driver.h"
#if TESSERA_WITH_CUDA
#include "engine/codegen/cuda/cuda_model.h"
#include "engine/runtime/cuda_driver.h"
#include "engine/topi/schedule_gpu.h"
#endif

namespace tessera::cli {

#if TESSERA_WITH_CUDA

std::string cuda_source(const std::vector<tir::PrimFunc>& funcs) {
    std::vector<tir::PrimFunc> scheduled;
    for (const tir::PrimFunc& f : funcs) scheduled.push_back(topi::schedule_gpu_default(f));
    return codegen::emit_cuda_source(scheduled);
}

int run_cuda_target(const RunOptions& o, const std::string& model_file, const graph::Graph& g,
                    const std::vector<runtime::NDArray>& inputs, const std::string& input_source) {
    std::shared_ptr<codegen::CudaModel> model = codegen::build_cuda(g);
    size_t launches = 0;
    for (const auto& c : model->calls) launches += c.launches.size();
    std::cout << "model:      " << model_file << "\n"
              << "inputs:     " << input_source << "\n"
              << "nodes:      " << g.nodes.size() << "\n"
              << "target:     cuda (" << model->compiled.arch << ", " << codegen::nvrtc_version()
              << ")\n"
              << "kernels:    " << model->calls.size() << " functions, " << launches
              << " launches, PTX " << model->compiled.ptx.size() / 1024 << " KiB\n"
              << "compile:    " << fixed(model->compile_seconds, 3) << " s\n";
    std::cout.flush();
    // Throws the UserError that names the missing driver or device.
    std::shared_ptr<runtime::CudaGraphExecutor> ex = model->make_executor();
    for (size_t i = 0; i < inputs.size(); ++i) ex->set_input(i, inputs[i]);
    ex->run();
    std::vector<runtime::NDArray> outputs;
    for (size_t i = 0; i < ex->num_outputs(); ++i) outputs.push_back(ex->get_output(i));

    nlohmann::json j;
    bool failed = false;
    if (o.check || !o.compare_dir.empty()) {
        std::vector<runtime::NDArray> expected =
            o.check ? driver::interpret_graph(g, inputs) : driver::read_test_data(o.compare_dir, "output");
        TS_USER_CHECK(expected.size() == outputs.size())
            << "the model has " << outputs.size() << " outputs but the reference has " << expected.size();
        double max_abs = 0, max_rel = 0;
        for (size_t i = 0; i < outputs.size(); ++i) {
            runtime::Difference d = runtime::compare(outputs[i], expected[i]);
            max_abs = std::max(max_abs, d.max_abs);
            max_rel = std::max(max_rel, d.max_rel);
            failed = failed || !runtime::allclose(outputs[i], expected[i], kRtol, kAtol);
        }
        j["max_abs_err"] = max_abs;
        j["max_rel_err"] = max_rel;
        j["passed"] = !failed;
    }
    std::vector<double> ms = ex->time_runs(o.repeat);
    std::sort(ms.begin(), ms.end());
    double median = ms[ms.size() / 2];
    double gflops = median > 0 ? model->total_flops / (median * 1e-3) / 1e9 : 0;
    std::cout << "device:     " << runtime::cuda::device_info().name << "\n"
              << "latency:    median " << fixed(median, 4) << " ms, min " << fixed(ms.front(), 4)
              << " ms (" << ms.size() << " runs, CUDA events)\n"
              << "throughput: " << fixed(gflops, 2) << " GFLOP/s\n";
    if (j.contains("max_abs_err"))
        std::cout << "check:      " << (failed ? "FAIL" : "ok") << " (max abs err "
                  << sci(j["max_abs_err"].get<double>()) << ")\n";
    if (o.profile) {
        std::cout << "\nkernel                           time ms   GFLOP/s\n";
        for (const auto& p : ex->profile(o.repeat)) {
            char line[160];
            std::snprintf(line, sizeof line, "%-32s %8.4f %9.2f", p.kernel.c_str(), p.seconds * 1e3,
                          p.seconds > 0 ? p.flops / p.seconds / 1e9 : 0.0);
            std::cout << line << "\n";
        }
    }
    if (failed) std::cerr << "check failed: the GPU outputs differ from the reference" << std::endl;
    if (o.json) {
        j["model"] = model_file;
        j["target"] = "cuda";
        j["device"] = runtime::cuda::device_info().name;
        j["latency_ms_median"] = median;
        j["latency_ms_min"] = ms.front();
        j["gflops"] = gflops;
        j["compile_seconds"] = model->compile_seconds;
        std::cout.flush();
        print_json_line(j);
    }
    return failed ? kCheckFailed : kOk;
}

#else

std::string cuda_source(const std::vector<tir::PrimFunc>&) {
    TS_USER_FAIL() << "this build of tessera has no CUDA back end (CUDA toolkit not found at build time)";
}

int run_cuda_target(const RunOptions&, const std::string&, const graph::Graph&,
                    const std::vector<runtime::NDArray>&, const std::string&) {
    TS_USER_FAIL() << "this build of tessera has no CUDA back end (CUDA toolkit not found at build time)";
}

#endif

}  // namespace tessera::cli
