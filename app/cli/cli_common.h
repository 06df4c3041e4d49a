// Shared pieces of the `tessera` command line: options of each subcommand,
// model-path resolution, number formatting and JSON output.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/graph/graph.h"

namespace tessera::cli {

/// Exit codes (DESIGN.md "Commands").
enum ExitCode : int { kOk = 0, kCheckFailed = 1, kUserError = 2, kInternalError = 3 };

/// Numeric tolerances of --compare-dir, --check and conformance.
constexpr double kRtol = 1e-3;
constexpr double kAtol = 1e-5;

/// A MODEL argument: an .onnx file, or a folder holding model.onnx (then its
/// test_data_set_0, if present, is the default input folder).
struct ModelPath {
    std::string file;
    std::string default_input_dir;  // empty when none
};
/// Throws UserError when neither a file nor a folder with model.onnx exists.
ModelPath resolve_model_path(const std::string& arg);

/// Loads a model with a UserError naming the file on failure; a test-case
/// folder's symbolic input dims take the shapes of its input files, and input
/// values the import needs (driver::load_model_for_inputs) are frozen from them.
graph::Graph load(const ModelPath& p);
/// Loads with --input-shape values ("NAME:1x3x224x224", comma-separated lists
/// allowed); in a test-case folder the dims they do not name take the shapes of its input files.
graph::Graph load(const ModelPath& p, const std::vector<std::string>& input_shapes);
/// --input-shape values as NAME -> dims (UserError on a bad spec).
std::map<std::string, std::vector<int64_t>> parse_input_shapes(const std::vector<std::string>& specs);
/// Adds --input-shape NAME:DIMS (repeatable) to a subcommand.
void add_input_shape_option(CLI::App* cmd, std::vector<std::string>& input_shapes);

/// --input-dir DIR or --inputs FILES: input files whose shapes fix the
/// model's symbolic dims (and whose values the import may need), as `run`
/// reads them.
struct InputFiles {
    std::string dir;
    std::vector<std::string> files;
};
/// Adds --input-dir and --inputs (exclusive) to a subcommand.
void add_input_files_options(CLI::App* cmd, InputFiles& in);
/// The model as `run` loads it: with the given input files (else a test-case
/// folder's), --input-shape fixing the dims they leave open; without files,
/// as load(p, input_shapes).
graph::Graph load(const ModelPath& p, const InputFiles& in,
                  const std::vector<std::string>& input_shapes);

/// "%.3f"-style formatting with `digits` decimals.
std::string fixed(double v, int digits);
/// Scientific formatting for errors ("1.2e-06").
std::string sci(double v);

/// Prints `j` as one line on stdout (the last line of a --json run).
void print_json_line(const nlohmann::json& j);

/// Adds --passes, --opt-level and --print-after-all to a subcommand.
void add_pass_options(CLI::App* cmd, std::vector<std::string>& passes, int& opt_level,
                      bool& print_after_all);

/// Node names joined by ", " (the first `limit`, then "...").
std::string node_list(const graph::Graph& g, size_t limit);

/// A subcommand. Each cmd_*.cpp registers one with a static CommandRegistrar:
/// `setup` adds the subcommand and its options to the app and returns the
/// function that runs it (after parsing) and yields the exit code.
struct CommandDef {
    std::string name;
    std::function<std::pair<CLI::App*, std::function<int()>>(CLI::App&)> setup;
};
std::vector<CommandDef>& command_table();
struct CommandRegistrar {
    explicit CommandRegistrar(CommandDef def) { command_table().push_back(std::move(def)); }
};

/// Registers a command whose options live in a struct Opts, with
/// add(CLI::App&, Opts&) -> CLI::App* and run(const Opts&) -> int.
template <typename Opts, typename Add, typename Run>
CommandDef make_command(std::string name, Add add, Run run) {
    return CommandDef{std::move(name), [add, run](CLI::App& app) {
                          auto opts = std::make_shared<Opts>();
                          CLI::App* sub = add(app, *opts);
                          return std::make_pair(sub, std::function<int()>([opts, run] { return run(*opts); }));
                      }};
}

// Subcommands: each registers its options on `app` and returns the
// subcommand; run_* executes it after parsing and returns the exit code.
struct RunOptions {
    std::string model;
    std::string input_dir;                // the first --input-dir
    std::vector<std::string> input_dirs;  // every --input-dir: more than one runs each set in turn
    std::vector<std::string> inputs;
    std::string compare_dir;
    bool check = false;
    int repeat = 10;
    int threads = 0;
    bool profile = false;
    std::string target = "llvm";
    bool json = false;
    uint64_t seed = 1;
    std::vector<std::string> passes;  // graph pass list (driver::BuildOptions::passes)
    int opt_level = 2;
    bool print_after_all = false;
    std::string records;  // tuning database whose best records to apply
    std::vector<std::string> input_shapes;  // --input-shape NAME:1x3x224x224
    bool package = false;  // --package: MODEL is a compiled package whatever its name
};
CLI::App* add_run_command(CLI::App& app, RunOptions& o);
int run_run(const RunOptions& o);
/// `run` with several --input-dir folders: one process, the model specialised
/// per input shapes (driver::ShapeSpecializations). app/cli/run_shape_sets.cpp
int run_shape_sets(const RunOptions& o);

struct InspectOptions {
    std::string model;
    std::string print = "graph";
    std::string op;
    bool json = false;
    std::vector<std::string> passes;  // graph pass list; empty with opt_level < 0: no passes
    int opt_level = -1;               // -1: not given
    bool print_after_all = false;
    std::string trace;  // schedule trace (JSON) applied to the --op kernel
    std::vector<std::string> input_shapes;  // --input-shape NAME:1x3x224x224
    InputFiles input_files;                 // --input-dir / --inputs
    std::string target = "llvm";  // cuda: the GPU pass pipeline and GPU schedules
    int threads = 0;  // threads the kernels are scheduled for (as run --threads)
};
CLI::App* add_inspect_command(CLI::App& app, InspectOptions& o);
int run_inspect(const InspectOptions& o);

struct ConformanceOptions {
    std::vector<std::string> dirs;
    std::string filter;
    bool json = false;
    bool round_trip = false;  // save as ONNX, reload, run that
};
CLI::App* add_conformance_command(CLI::App& app, ConformanceOptions& o);
int run_conformance(const ConformanceOptions& o);

}  // namespace tessera::cli
