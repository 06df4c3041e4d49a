// Shared helpers of the `tessera` command line.
#include "app/cli/cli_common.h"

#include <cstdio>
#include <filesystem>
#include <iostream>

#include "engine/core/error.h"
#include "engine/driver/driver.h"
#include "engine/frontend/onnx/onnx_importer.h"

namespace tessera::cli {

namespace fs = std::filesystem;

ModelPath resolve_model_path(const std::string& arg) {
    ModelPath p;
    fs::path path(arg);
    if (fs::is_directory(path)) {
        TS_USER_CHECK(fs::is_regular_file(path / "model.onnx"))
            << "folder '" << arg
            << "' holds no model.onnx; pass an .onnx file or an ONNX test-case folder";
        p.file = (path / "model.onnx").string();
        if (fs::is_directory(path / "test_data_set_0"))
            p.default_input_dir = (path / "test_data_set_0").string();
        return p;
    }
    TS_USER_CHECK(fs::exists(path)) << "model file '" << arg << "' does not exist";
    p.file = arg;
    return p;
}

graph::Graph load(const ModelPath& p) {
    if (p.default_input_dir.empty()) return driver::load_model(p.file);
    // A test-case folder: symbolic dims take the shapes of its input files, and
    // where the import needs input values (a runtime If on a scalar input, a
    // shape operand) they are frozen from the files, as `run --input-dir` does.
    return driver::load_model_for_inputs(p.file,
                                         driver::test_data_files(p.default_input_dir, "input"));
}

std::map<std::string, std::vector<int64_t>> parse_input_shapes(const std::vector<std::string>& specs) {
    std::map<std::string, std::vector<int64_t>> shapes;
    for (const std::string& spec : specs) frontend::parse_input_shape(spec, shapes);
    return shapes;
}

graph::Graph load(const ModelPath& p, const std::vector<std::string>& input_shapes) {
    if (p.default_input_dir.empty()) return driver::load_model(p.file, parse_input_shapes(input_shapes));
    // A test-case folder: dims that --input-shape does not name take the
    // shapes of its input files (no values are frozen).
    return driver::load_model(p.file, driver::input_shapes_from_files(
                                          p.file, driver::test_data_files(p.default_input_dir, "input"),
                                          parse_input_shapes(input_shapes)));
}

void add_input_shape_option(CLI::App* cmd, std::vector<std::string>& input_shapes) {
    cmd->add_option("--input-shape", input_shapes,
                    "static shape of a graph input, NAME:1x3x224x224 (fixes symbolic dims; "
                    "repeat or separate with commas)");
}

void add_input_files_options(CLI::App* cmd, InputFiles& in) {
    auto* dir = cmd->add_option("--input-dir", in.dir,
                                "folder with input_N.pb files: their shapes fix symbolic dims");
    auto* files = cmd->add_option("--inputs", in.files,
                                  "input TensorProto files, in input order: their shapes fix "
                                  "symbolic dims");
    dir->excludes(files);
}

graph::Graph load(const ModelPath& p, const InputFiles& in,
                  const std::vector<std::string>& input_shapes) {
    std::vector<std::string> files = in.files;
    const std::string dir = !in.dir.empty() ? in.dir : p.default_input_dir;
    if (files.empty() && !dir.empty()) files = driver::test_data_files(dir, "input");
    if (files.empty()) return load(p, input_shapes);
    return driver::load_model_for_inputs(p.file, files, parse_input_shapes(input_shapes));
}

std::string fixed(double v, int digits) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", digits, v);
    return buf;
}

std::string sci(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.3g", v);
    return buf;
}

void print_json_line(const nlohmann::json& j) {
    std::cout << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << std::endl;
}

std::string node_list(const graph::Graph& g, size_t limit) {
    std::string s;
    for (size_t i = 0; i < g.nodes.size() && i < limit; ++i) {
        if (i) s += ", ";
        s += g.nodes[i].name;
    }
    if (g.nodes.size() > limit) s += ", ...";
    return s;
}

}  // namespace tessera::cli

namespace tessera::cli {
std::vector<CommandDef>& command_table() {
    static std::vector<CommandDef> table;
    return table;
}
void add_pass_options(CLI::App* cmd, std::vector<std::string>& passes, int& opt_level,
                      bool& print_after_all) {
    cmd->add_option("--passes", passes,
                    "graph passes, comma-separated: names = exactly these in order, +name/-name = "
                    "edit the opt level's pipeline, none = no passes (see --print passes)")
        ->delimiter(',')
        ->allow_extra_args(false);
    cmd->add_option("--opt-level", opt_level, "optimization level 0-3 (default pipeline: 2)")
        ->check(CLI::Range(0, 3));
    cmd->add_flag("--print-after-all", print_after_all,
                  "print the graph after each graph pass (on stderr)");
}

}  // namespace tessera::cli
