// Helpers for the CUDA back-end tests: ONNX node cases lowered with the
// default GPU schedule, random inputs, interpreter runs.
#pragma once

#include <cstdlib>

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "engine/codegen/cuda/nvrtc_library.h"
#include "engine/driver/driver.h"
#include "engine/runtime/ndarray.h"
#include "engine/tir/interpreter.h"
#include "engine/topi/gpu/schedule_gpu.h"
#include "engine/topi/topi.h"

// Compiling CUDA C to PTX needs NVRTC (the CUDA toolkit); emitting it does
// not. Tests that compile skip with the reason where NVRTC is absent.
#define TESSERA_SKIP_WITHOUT_NVRTC()                                                     \
    do {                                                                                 \
        if (!::tessera::codegen::nvrtc_available())                                      \
            GTEST_SKIP() << ::tessera::codegen::nvrtc_unavailable_reason();              \
    } while (0)

namespace tessera::test {

/// A node case of ONNX's test data: $TESSERA_ONNX_TESTDATA where set (a GPU
/// machine given only a bundle, scripts/gpu-bundle.sh), else the folder of
/// Debian's libonnx-testdata the build was configured with.
inline std::string node_case_dir(const std::string& name) {
    const char* data = std::getenv("TESSERA_ONNX_TESTDATA");
    return std::string(data && *data ? data : TESSERA_ONNX_TESTDATA) + "/node/" + name;
}

/// The model of an ONNX node test case (shape inputs frozen from its data).
inline graph::Graph load_node_case(const std::string& name) {
    std::string dir = node_case_dir(name);
    std::vector<std::string> inputs = driver::test_data_files(dir + "/test_data_set_0", "input");
    return driver::load_model_for_inputs(dir + "/model.onnx", inputs);
}

/// A PrimFunc renamed (kernel names must be unique in one CUDA module).
inline tir::PrimFunc renamed(const tir::PrimFunc& f, const std::string& name) {
    return tir::PrimFunc(name, f->params, f->body, f->attrs);
}

/// Random non-zero host arrays for the parameters of f (outputs zeroed).
inline std::vector<runtime::NDArray> random_args(const tir::PrimFunc& f, size_t num_inputs,
                                                 uint64_t seed) {
    std::vector<runtime::NDArray> args;
    for (size_t i = 0; i < f->params.size(); ++i) {
        const tir::Buffer& b = f->params[i];
        graph::TensorType t = topi::tensor_type_of(b);
        args.push_back(i < num_inputs ? runtime::random_ndarray(t, seed + i)
                                      : runtime::NDArray::empty(t));
    }
    return args;
}

inline std::vector<runtime::NDArray> interpret_copy(const tir::PrimFunc& f,
                                                    const std::vector<runtime::NDArray>& args) {
    std::vector<runtime::NDArray> copy;
    std::vector<void*> ptrs;
    for (const auto& a : args) {
        copy.push_back(a.copy());
        ptrs.push_back(copy.back().raw());
    }
    tir::interpret(f, ptrs);
    return copy;
}

}  // namespace tessera::test
