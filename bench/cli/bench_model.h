// `tessera bench model MODEL [--target cpu|cuda] [--compare ort|torch] [--threads N]`:
// end-to-end latency of a whole model, ours and a reference runtime's on the
// same inputs in one run, with the outputs compared: ONNX Runtime (the Python
// `onnxruntime` of the benchmark venv, scripts/bench-setup.sh; its CUDA
// execution provider with --target cuda) or PyTorch (cuDNN / cuBLAS in a CUDA
// graph with --target cuda; where ORT's CUDA provider is not installed).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace tessera::cli {

struct BenchModelOptions {
    std::string model;
    std::string target = "cpu";  // cpu (LLVM JIT) or cuda (NVRTC, CUDA events)
    std::string compare;         // "", "ort" or "torch"
    int threads = 1;
    int repeat = 20;
    std::string python;  // "" = $TESSERA_PYTHON, ./.venv, the source tree's .venv, python3
    double rtol = 1e-4;
    bool json = false;
    std::string records;  // tuning database whose best records apply to our kernels
    std::vector<std::string> input_shapes;  // --input-shape x:16x3x224x224 (random inputs)
    std::string
        input_dir;  // --input-dir: input_N.pb files (shapes and values) instead of the folder's
};

/// Adds the options of `bench model` to its subcommand.
void add_bench_model_options(CLI::App* sub, BenchModelOptions& o);

/// Runs the benchmark; exit code 1 when the outputs differ beyond rtol, 2
/// (UserError) when --target cuda finds no CUDA device, or --compare no
/// runtime (with --target cuda: ORT without its CUDAExecutionProvider, torch
/// without a CUDA device).
int run_bench_model(const BenchModelOptions& o);

}  // namespace tessera::cli
