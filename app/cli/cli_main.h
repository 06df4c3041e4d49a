// The command-line entry shared by `tessera` and `tessera-bench`: builds the
// app from the registered commands, parses, runs, and turns every failure
// into an exit code (0 ok, 1 check failed, 2 user error, 3 internal error).
#pragma once

namespace tessera::cli {

/// Runs the commands registered in command_table() as subcommands of a
/// program called `name`.
int run_cli(int argc, char** argv, const char* name, const char* description);

}  // namespace tessera::cli
