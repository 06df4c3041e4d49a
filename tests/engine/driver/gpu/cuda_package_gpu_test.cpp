// CUDA packages on the GPU (label `gpu`): a fused model exported with its
// PTX, loaded by the runtime-only loader and run through the driver API,
// matches the loop-IR interpreter on the original graph. Skips without a driver.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "engine/driver/cuda_model.h"
#include "engine/driver/driver.h"
#include "engine/driver/package_export_cuda.h"
#include "engine/package/package_loader.h"
#include "engine/package/tessera_runtime.h"
#include "engine/runtime/cuda_driver.h"

namespace tessera {
namespace {

TEST(CudaPackageGpu, FusedSmallCnnPackageMatchesTheInterpreter) {
    if (!runtime::cuda::available()) GTEST_SKIP() << runtime::cuda::unavailable_reason();
    graph::Graph g = driver::load_model(std::string(TESSERA_SOURCE_DIR) +
                                        "/resources/models/small_cnn/model.onnx");
    driver::BuildOptions bo;
    bo.passes = driver::cuda_pass_pipeline({}, 2);
    auto model = driver::build_cuda(driver::optimize(g, bo));
    package::ExportOptions eo;
    eo.target = "cuda";
    auto pkg =
        package::load_package_bytes(package::cuda_package_bytes(*model, eo), "small_cnn.tar");
    ASSERT_TRUE(pkg->cuda_executor != nullptr);
    EXPECT_EQ(pkg->target, "cuda");
    std::vector<runtime::NDArray> inputs = driver::random_inputs(g, 7);
    std::vector<runtime::NDArray> expected = driver::interpret_graph(g, inputs);
    runtime::CudaGraphExecutor& ex = *pkg->cuda_executor;
    for (size_t i = 0; i < inputs.size(); ++i) ex.set_input(i, inputs[i]);
    ex.run();
    ASSERT_EQ(ex.num_outputs(), expected.size());
    for (size_t i = 0; i < expected.size(); ++i)
        EXPECT_TRUE(runtime::allclose(ex.get_output(i), expected[i], 1e-3, 1e-5)) << "output " << i;
}

TEST(CudaPackageGpu, CApiRunsTheCudaPackageLikeTheInterpreter) {
    if (!runtime::cuda::available()) GTEST_SKIP() << runtime::cuda::unavailable_reason();
    graph::Graph g = driver::load_model(std::string(TESSERA_SOURCE_DIR) +
                                        "/resources/models/small_cnn/model.onnx");
    driver::BuildOptions bo;
    bo.passes = driver::cuda_pass_pipeline({}, 2);
    auto model = driver::build_cuda(driver::optimize(g, bo));
    package::ExportOptions eo;
    eo.target = "cuda";
    const std::string path = ::testing::TempDir() + "tessera_capi_small_cnn_gpu.tar";
    {
        std::ofstream out(path, std::ios::binary);
        out << package::cuda_package_bytes(*model, eo);
    }
    TesseraModel* m = tessera_model_load(path.c_str());
    ASSERT_NE(m, nullptr) << tessera_last_error();
    std::vector<runtime::NDArray> inputs = driver::random_inputs(g, 11);
    std::vector<runtime::NDArray> expected = driver::interpret_graph(g, inputs);
    ASSERT_EQ(size_t(tessera_model_num_inputs(m)), inputs.size());
    ASSERT_EQ(size_t(tessera_model_num_outputs(m)), expected.size());
    EXPECT_GT(tessera_model_peak_bytes(m), 0);
    for (size_t i = 0; i < inputs.size(); ++i)
        ASSERT_EQ(tessera_model_set_input(m, int(i), inputs[i].raw(), inputs[i].num_bytes()),
                  TESSERA_OK)
            << tessera_last_error();
    ASSERT_EQ(tessera_model_run(m), TESSERA_OK) << tessera_last_error();
    for (size_t i = 0; i < expected.size(); ++i) {
        runtime::NDArray got = runtime::NDArray::empty(expected[i].type());
        ASSERT_EQ(tessera_model_output_bytes(m, int(i)), int64_t(got.num_bytes()));
        ASSERT_EQ(tessera_model_get_output(m, int(i), got.raw(), got.num_bytes()), TESSERA_OK)
            << tessera_last_error();
        EXPECT_TRUE(runtime::allclose(got, expected[i], 1e-3, 1e-5)) << "output " << i;
    }
    const char* prof = tessera_model_profile_json(m, 2);
    ASSERT_NE(prof, nullptr) << tessera_last_error();
    EXPECT_FALSE(nlohmann::json::parse(prof).empty());
    tessera_model_free(m);
    std::remove(path.c_str());
}

}  // namespace
}  // namespace tessera
