// `tessera-bench`: Tessera's kernels and models timed against OpenBLAS,
// oneDNN, cuBLAS and ONNX Runtime in one run. `tessera bench ARGS` runs
// `tessera-bench ARGS`; here the one command is `bench` (cmd_bench.cpp).
#include <cstring>
#include <vector>

#include "app/cli/cli_main.h"

int main(int argc, char** argv) {
    // `tessera-bench gemm ...` means `bench gemm ...`; --help and --version
    // are the program's own.
    std::vector<char*> args(argv, argv + argc);
    static char bench[] = "bench";
    bool own_flag = argc > 1 && (std::strcmp(argv[1], "--version") == 0);
    if (!own_flag && (argc < 2 || std::strcmp(argv[1], "bench") != 0))
        args.insert(args.begin() + 1, bench);
    return tessera::cli::run_cli(int(args.size()), args.data(), "tessera-bench",
                                 "Tessera benchmarks: our kernels and models against vendor "
                                 "libraries and ONNX Runtime");
}
