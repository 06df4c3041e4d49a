// The `tessera` command line: subcommand setup, dispatch, and the error edge
// that turns every failure into an exit code (0 ok, 1 check failed, 2 user
// error, 3 internal error).
#include <exception>
#include <iostream>

#include "app/cli/cli_common.h"
#include "engine/core/error.h"

namespace {

// Error messages are printed on one line.
std::string one_line(std::string s) {
    for (char& c : s) {
        if (c == '\n' || c == '\r') c = ' ';
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s;
}

}  // namespace

int main(int argc, char** argv) {
    using namespace tessera::cli;
    CLI::App app{"Tessera: a deep-learning compiler for ONNX models", "tessera"};
    app.require_subcommand(1);
    app.set_version_flag("--version", "tessera 0.1.0");

    std::vector<std::pair<CLI::App*, std::function<int()>>> commands;
    for (const CommandDef& def : command_table()) commands.push_back(def.setup(app));

    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        std::cerr << "error: " << one_line(e.what()) << " (see tessera --help)" << std::endl;
        return kUserError;
    }

    try {
        for (auto& [sub, run] : commands) {
            if (*sub) return run();
        }
        std::cerr << "error: no command given (see tessera --help)" << std::endl;
        return kUserError;
    } catch (const tessera::UserError& e) {
        std::cout.flush();
        std::cerr << "error: " << one_line(e.what()) << std::endl;
        return kUserError;
    } catch (const std::exception& e) {
        std::cout.flush();
        std::string msg = one_line(e.what());
        // TS_CHECK messages already start with "internal error at FILE:LINE".
        if (msg.rfind("internal error", 0) != 0) msg = "internal error: " + msg;
        std::cerr << msg << std::endl;
        return kInternalError;
    } catch (...) {
        std::cout.flush();
        std::cerr << "internal error: unknown exception" << std::endl;
        return kInternalError;
    }
}
