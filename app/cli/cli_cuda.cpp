// `inspect --print cuda` and `run --target cuda`: NVRTC compilation always,
// execution only where a CUDA driver and device are present.
#include "app/cli/cli_cuda.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>

#include "engine/core/error.h"
#include "engine/driver/driver.h"
#include "engine/driver/package_export.h"
#include "engine/frontend/onnx/onnx_importer.h"
#include "engine/runtime/cuda_driver.h"

namespace tessera::cli {


std::shared_ptr<driver::CompiledModel> build_cuda_model(const graph::Graph& g, int opt_level,
                                                        const std::vector<std::string>& passes,
                                                        const std::string& records,
                                                        nlohmann::json* records_json) {
    driver::BuildOptions bo;
    bo.target = "cuda";
    bo.opt_level = opt_level;
    bo.passes = passes;
    bo.records = records;
    std::shared_ptr<driver::CompiledModel> model = driver::build(g, bo);
    if (!records.empty()) {  // say what applied
        std::cerr << model->records_note << "\n";
        if (records_json)
            *records_json = {{"records", records}, {"tuned_kernels", model->records_applied()},
                             {"kernels", model->kernels.size()}};
    }
    return model;
}

int run_cuda_target(const RunOptions& o, const std::string& model_file, const graph::Graph& g,
                    const std::vector<runtime::NDArray>& inputs, const std::string& input_source) {
    nlohmann::json tuned;
    std::shared_ptr<driver::CompiledModel> built =
        build_cuda_model(g, o.opt_level, o.passes, o.records, &tuned);
    const driver::CudaModel* model = built->cuda.get();
    size_t launches = 0;
    for (const auto& c : model->calls) launches += c.launches.size();
    std::cout << "model:      " << model_file << "\n"
              << "inputs:     " << input_source << "\n"
              << "nodes:      " << g.nodes.size() << " (" << model->graph.nodes.size()
              << " after the graph passes)\n"
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
        if (tuned.is_object()) j.update(tuned);
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

int compile_cuda_package(const std::string& model_file, const graph::Graph& g, int opt_level,
                         const std::vector<std::string>& passes, const std::string& output,
                         bool json, const std::string& records) {
    nlohmann::json tuned;
    std::shared_ptr<driver::CompiledModel> built =
        build_cuda_model(g, opt_level, passes, records, &tuned);
    const driver::CudaModel* model = built->cuda.get();
    package::ExportOptions eo;
    eo.target = "cuda";
    eo.opt_level = opt_level;
    eo.passes = driver::find_target("cuda").graph_passes(passes, opt_level);
    eo.records = records;
    auto t0 = std::chrono::steady_clock::now();
    std::string meta = package::export_package(*built, eo, output);
    double export_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    auto bytes = std::filesystem::file_size(output);
    size_t launches = 0;
    for (const auto& c : model->calls) launches += c.launches.size();
    std::string pass_list;
    for (const auto& p : eo.passes) pass_list += (pass_list.empty() ? "" : ",") + p;
    std::cout << "model:      " << model_file << "\n"
              << "package:    " << output << " (" << bytes << " bytes)\n"
              << "target:     cuda (" << model->compiled.arch << ", " << codegen::nvrtc_version()
              << ")\n"
              << "kernels:    " << model->calls.size() << " (from " << model->graph.nodes.size()
              << " nodes), " << launches << " launches, PTX " << model->compiled.ptx.size()
              << " bytes\n"
              << "passes:     " << (pass_list.empty() ? "none" : pass_list) << "\n"
              << "compile:    " << fixed(model->compile_seconds, 3) << " s, package "
              << fixed(export_s, 3) << " s\n";
    if (json) {
        nlohmann::json j = nlohmann::json::parse(meta);
        if (tuned.is_object()) j.update(tuned);
        j["package"] = output;
        j["bytes"] = bytes;
        j["compile_seconds"] = model->compile_seconds;
        j["export_seconds"] = export_s;
        std::cout.flush();
        print_json_line(j);
    }
    return kOk;
}

int run_cuda_package(const RunOptions& o, const package::LoadedPackage& pkg) {
    runtime::CudaGraphExecutor& ex = *pkg.cuda_executor;
    std::vector<runtime::NDArray> given, inputs;
    std::string source;
    if (!o.inputs.empty()) {
        for (const auto& f : o.inputs) given.push_back(frontend::read_tensor_pb(f));
        source = "--inputs";
    } else if (!o.input_dir.empty()) {
        given = driver::read_test_data(o.input_dir, "input");
        source = o.input_dir;
    }
    size_t t = 0;
    for (size_t i = 0; i < ex.num_inputs(); ++i) {
        if (source.empty()) {  // the streams of driver::random_inputs, as for llvm packages
            inputs.push_back(runtime::random_ndarray(ex.input_type(i), o.seed * 1000003 + i));
            continue;
        }
        while (t < given.size() && !(given[t].type() == ex.input_type(i))) ++t;
        TS_USER_CHECK(t < given.size()) << "no input array fits package input " << i << " ("
                                        << ex.input_type(i).str() << ")";
        inputs.push_back(given[t++]);
    }
    if (source.empty()) source = "random (seed " + std::to_string(o.seed) + ")";
    for (size_t i = 0; i < inputs.size(); ++i) ex.set_input(i, inputs[i]);
    ex.run();
    nlohmann::json j;
    bool failed = false;
    if (!o.compare_dir.empty()) {
        std::vector<runtime::NDArray> expected = driver::read_test_data(o.compare_dir, "output");
        TS_USER_CHECK(expected.size() == ex.num_outputs())
            << "the package has " << ex.num_outputs() << " outputs but " << o.compare_dir
            << " has " << expected.size();
        double max_abs = 0;
        for (size_t i = 0; i < expected.size(); ++i) {
            runtime::NDArray out = ex.get_output(i);
            TS_USER_CHECK(out.shape() == expected[i].shape())
                << "output " << i << " is " << out.type().str() << " but " << o.compare_dir
                << " has " << expected[i].type().str();
            max_abs = std::max(max_abs, runtime::compare(out, expected[i]).max_abs);
            failed = failed || !runtime::allclose(out, expected[i], kRtol, kAtol);
        }
        j["max_abs_err"] = max_abs;
        j["passed"] = !failed;
    }
    std::vector<double> ms = ex.time_runs(o.repeat);
    std::sort(ms.begin(), ms.end());
    const double median = ms[ms.size() / 2];
    std::cout << "package:    " << o.model << " (cuda)\n"
              << "inputs:     " << source << "\n"
              << "device:     " << runtime::cuda::device_info().name << "\n"
              << "kernels:    " << ex.calls().size() << "\n"
              << "latency:    median " << fixed(median, 4) << " ms, min " << fixed(ms.front(), 4)
              << " ms (" << ms.size() << " runs, CUDA events)\n";
    if (j.contains("max_abs_err"))
        std::cout << "check:      " << (failed ? "FAIL" : "ok") << " (max abs err "
                  << sci(j["max_abs_err"].get<double>()) << ")\n";
    if (failed) std::cerr << "check failed: the GPU outputs differ from " << o.compare_dir << std::endl;
    if (o.json) {
        j["package"] = o.model;
        j["model"] = pkg.name;
        j["target"] = "cuda";
        j["latency_ms_median"] = median;
        j["latency_ms_min"] = ms.front();
        std::cout.flush();
        print_json_line(j);
    }
    return failed ? kCheckFailed : kOk;
}


}  // namespace tessera::cli
