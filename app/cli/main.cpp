// The `tessera` command line; its subcommands register themselves (cmd_*.cpp).
#include "app/cli/cli_main.h"

int main(int argc, char** argv) {
    return tessera::cli::run_cli(argc, argv, "tessera",
                                 "Tessera: a deep-learning compiler for ONNX models");
}
