// `tessera run MODEL --input-dir A --input-dir B ...`: every input set in turn
// in one process. The model is specialised per input shapes
// (driver::ShapeSpecializations): a shape seen before costs no build, a new
// one compiles only the kernels whose loop IR changed, and each set's line
// says which.
#include <algorithm>
#include <iostream>

#include "app/cli/cli_common.h"
#include "app/cli/profile_table.h"
#include "app/cli/run_package.h"
#include "engine/core/error.h"
#include "engine/driver/shape_specializations.h"
#include "engine/frontend/onnx/onnx_importer.h"

namespace tessera::cli {

int run_shape_sets(const RunOptions& o) {
    TS_USER_CHECK(!is_package_path(o.model, o.package))
        << "several --input-dir folders run a model, not a package: a package holds the shapes "
           "it was compiled for";
    TS_USER_CHECK(o.target == "llvm")
        << "several --input-dir folders: only the llvm target is specialised per shape";
    TS_USER_CHECK(o.inputs.empty())
        << "--inputs and several --input-dir folders exclude each other";
    TS_USER_CHECK(!o.check && o.compare_dir.empty())
        << "with several --input-dir folders each set is compared with its own output_N.pb files; "
           "--check and --compare-dir apply to one set";
    ModelPath mp = resolve_model_path(o.model);
    driver::BuildOptions bo;
    bo.opt_level = o.opt_level;
    bo.passes = o.passes;
    bo.records = o.records;
    bo.threads = o.threads;
    driver::ShapeSpecializations models(mp.file, bo);
    const auto user_shapes = parse_input_shapes(o.input_shapes);

    nlohmann::json sets = nlohmann::json::array();
    bool failed = false;
    for (size_t s = 0; s < o.input_dirs.size(); ++s) {
        const std::string& dir = o.input_dirs[s];
        const std::vector<std::string> files = driver::test_data_files(dir, "input");
        TS_USER_CHECK(!files.empty()) << "input folder '" << dir << "' holds no input_0.pb";
        driver::ShapeSpecializations::Use use = models.for_input_files(files, user_shapes);
        driver::CompiledModel& model = *use.model;
        std::vector<runtime::NDArray> given;
        for (const std::string& f : files) given.push_back(frontend::read_tensor_pb(f));
        std::vector<runtime::NDArray> inputs = driver::match_test_inputs(use.graph, given);
        model.executor->set_num_threads(o.threads);
        std::vector<runtime::NDArray> outputs = model.run(inputs);

        std::string build = "seen before, nothing compiled";
        std::vector<std::string> compiled;
        if (use.built) {
            for (size_t k = 0; k < model.kernels.size(); ++k)
                if (model.kernel_compiled[k]) compiled.push_back(model.kernels[k]->name);
            build = "built, " + std::to_string(use.compiled) + " of " +
                    std::to_string(use.kernels) + " kernels compiled (" +
                    fixed(model.compile_seconds, 3) + " s)";
        }
        driver::Timing t = driver::time_runs(*model.executor, o.repeat);
        std::cout << "set " << s + 1 << ": " << dir << " (" << driver::shapes_text(use.shapes)
                  << "): " << build << "; latency median " << fixed(t.median_ms, 4) << " ms";
        nlohmann::json j{{"input_dir", dir},
                         {"shapes", driver::shapes_text(use.shapes)},
                         {"built", use.built},
                         {"kernels", use.kernels},
                         {"kernels_compiled", compiled},
                         {"latency_ms_median", t.median_ms}};
        const std::vector<std::string> expected_files = driver::test_data_files(dir, "output");
        if (!expected_files.empty()) {
            std::vector<runtime::NDArray> expected = driver::read_test_data(dir, "output");
            bool close = expected.size() == outputs.size();
            double max_abs = 0;
            for (size_t i = 0; close && i < outputs.size(); ++i) {
                close = outputs[i].shape() == expected[i].shape() &&
                        runtime::allclose(outputs[i], expected[i], kRtol, kAtol);
                if (outputs[i].shape() == expected[i].shape())
                    max_abs = std::max(max_abs, runtime::compare(outputs[i], expected[i]).max_abs);
            }
            std::cout << "; check " << (close ? "ok" : "FAIL") << " (max abs err " << sci(max_abs)
                      << ")";
            j["passed"] = close;
            failed = failed || !close;
        }
        std::cout << "\n";
        if (o.profile) {
            if (!compiled.empty()) {
                std::cout << "  compiled for these shapes:";
                for (const std::string& k : compiled) std::cout << " " << k;
                std::cout << "\n";
            }
            std::vector<std::string> names, ops;
            for (const auto& n : model.graph.nodes) {
                names.push_back(n.name);
                ops.push_back(n.op);
            }
            j["profile"] = print_profile(
                profile_rows(model.executor->profile(o.repeat), names, ops), std::cout);
        }
        sets.push_back(j);
    }
    std::cout << "specialisations: " << models.size() << " for " << o.input_dirs.size()
              << " input sets\n";
    if (o.json) {
        std::cout.flush();
        print_json_line({{"model", mp.file}, {"sets", sets}, {"specializations", models.size()}});
    }
    return failed ? kCheckFailed : kOk;
}

}  // namespace tessera::cli
