// `tessera bench ...` runs the separate `tessera-bench` program (bench/): the
// comparators it links (OpenBLAS, oneDNN) are benchmark dependencies, never
// the product's. It is looked up beside this executable, then on PATH.
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <system_error>

#include "app/cli/cli_common.h"
#include "engine/core/error.h"

namespace tessera::cli {

namespace {

constexpr const char* kBenchProgram = "tessera-bench";

struct BenchForwardOptions {
    CLI::App* cmd = nullptr;
};

CLI::App* add_bench_forward(CLI::App& app, BenchForwardOptions& o) {
    o.cmd = app.add_subcommand(
        "bench", "Benchmarks against OpenBLAS / oneDNN / ONNX Runtime (runs tessera-bench)");
    o.cmd->prefix_command();  // every argument after `bench` goes to tessera-bench
    return o.cmd;
}

std::string sibling_program() {
    std::error_code ec;
    std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (ec) return {};
    std::filesystem::path p = self.parent_path() / kBenchProgram;
    return std::filesystem::exists(p, ec) ? p.string() : std::string();
}

int run_bench_forward(const BenchForwardOptions& o) {
    std::vector<std::string> args = {kBenchProgram};
    for (const std::string& a : o.cmd->remaining()) args.push_back(a);
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::cout.flush();
    std::cerr.flush();
    if (std::string path = sibling_program(); !path.empty()) execv(path.c_str(), argv.data());
    execvp(kBenchProgram, argv.data());
    TS_USER_FAIL() << "'tessera bench' runs the " << kBenchProgram
                   << " program, which is not installed: it is built from the source tree's bench/ "
                      "(cmake --build build --target tessera-bench) with the comparators it needs "
                      "(libopenblas-dev, libdnnl-dev)";
    return kUserError;
}

const CommandRegistrar kRegistered{
    make_command<BenchForwardOptions>("bench", add_bench_forward, run_bench_forward)};

}  // namespace

}  // namespace tessera::cli
