// Every operator with a compute definition gets a default GPU schedule whose
// CUDA C compiles with NVRTC for compute_90, and the schedule computes what
// the unscheduled function computes (checked with the interpreter).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <set>

#include "engine/codegen/cuda/cuda_codegen.h"
#include "engine/core/error.h"
#include "engine/runtime/cuda_driver.h"
#include "tests/engine/codegen/cuda/cuda_test_util.h"

namespace tessera::codegen {
namespace {

using testing::HasSubstr;

CudaOptions compute90() {
    CudaOptions o;
    o.arch = "compute_90";
    return o;
}

class GpuOpCase : public testing::TestWithParam<const char*> {};

// The skeleton's ops and their ONNX cases: compile every node, compare the
// scheduled function with the default one on random data.
TEST_P(GpuOpCase, CompilesAndMatchesTheUnscheduledFunction) {
    TESSERA_SKIP_WITHOUT_NVRTC();
    graph::Graph g = test::load_node_case(GetParam());
    std::vector<tir::PrimFunc> funcs;
    for (int n = 0; n < int(g.nodes.size()); ++n) {
        tir::PrimFunc plain = topi::lower_node(g, n);
        tir::PrimFunc gpu = topi::schedule_gpu_default(plain);
        funcs.push_back(gpu);
        size_t num_inputs = g.nodes[size_t(n)].inputs.size();
        auto args = test::random_args(plain, num_inputs, 17);
        auto want = test::interpret_copy(plain, args);
        auto got = test::interpret_copy(gpu, args);
        for (size_t i = num_inputs; i < args.size(); ++i)
            EXPECT_TRUE(runtime::allclose(got[i], want[i], 1e-5, 1e-6))
                << "node " << g.nodes[size_t(n)].name << " output " << i - num_inputs;
    }
    CompiledCuda c = compile_cuda(funcs, compute90());
    for (const CudaFunction& f : c.funcs) {
        ASSERT_FALSE(f.kernels.empty());
        for (const CudaKernel& k : f.kernels) {
            EXPECT_THAT(c.ptx, HasSubstr(".entry " + k.name));
            EXPECT_LE(k.block[0] * k.block[1] * k.block[2], 1024);
        }
    }
}

INSTANTIATE_TEST_SUITE_P(
    SkeletonOps, GpuOpCase,
    testing::Values("test_conv_with_strides_padding", "test_matmul_2d", "test_matmul_3d",
                    "test_gemm_all_attributes", "test_add", "test_add_bcast", "test_mul",
                    "test_sub", "test_div", "test_relu", "test_maxpool_2d_pads",
                    "test_maxpool_2d_strides", "test_globalaveragepool", "test_softmax_axis_1",
                    "test_softmax_large_number", "test_flatten_axis1", "test_reshape_negative_dim"),
    [](const testing::TestParamInfo<const char*>& info) { return std::string(info.param); });

// Every ONNX node case whose ops all have compute definitions: lowered with
// the default GPU schedule and compiled, in batches (one NVRTC call each).
TEST(GpuOps, EveryNodeCaseWithComputeDefinitionsCompiles) {
    TESSERA_SKIP_WITHOUT_NVRTC();
    namespace fs = std::filesystem;
    std::string root = std::string(TESSERA_ONNX_TESTDATA) + "/node";
    std::vector<std::string> cases;
    for (const auto& e : fs::directory_iterator(root)) cases.push_back(e.path().filename().string());
    std::sort(cases.begin(), cases.end());
    std::set<std::string> ops;
    std::vector<tir::PrimFunc> batch;
    std::vector<std::string> batch_cases;
    int compiled_cases = 0;
    auto flush = [&] {
        if (batch.empty()) return;
        try {
            compile_cuda(batch, compute90());
        } catch (const UserError& e) {
            // Find the case that fails, for a precise message.
            for (size_t i = 0; i < batch.size(); ++i) {
                try {
                    compile_cuda({batch[i]}, compute90());
                } catch (const UserError& e1) {
                    ADD_FAILURE() << batch_cases[i] << ": " << e1.what();
                }
            }
        }
        batch.clear();
        batch_cases.clear();
    };
    for (const std::string& name : cases) {
        if (name.size() > 9 && name.substr(name.size() - 9) == "_expanded") continue;
        graph::Graph g;
        try {
            g = test::load_node_case(name);
        } catch (const std::exception&) {
            continue;  // not importable: covered by the frontend's tests
        }
        bool all = !g.nodes.empty();
        for (const auto& n : g.nodes) all = all && topi::has_compute(n.op);
        if (!all) continue;
        std::vector<tir::PrimFunc> funcs;
        try {
            for (int n = 0; n < int(g.nodes.size()); ++n)
                funcs.push_back(test::renamed(topi::lower_node_gpu(g, n),
                                              name + "_" + std::to_string(n)));
        } catch (const UserError&) {
            continue;  // an attribute the op does not support: a frontend/topi matter
        }
        for (const auto& n : g.nodes) ops.insert(n.op);
        batch.insert(batch.end(), funcs.begin(), funcs.end());
        batch_cases.insert(batch_cases.end(), funcs.size(), name);
        ++compiled_cases;
        if (batch.size() >= 40) flush();
    }
    flush();
    for (const char* op : {"nn.conv2d", "nn.matmul", "nn.gemm", "add", "nn.relu", "nn.max_pool2d",
                           "nn.global_avg_pool2d", "nn.softmax", "reshape"})
        EXPECT_TRUE(ops.count(op)) << op << " was not covered";
    std::string covered;
    for (const auto& o : ops) covered += o + " ";
    RecordProperty("cases", compiled_cases);
    RecordProperty("ops", covered);
    std::cout << compiled_cases << " node cases, " << ops.size() << " ops: " << covered << "\n";
}

TEST(CudaRuntime, ReportsWhetherADeviceIsAvailableAndWhyNot) {
    if (runtime::cuda::available()) {
        EXPECT_TRUE(runtime::cuda::unavailable_reason().empty());
        EXPECT_FALSE(runtime::cuda::device_info().name.empty());
        EXPECT_THAT(default_cuda_arch(), testing::StartsWith("compute_"));
    } else {
        EXPECT_THAT(runtime::cuda::unavailable_reason(), HasSubstr("no CUDA device is available ("));
        EXPECT_EQ(default_cuda_arch(), "compute_90");
        try {
            runtime::cuda::DeviceBuffer b(16);
            FAIL() << "allocating without a device must throw";
        } catch (const UserError& e) {
            EXPECT_THAT(std::string(e.what()), HasSubstr("no CUDA device is available"));
        }
    }
    EXPECT_THAT(nvrtc_version(), testing::StartsWith("NVRTC "));
}

}  // namespace
}  // namespace tessera::codegen
