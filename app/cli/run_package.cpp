// `tessera run PACKAGE.tar`: load (checksums, version, CPU features), feed
// inputs, compare, time and profile a package; no compiler involved.
#include "app/cli/run_package.h"

#include <filesystem>
#include <iostream>

#include "app/cli/cli_cuda.h"
#include "app/cli/profile_table.h"
#include "engine/core/error.h"
#include "engine/driver/driver.h"
#include "engine/driver/shape_specializations.h"
#include "engine/frontend/onnx/onnx_importer.h"
#include "engine/package/package_loader.h"

namespace tessera::cli {

using runtime::NDArray;

bool is_package_path(const std::string& path, bool package_flag) {
    if (package_flag) return true;
    const std::filesystem::path p(path);
    if (p.extension() == kPackageExtension) return true;
    TS_USER_CHECK(!(std::filesystem::is_regular_file(p) && package::looks_like_package(path)))
        << "'" << path << "' is a Tessera package (an archive with native code), not an ONNX "
        << "model; a package runs only when asked for: name it *" << kPackageExtension
        << " or pass --package, and run packages only from a trusted source";
    return false;
}

namespace {

// Test arrays onto the executor's inputs in order, skipping ones whose type
// does not fit (as driver::match_test_inputs does for graphs).
std::vector<NDArray> match_inputs(const runtime::GraphExecutor& ex, const std::vector<NDArray>& given) {
    std::vector<NDArray> out;
    size_t t = 0;
    for (size_t i = 0; i < ex.num_inputs(); ++i) {
        while (t < given.size() && !(given[t].type() == ex.input_type(i))) ++t;
        TS_USER_CHECK(t < given.size())
            << "no input array fits package input '" << ex.input_names()[i] << "' ("
            << ex.input_type(i).str() << "); " << given.size() << " arrays were given";
        out.push_back(given[t++]);
    }
    return out;
}

}  // namespace

int run_package(const RunOptions& o) {
    TS_USER_CHECK(!o.check) << "--check needs the model's loop IR; a package has only machine "
                               "code: use --compare-dir, or run the .onnx model with --check";
    TS_USER_CHECK(o.target == "llvm") << "packages run on the target they were compiled for";
    std::shared_ptr<package::LoadedPackage> loaded = package::load_package(o.model);
    if (loaded->cuda_executor) return run_cuda_package(o, *loaded);  // app/cli/cli_cuda.cpp

    std::vector<NDArray> given;
    if (!o.inputs.empty() || !o.input_dir.empty()) {
        if (!o.inputs.empty()) {
            for (const auto& f : o.inputs) {
                TS_USER_CHECK(std::filesystem::is_regular_file(f))
                    << "input file '" << f << "' does not exist";
                given.push_back(frontend::read_tensor_pb(f));
            }
        } else {
            given = driver::read_test_data(o.input_dir, "input");
            TS_USER_CHECK(!given.empty()) << "input folder '" << o.input_dir << "' holds no input_0.pb";
        }
    }
    // A package of several input shapes runs the specialisation its inputs
    // match (random inputs: the first one).
    const package::LoadedPackage* chosen = loaded.get();
    if (!loaded->specializations.empty()) {
        std::map<std::string, std::vector<int64_t>> shapes;
        for (size_t i = 0; i < given.size() && i < loaded->input_names.size(); ++i)
            shapes[loaded->input_names[i]] = given[i].shape();
        chosen = given.empty() ? loaded->specializations.front().package.get()
                               : &package::select_specialization(*loaded, shapes);
        std::cout << "shapes:     " << package::specialization_list(*loaded) << " in the package; ";
        for (const package::PackageSpecialization& s : loaded->specializations)
            if (s.package.get() == chosen) std::cout << "running " << driver::shapes_text(s.shapes) << "\n";
    }
    const package::LoadedPackage* pkg = chosen;
    runtime::GraphExecutor& ex = *pkg->executor;
    ex.set_num_threads(o.threads);

    std::vector<NDArray> inputs;
    std::string source;
    if (!given.empty()) {
        source = o.inputs.empty() ? o.input_dir : "--inputs";
        inputs = match_inputs(ex, given);
    } else {
        // The same streams as driver::random_inputs, so a model and its package agree.
        for (size_t i = 0; i < ex.num_inputs(); ++i)
            inputs.push_back(runtime::random_ndarray(ex.input_type(i), o.seed * 1000003 + i));
        source = "random (seed " + std::to_string(o.seed) + ")";
    }
    for (size_t i = 0; i < inputs.size(); ++i) ex.set_input(i, inputs[i]);
    ex.run();
    std::vector<NDArray> outputs;
    for (size_t i = 0; i < ex.num_outputs(); ++i) outputs.push_back(ex.get_output(i));

    nlohmann::json j;
    bool failed = false;
    std::string failure;
    if (!o.compare_dir.empty()) {
        std::vector<NDArray> expected = driver::read_test_data(o.compare_dir, "output");
        TS_USER_CHECK(expected.size() == outputs.size())
            << "the package has " << outputs.size() << " outputs but " << o.compare_dir << " has "
            << expected.size();
        double max_abs = 0, max_rel = 0;
        for (size_t i = 0; i < outputs.size(); ++i) {
            TS_USER_CHECK(outputs[i].shape() == expected[i].shape())
                << "output " << i << " is " << outputs[i].type().str() << " but "
                << o.compare_dir << " has " << expected[i].type().str();
            runtime::Difference d = runtime::compare(outputs[i], expected[i]);
            max_abs = std::max(max_abs, d.max_abs);
            max_rel = std::max(max_rel, d.max_rel);
            if (!runtime::allclose(outputs[i], expected[i], kRtol, kAtol) && !failed) {
                failed = true;
                failure = "output " + std::to_string(i) + " differs from " + o.compare_dir +
                          ": max abs err " + sci(d.max_abs) + ", max rel err " + sci(d.max_rel) +
                          " (rtol 1e-3, atol 1e-5)";
            }
        }
        j["max_abs_err"] = max_abs;
        j["max_rel_err"] = max_rel;
        j["passed"] = !failed;
    }

    driver::Timing t = driver::time_runs(ex, o.repeat);
    double gflops = t.median_ms > 0 ? pkg->total_flops / (t.median_ms * 1e-3) / 1e9 : 0;
    std::cout << "package:    " << o.model << "\n"
              << "inputs:     " << source << "\n"
              << "nodes:      " << pkg->node_names.size() << " (after the graph passes)\n"
              << "kernels:    " << ex.calls().size() << "\n"
              << "memory:     " << ex.peak_bytes() << " bytes peak (" << ex.naive_bytes()
              << " without reuse), " << ex.param_bytes() << " bytes of parameters\n"
              << "latency:    median " << fixed(t.median_ms, 4) << " ms, min " << fixed(t.min_ms, 4)
              << " ms (" << t.repeat << " runs)\n"
              << "throughput: " << fixed(gflops, 2) << " GFLOP/s ("
              << fixed(pkg->total_flops / 1e6, 3) << " MFLOP per run)\n";
    if (j.contains("max_abs_err"))
        std::cout << "check:      " << (failed ? "FAIL" : "ok") << " (max abs err "
                  << sci(j["max_abs_err"].get<double>()) << ", max rel err "
                  << sci(j["max_rel_err"].get<double>()) << ")\n";
    if (o.profile)
        j["profile"] = print_profile(profile_rows(ex.profile(o.repeat), pkg->node_names), std::cout);
    if (failed) std::cerr << "check failed: " << failure << std::endl;
    if (o.json) {
        j["package"] = o.model;
        j["model"] = pkg->name;
        j["latency_ms_median"] = t.median_ms;
        j["latency_ms_min"] = t.min_ms;
        j["repeat"] = t.repeat;
        j["gflops"] = gflops;
        j["flops"] = pkg->total_flops;
        j["kernels"] = ex.calls().size();
        j["nodes"] = pkg->node_names.size();
        j["threads"] = o.threads;
        j["target"] = "llvm";
        j["peak_bytes"] = ex.peak_bytes();
        j["naive_bytes"] = ex.naive_bytes();
        j["param_bytes"] = ex.param_bytes();
        std::cout.flush();
        print_json_line(j);
    }
    return failed ? kCheckFailed : kOk;
}

}  // namespace tessera::cli
