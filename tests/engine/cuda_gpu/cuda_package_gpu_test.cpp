// CUDA packages on the GPU (label `gpu`): a fused model exported with its
// PTX, loaded by the runtime-only loader and run through the driver API,
// matches the loop-IR interpreter on the original graph. Skips without a driver.
#include <gtest/gtest.h>

#include "engine/codegen/cuda/cuda_model.h"
#include "engine/driver/driver.h"
#include "engine/package/package_export_cuda.h"
#include "engine/package/package_loader.h"
#include "engine/runtime/cuda_driver.h"

namespace tessera {
namespace {

TEST(CudaPackageGpu, FusedSmallCnnPackageMatchesTheInterpreter) {
    if (!runtime::cuda::available()) GTEST_SKIP() << runtime::cuda::unavailable_reason();
    graph::Graph g = driver::load_model(std::string(TESSERA_SOURCE_DIR) +
                                        "/resources/models/small_cnn/model.onnx");
    driver::BuildOptions bo;
    bo.passes = codegen::cuda_pass_pipeline({}, 2);
    auto model = codegen::build_cuda(driver::optimize(g, bo));
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

}  // namespace
}  // namespace tessera
