// The error edge of every command line (cli_main.h).
#include "app/cli/cli_main.h"

#include <exception>
#include <filesystem>
#include <iostream>

#include "app/cli/cli_common.h"
#include "engine/core/error.h"

#ifndef TESSERA_VERSION
#define TESSERA_VERSION "0.1.0"
#endif

namespace tessera::cli {

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

int run_cli(int argc, char** argv, const char* name, const char* description) {
    CLI::App app{description, name};
    app.require_subcommand(1);
    app.set_version_flag("--version", std::string(name) + " " + TESSERA_VERSION);

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
        std::cerr << "error: " << one_line(e.what()) << " (see " << name << " --help)" << std::endl;
        return kUserError;
    }

    try {
        for (auto& [sub, run] : commands) {
            if (*sub) return run();
        }
        std::cerr << "error: no command given (see " << name << " --help)" << std::endl;
        return kUserError;
    } catch (const tessera::UserError& e) {
        std::cout.flush();
        std::cerr << "error: " << one_line(e.what()) << std::endl;
        return kUserError;
    } catch (const std::filesystem::filesystem_error& e) {
        // A path the user gave cannot be read or written (permissions, a
        // full disk, a missing folder): theirs to fix, not our bug.
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

}  // namespace tessera::cli
