// CUDA packages without a GPU: a fused model exported with its PTX, the
// members and meta.json checked, graph.json read back into the same launches,
// corruption refused, and loading refused clearly when no driver is present.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "engine/driver/cuda_model.h"
#include "engine/core/error.h"
#include "engine/driver/driver.h"
#include "engine/package/package_cuda.h"
#include "engine/driver/package_export_cuda.h"
#include "engine/package/package_loader.h"
#include "engine/package/sha256.h"
#include "engine/package/tar.h"
#include "engine/package/tessera_runtime.h"
#include "engine/runtime/cuda_driver.h"
#include "tests/engine/codegen/cuda/cuda_test_util.h"

namespace tessera {
namespace {

const std::string kSmallCnn =
    std::string(TESSERA_SOURCE_DIR) + "/resources/models/small_cnn/model.onnx";

std::shared_ptr<driver::CudaModel> small_cnn_model() {
    driver::BuildOptions bo;
    bo.passes = driver::cuda_pass_pipeline({}, 2);
    return driver::build_cuda(driver::optimize(driver::load_model(kSmallCnn), bo));
}

std::map<std::string, std::string> members_of(const std::string& tar) {
    std::map<std::string, std::string> out;
    for (const package::TarMember& m : package::read_tar(tar, "test")) out[m.name] = m.data;
    return out;
}

std::string with_member(const std::string& tar, const std::string& name, const std::string& data) {
    std::vector<package::TarMember> ms = package::read_tar(tar, "test");
    for (auto& m : ms)
        if (m.name == name) m.data = data;
    return package::write_tar(ms);
}

package::ExportOptions cuda_options() {
    package::ExportOptions eo;
    eo.target = "cuda";
    eo.passes = driver::cuda_pass_pipeline({}, 2);
    return eo;
}

TEST(CudaPackage, MembersAndMetaDescribeThePtxModule) {
    TESSERA_SKIP_WITHOUT_NVRTC();
    auto model = small_cnn_model();
    std::string meta_text;
    std::string tar = package::cuda_package_bytes(*model, cuda_options(), &meta_text);
    auto members = members_of(tar);
    for (const char* name : {"meta.json", "graph.json", "params.bin", "kernels.ptx", "kernels.cu"})
        EXPECT_TRUE(members.count(name)) << name;
    EXPECT_FALSE(members.count("lib.so"));
    EXPECT_EQ(members["kernels.ptx"], model->compiled.ptx);
    EXPECT_NE(members["kernels.ptx"].find(".target sm_90"), std::string::npos);

    nlohmann::json meta = nlohmann::json::parse(members["meta.json"]);
    EXPECT_EQ(meta_text, members["meta.json"]);
    EXPECT_EQ(meta["target"], "cuda");
    EXPECT_EQ(meta["arch"], "compute_90");
    EXPECT_EQ(meta["kernels"].get<size_t>(), model->calls.size());
    for (const char* name : {"graph.json", "params.bin", "kernels.ptx", "kernels.cu"})
        EXPECT_EQ(meta["members"][name].get<std::string>(), package::sha256_hex(members[name]))
            << name;
    // The passes fused conv+relu: fewer calls than nodes.
    EXPECT_LT(model->calls.size(), model->graph.nodes.size());
}

TEST(CudaPackage, GraphJsonReadsBackIntoTheSameLaunchesAndConstants) {
    TESSERA_SKIP_WITHOUT_NVRTC();
    auto model = small_cnn_model();
    std::string tar = package::cuda_package_bytes(*model, cuda_options());
    package::CudaPackageContents c = package::read_cuda_package(package::read_tar(tar, "t"), "t");
    EXPECT_EQ(c.name, "small_cnn");
    EXPECT_EQ(c.arch, "compute_90");
    ASSERT_EQ(c.calls.size(), model->calls.size());
    for (size_t i = 0; i < c.calls.size(); ++i) {
        const runtime::CudaCall& a = c.calls[i];
        const runtime::CudaCall& b = model->calls[i];
        EXPECT_EQ(a.name, b.name);
        EXPECT_EQ(a.values, b.values);
        EXPECT_EQ(a.workspace_bytes, b.workspace_bytes);
        EXPECT_EQ(a.nodes, b.nodes);
        ASSERT_EQ(a.launches.size(), b.launches.size());
        for (size_t k = 0; k < a.launches.size(); ++k) {
            EXPECT_EQ(a.launches[k].kernel, b.launches[k].kernel);
            EXPECT_EQ(a.launches[k].grid, b.launches[k].grid);
            EXPECT_EQ(a.launches[k].block, b.launches[k].block);
            EXPECT_EQ(a.launches[k].shared_bytes, b.launches[k].shared_bytes);
            EXPECT_EQ(a.launches[k].args, b.launches[k].args);
        }
    }
    const graph::Graph& g = model->graph;
    ASSERT_EQ(c.types.size(), g.values.size());
    EXPECT_EQ(c.inputs, g.inputs);
    EXPECT_EQ(c.outputs, g.outputs);
    int constants = 0;
    for (size_t v = 0; v < g.values.size(); ++v) {
        EXPECT_EQ(c.types[v], g.values[v].type);
        ASSERT_EQ(c.constants[v].defined(), g.values[v].is_constant());
        if (!g.values[v].is_constant()) continue;
        ++constants;
        const auto& bytes = g.values[v].constant->bytes;
        ASSERT_EQ(c.constants[v].num_bytes(), bytes.size());
        EXPECT_EQ(0, std::memcmp(c.constants[v].raw(), bytes.data(), bytes.size()));
    }
    EXPECT_GT(constants, 0);
}

TEST(CudaPackage, CorruptOrIncompletePackagesAreRefusedWithTheMember) {
    TESSERA_SKIP_WITHOUT_NVRTC();
    auto model = small_cnn_model();
    std::string tar = package::cuda_package_bytes(*model, cuda_options());
    auto expect_refused = [](const std::string& bytes, const std::string& needle) {
        try {
            package::read_cuda_package(package::read_tar(bytes, "pkg.tar"), "pkg.tar");
            ADD_FAILURE() << "accepted; expected an error with '" << needle << "'";
        } catch (const UserError& e) {
            EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
        }
    };
    std::string ptx = members_of(tar)["kernels.ptx"];
    ptx[ptx.size() / 2] ^= 1;
    expect_refused(with_member(tar, "kernels.ptx", ptx),
                   "checksum mismatch in member 'kernels.ptx'");
    std::vector<package::TarMember> ms = package::read_tar(tar, "t");
    ms.erase(ms.begin() + 2);  // params.bin
    expect_refused(package::write_tar(ms), "no member 'params.bin'");
    nlohmann::json meta = nlohmann::json::parse(members_of(tar)["meta.json"]);
    meta["format_version"] = package::kFormatVersion + 1;
    expect_refused(with_member(tar, "meta.json", meta.dump()), "newer than this runtime reads");
}

TEST(CudaPackage, LoadingWithoutADriverSaysSoAndNamesThePackage) {
    TESSERA_SKIP_WITHOUT_NVRTC();
    if (runtime::cuda::available())
        GTEST_SKIP() << "a CUDA device is present (the gpu tests run it)";
    auto model = small_cnn_model();
    std::string tar = package::cuda_package_bytes(*model, cuda_options());
    try {
        package::load_package_bytes(tar, "small_cnn_cuda.tar");
        FAIL() << "loaded a CUDA package without a device";
    } catch (const UserError& e) {
        std::string msg = e.what();
        EXPECT_NE(msg.find("cannot run CUDA package 'small_cnn_cuda.tar'"), std::string::npos)
            << msg;
        EXPECT_NE(msg.find("no CUDA device is available"), std::string::npos) << msg;
    }
}

TEST(CudaPackage, CApiWithoutADriverGivesTheSameClearError) {
    TESSERA_SKIP_WITHOUT_NVRTC();
    if (runtime::cuda::available())
        GTEST_SKIP() << "a CUDA device is present (the gpu tests run it)";
    auto model = small_cnn_model();
    const std::string path = ::testing::TempDir() + "tessera_capi_small_cnn_cuda.tar";
    {
        std::ofstream out(path, std::ios::binary);
        out << package::cuda_package_bytes(*model, cuda_options());
    }
    TesseraModel* m = tessera_model_load(path.c_str());
    EXPECT_EQ(m, nullptr);
    std::string msg = tessera_last_error();
    EXPECT_NE(msg.find("cannot run CUDA package '" + path + "'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("no CUDA device is available"), std::string::npos) << msg;
    // Calls on the null model report it instead of crashing.
    EXPECT_EQ(tessera_model_run(m), TESSERA_USER_ERROR);
    EXPECT_EQ(tessera_model_num_inputs(m), -1);
    tessera_model_free(m);
    std::remove(path.c_str());
}

TEST(CudaPackage, ArchNumbers) {
    EXPECT_EQ(package::cuda_arch_number("compute_90"), 90);
    EXPECT_EQ(package::cuda_arch_number("compute_120"), 120);
    EXPECT_EQ(package::cuda_arch_number("sm_90"), -1);
    EXPECT_EQ(package::cuda_arch_number("compute_"), -1);
}

}  // namespace
}  // namespace tessera
