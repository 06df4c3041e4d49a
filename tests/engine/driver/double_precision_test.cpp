// MatMul and Softmax of float64 operands (models that compute in double, as
// two of ONNX's expanded attention cases do): computed in double precision
// by the CPU build (the scheduled GEMM rule included) and by the default GPU
// schedule under the interpreter, against naive double sums within 1e-12 (a
// float32 computation would be off by ~1e-7).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "engine/driver/driver.h"
#include "engine/codegen/cuda/cuda_codegen.h"
#include "engine/codegen/cuda/nvrtc_library.h"
#include "engine/core/error.h"
#include "engine/graph/graph.h"
#include "engine/graph/op_registry.h"
#include "engine/runtime/ndarray.h"
#include "engine/tir/interpreter.h"
#include "engine/topi/gpu/schedule_gpu.h"
#include "engine/topi/topi.h"
#include "tests/engine/frontend/onnx/math_signal_test_util.h"

namespace tessera {
namespace {

using graph::DType;
using graph::TensorType;
using elemx_test::one_node;
using runtime::NDArray;

NDArray doubles(std::vector<int64_t> shape, uint64_t seed) {
    NDArray a = NDArray::empty({DType::Float64, std::move(shape)});
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> d(-1, 1);
    for (int64_t i = 0; i < a.num_elements(); ++i) a.data<double>()[i] = d(rng);
    return a;
}

void expect_close(const NDArray& got, const std::vector<double>& want, const std::string& what) {
    ASSERT_EQ(got.dtype(), DType::Float64) << what;
    ASSERT_EQ(size_t(got.num_elements()), want.size()) << what;
    int bad = 0;
    for (size_t i = 0; i < want.size(); ++i)
        if (!(std::fabs(got.data<double>()[i] - want[i]) <= 1e-12 * (1 + std::fabs(want[i]))) &&
            ++bad <= 3)
            ADD_FAILURE() << what << ": element " << i << " is " << got.data<double>()[i]
                          << ", expected " << want[i];
}

// The default GPU schedule of node 0, run by the interpreter.
NDArray gpu_schedule_interpreted(const graph::Graph& g, const std::vector<NDArray>& in) {
    tir::PrimFunc f = topi::lower_node_gpu(g, 0);
    std::vector<NDArray> args;
    std::vector<void*> ptrs;
    for (const NDArray& a : in) args.push_back(a.copy());
    args.push_back(NDArray::empty(g.values[size_t(g.outputs[0])].type));
    for (NDArray& a : args) ptrs.push_back(a.raw());
    tir::interpret(f, ptrs);
    return args.back();
}

struct MatMulCase {
    std::vector<int64_t> a, b;
};

TEST(DoublePrecision, MatMulOfDoublesIsComputedInDouble) {
    const MatMulCase cases[] = {
        {{3, 5}, {5, 4}}, {{64, 96}, {96, 80}}, {{2, 3, 17, 33}, {33, 9}}, {{7}, {7, 5}}};
    uint64_t seed = 1;
    for (const MatMulCase& c : cases) {
        graph::Graph g = one_node("nn.matmul", {{DType::Float64, c.a}, {DType::Float64, c.b}});
        const std::vector<int64_t>& os = g.values[size_t(g.outputs[0])].type.shape;
        NDArray a = doubles(c.a, seed++), b = doubles(c.b, seed++);
        const int64_t K = c.b[c.b.size() - 2], N = c.b.back();
        const int64_t M = c.a.size() == 1 ? 1 : c.a[c.a.size() - 2];
        const int64_t batches = a.num_elements() / (M * K);
        std::vector<double> want;
        for (int64_t t = 0; t < batches; ++t)
            for (int64_t i = 0; i < M; ++i)
                for (int64_t j = 0; j < N; ++j) {
                    double acc = 0;
                    for (int64_t k = 0; k < K; ++k)
                        acc += a.data<double>()[(t * M + i) * K + k] * b.data<double>()[k * N + j];
                    want.push_back(acc);
                }
        const std::string what = "matmul " + graph::TensorType{DType::Float64, os}.str();
        expect_close(driver::build(g)->run({a, b})[0], want, what + " (CPU build)");
        expect_close(gpu_schedule_interpreted(g, {a, b}), want, what + " (GPU schedule)");
        // The GPU schedule's CUDA C (double fragments, no float4) compiles.
        if (codegen::nvrtc_available()) codegen::compile_cuda({topi::lower_node_gpu(g, 0)});
    }
}

TEST(DoublePrecision, SoftmaxOfDoublesIsComputedInDouble) {
    NDArray x = doubles({4, 37}, 9);
    graph::Graph g = one_node("nn.softmax", {{DType::Float64, {4, 37}}}, {{"axis", int64_t(1)}});
    std::vector<double> want;
    for (int64_t r = 0; r < 4; ++r) {
        double mx = -INFINITY, sum = 0;
        for (int64_t j = 0; j < 37; ++j) mx = std::max(mx, x.data<double>()[r * 37 + j]);
        for (int64_t j = 0; j < 37; ++j) sum += std::exp(x.data<double>()[r * 37 + j] - mx);
        for (int64_t j = 0; j < 37; ++j) want.push_back(std::exp(x.data<double>()[r * 37 + j] - mx) / sum);
    }
    expect_close(driver::build(g)->run({x})[0], want, "softmax (CPU build)");
    expect_close(gpu_schedule_interpreted(g, {x}), want, "softmax (GPU schedule)");
    // Mixed precisions are refused, naming the input.
    EXPECT_THROW(one_node("nn.matmul", {{DType::Float64, {2, 3}}, {DType::Float32, {3, 2}}}),
                 UserError);
}

}  // namespace
}  // namespace tessera
