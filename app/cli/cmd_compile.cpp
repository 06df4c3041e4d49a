// `tessera compile MODEL --target llvm -o model.tar`: build a model and
// write it as a package (lib.so, graph.json, params.bin, meta.json) that
// `tessera run`, libtessera_package_runtime and tessera_runtime.h load.
#include <filesystem>
#include <iostream>
#include <sstream>

#include "app/cli/cli_common.h"
#include "app/cli/cli_cuda.h"
#include "engine/autotune/database.h"
#include "engine/core/error.h"
#include "engine/driver/driver.h"
#include "engine/driver/package_export.h"
#include "engine/driver/shape_specializations.h"
#include "engine/graph/passes/pass_manager.h"

namespace tessera::cli {

namespace {

struct CompileOptions {
    std::string model;
    std::string target = "llvm";
    int opt_level = 2;
    std::vector<std::string> passes;
    std::string records;
    std::string output;
    bool json = false;
    std::vector<std::string> input_shapes;  // --input-shape NAME:DIMS
    InputFiles input_files;                 // --input-dir / --inputs
    std::vector<std::string> shape_sets;    // --shape-set NAME:DIMS[,NAME:DIMS...], repeated
};

CLI::App* add_compile_command(CLI::App& app, CompileOptions& o) {
    CLI::App* cmd = app.add_subcommand(
        "compile", "Compile a model into a package (.tar) that runs without the compiler");
    cmd->add_option("MODEL", o.model, "an .onnx file or an ONNX test-case folder")->required();
    cmd->add_option("--target", o.target, "code generation target")->check(CLI::IsMember({"llvm", "cuda"}));
    cmd->add_option("--opt-level", o.opt_level, "optimization level (graph passes and LLVM)")
        ->check(CLI::Range(0, 3));
    cmd->add_option("--passes", o.passes,
                    "graph passes: names, +name / -name to edit the default pipeline, or none")
        ->delimiter(',');
    cmd->add_option("--records", o.records, "tuning database whose best records to apply");
    cmd->add_option("-o,--output", o.output, "the package file to write (.tar)")->required();
    cmd->add_flag("--json", o.json, "print one JSON object as the last line");
    add_input_shape_option(cmd, o.input_shapes);
    add_input_files_options(cmd, o.input_files);
    cmd->add_option("--shape-set", o.shape_sets,
                    "one set of input shapes, NAME:DIMS[,NAME:DIMS...]; repeated: one package of "
                    "several specialisations, the runtime picks the one its inputs match");
    return cmd;
}

// A package of several input shapes (--shape-set repeated): the model built
// once per set, kernels whose loop IR does not change compiled once.
int compile_shape_sets(const CompileOptions& o, const ModelPath& mp, const driver::BuildOptions& bo,
                       const package::ExportOptions& eo) {
    TS_USER_CHECK(o.target == "llvm")
        << "--shape-set: packages of several input shapes are compiled for the llvm target only";
    driver::ShapeSpecializations models(mp.file, bo);
    std::vector<package::Specialization> specs;
    std::vector<driver::ShapeSpecializations::Use> uses;
    int kernels = 0, compiled = 0;
    for (const std::string& set : o.shape_sets) {
        std::map<std::string, std::vector<int64_t>> shapes = parse_input_shapes(o.input_shapes);
        for (const auto& [name, dims] : parse_input_shapes({set})) shapes[name] = dims;
        uses.push_back(models.for_shapes(shapes));
        kernels += uses.back().kernels;
        compiled += uses.back().compiled;
        specs.push_back({uses.back().shapes, uses.back().model.get()});
    }
    std::string index = package::export_specialized_package(specs, eo, o.output);
    std::cout << "model:      " << mp.file << "\n"
              << "package:    " << o.output << " (" << std::filesystem::file_size(o.output)
              << " bytes)\n"
              << "shapes:     " << specs.size() << " specialisations";
    for (const auto& u : uses) std::cout << (&u == &uses.front() ? ": " : "; ") << driver::shapes_text(u.shapes);
    std::cout << "\n"
              << "kernels:    " << kernels << " in all, " << compiled << " compiled (the others "
              << "unchanged between shapes)\n";
    if (o.json) {
        nlohmann::json j = nlohmann::json::parse(index);
        j["package"] = o.output;
        j["kernels"] = kernels;
        j["kernels_compiled"] = compiled;
        std::cout.flush();
        print_json_line(j);
    }
    return kOk;
}

int run_compile(const CompileOptions& o) {
    TS_USER_CHECK(o.records.empty() || std::filesystem::is_regular_file(o.records))
        << "tuning database '" << o.records << "' does not exist";
    ModelPath mp = resolve_model_path(o.model);
    if (!o.shape_sets.empty()) {
        driver::BuildOptions bo;
        bo.opt_level = o.opt_level;
        bo.passes = o.passes;
        bo.records = o.records;
        package::ExportOptions eo;
        eo.opt_level = o.opt_level;
        eo.passes = passes::resolve_pipeline(o.passes, o.opt_level);
        eo.records = o.records;
        return compile_shape_sets(o, mp, bo, eo);
    }
    graph::Graph g = load(mp, o.input_files, o.input_shapes);
    if (o.target == "cuda") {  // PTX package (app/cli/cli_cuda.cpp)
        // --records: the best "cuda" records (tessera tune --target cuda) apply.
        return compile_cuda_package(mp.file, g, o.opt_level, o.passes, o.output, o.json,
                                    o.records);
    }
    driver::BuildOptions bo;
    bo.target = o.target;
    bo.opt_level = o.opt_level;
    bo.passes = o.passes;
    bo.records = o.records;
    if (!o.records.empty()) {  // unreadable lines and records from another CPU: say so
        const autotune::Database db(o.records, true);
        for (const std::string& note : {autotune::skipped_lines_note(db), autotune::foreign_records_note(db)})
            if (!note.empty()) std::cerr << note << "\n";
    }
    std::shared_ptr<driver::CompiledModel> model = driver::build(g, bo);
    if (!o.records.empty()) std::cerr << model->records_summary(o.records) << "\n";

    package::ExportOptions eo;
    eo.target = o.target;
    eo.opt_level = o.opt_level;
    eo.passes = passes::resolve_pipeline(o.passes, o.opt_level);
    eo.records = o.records;
    auto t0 = std::chrono::steady_clock::now();
    std::string meta = package::export_package(*model, eo, o.output);
    double export_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    auto bytes = std::filesystem::file_size(o.output);
    std::ostringstream passes;
    for (const auto& p : eo.passes) passes << (passes.tellp() ? "," : "") << p;

    std::cout << "model:      " << mp.file << "\n"
              << "package:    " << o.output << " (" << bytes << " bytes)\n"
              << "kernels:    " << model->executor->calls().size() << " (from "
              << model->graph.nodes.size() << " nodes)\n"
              << "passes:     " << (eo.passes.empty() ? "none" : passes.str()) << "\n"
              << "memory:     " << model->executor->peak_bytes() << " bytes peak, "
              << model->executor->param_bytes() << " bytes of parameters\n"
              << "compile:    " << fixed(model->compile_seconds, 3) << " s, package "
              << fixed(export_s, 3) << " s\n";
    if (o.json) {
        nlohmann::json j = nlohmann::json::parse(meta);
        j["package"] = o.output;
        j["bytes"] = bytes;
        j["compile_seconds"] = model->compile_seconds;
        j["export_seconds"] = export_s;
        j["peak_bytes"] = model->executor->peak_bytes();
        std::cout.flush();
        print_json_line(j);
    }
    return kOk;
}

const CommandRegistrar kRegistered{
    make_command<CompileOptions>("compile", add_compile_command, run_compile)};

}  // namespace

}  // namespace tessera::cli
