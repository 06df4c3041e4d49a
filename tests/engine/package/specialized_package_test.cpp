// Packages of several input shapes: one specialisation per set of shapes,
// picked by the inputs (C++ loader and C API), a clear error for shapes the
// package was not compiled for, and each specialisation running its own
// code although all are loaded in one process (same kernel names).
#include <gtest/gtest.h>

#include <filesystem>

#include "engine/core/error.h"
#include "engine/driver/package_export.h"
#include "engine/driver/shape_specializations.h"
#include "engine/frontend/onnx/onnx_importer.h"
#include "engine/package/package_loader.h"
#include "engine/package/sha256.h"
#include "engine/package/tar.h"
#include "engine/package/tessera_runtime.h"

namespace tessera::package {
namespace {

const std::string kTwoPaths =
    std::string(TESSERA_SOURCE_DIR) + "/tests/data/onnx_models/symbolic_two_paths";

// The package of symbolic_two_paths at batch 1 and 3 (its two test-data sets).
std::string two_shape_package() {
    static const std::string path = [] {
        const std::string p =
            (std::filesystem::temp_directory_path() / "tessera_two_shapes.tar").string();
        driver::ShapeSpecializations models(kTwoPaths + "/model.onnx", driver::BuildOptions{});
        driver::ShapeSpecializations::Use one = models.for_shapes({{"x", {1, 8}}});
        driver::ShapeSpecializations::Use three = models.for_shapes({{"x", {3, 8}}});
        export_specialized_package(
            {{one.shapes, one.model.get()}, {three.shapes, three.model.get()}}, ExportOptions{}, p);
        return p;
    }();
    return path;
}

std::vector<runtime::NDArray> set_arrays(int k, const std::string& prefix) {
    return driver::read_test_data(kTwoPaths + "/test_data_set_" + std::to_string(k), prefix);
}

TEST(SpecializedPackage, EachSetOfShapesRunsItsOwnSpecialisation) {
    std::shared_ptr<LoadedPackage> pkg = load_package(two_shape_package());
    ASSERT_EQ(pkg->specializations.size(), 2u);
    EXPECT_EQ(pkg->executor, nullptr);
    EXPECT_EQ(specialization_list(*pkg), "x: 1x8; x: 3x8");
    for (int k : {1, 0}) {
        std::vector<runtime::NDArray> in = set_arrays(k, "input");
        const LoadedPackage& s =
            select_specialization(*pkg, {{"x", in[0].shape()}, {"z", in[1].shape()}});
        runtime::GraphExecutor& ex = *s.executor;
        for (size_t i = 0; i < in.size(); ++i) ex.set_input(i, in[i]);
        ex.run();
        std::vector<runtime::NDArray> want = set_arrays(k, "output");
        for (size_t i = 0; i < want.size(); ++i)
            EXPECT_TRUE(runtime::allclose(ex.get_output(i), want[i], 1e-5, 1e-6))
                << "set " << k << " output " << i;
    }
    try {
        select_specialization(*pkg, {{"x", {2, 8}}, {"z", {2, 16}}});
        FAIL() << "no specialisation for x: 2x8";
    } catch (const UserError& e) {
        EXPECT_NE(std::string(e.what()).find("compiled for x: 1x8; x: 3x8"), std::string::npos)
            << e.what();
    }
}

TEST(SpecializedPackage, CInterfaceSelectsBySpecialisationShapes) {
    TesseraModel* m = tessera_model_load(two_shape_package().c_str());
    ASSERT_NE(m, nullptr) << tessera_last_error();
    EXPECT_EQ(tessera_model_num_specializations(m), 2);
    EXPECT_EQ(tessera_model_input_shape(m, 0)[0], 1);  // the first, until another is selected
    const int ndims[] = {2, 2};
    const int64_t x3[] = {3, 8}, z[] = {2, 16}, x2[] = {2, 8};
    const int64_t* three[] = {x3, z};
    ASSERT_EQ(tessera_model_select_input_shapes(m, 2, ndims, three), TESSERA_OK)
        << tessera_last_error();
    EXPECT_EQ(tessera_model_input_shape(m, 0)[0], 3);
    std::vector<runtime::NDArray> in = set_arrays(1, "input");
    for (int i = 0; i < 2; ++i)
        ASSERT_EQ(tessera_model_set_input(m, i, in[size_t(i)].raw(), in[size_t(i)].num_bytes()),
                  TESSERA_OK)
            << tessera_last_error();
    ASSERT_EQ(tessera_model_run(m), TESSERA_OK) << tessera_last_error();
    std::vector<runtime::NDArray> want = set_arrays(1, "output");
    runtime::NDArray y = runtime::NDArray::empty(want[0].type());
    ASSERT_EQ(tessera_model_get_output(m, 0, y.raw(), y.num_bytes()), TESSERA_OK);
    EXPECT_TRUE(runtime::allclose(y, want[0], 1e-5, 1e-6));
    const int64_t* two[] = {x2, z};
    EXPECT_EQ(tessera_model_select_input_shapes(m, 2, ndims, two), TESSERA_USER_ERROR);
    EXPECT_NE(std::string(tessera_last_error()).find("x: 1x8; x: 3x8"), std::string::npos)
        << tessera_last_error();
    EXPECT_EQ(tessera_model_input_shape(m, 0)[0], 3);  // a refused selection changes nothing
    tessera_model_free(m);
}

TEST(SpecializedPackage, ADamagedSpecialisationIsRefusedByItsChecksum) {
    std::vector<TarMember> members = read_tar(read_file_bytes(two_shape_package()), "pkg");
    ASSERT_EQ(members.front().name, kSpecializationsMember);
    members.back().data[members.back().data.size() / 2] ^= 1;
    const std::string bad =
        (std::filesystem::temp_directory_path() / "tessera_two_bad.tar").string();
    write_file_bytes(bad, write_tar(members));
    try {
        load_package(bad);
        FAIL() << "a damaged member loaded";
    } catch (const UserError& e) {
        EXPECT_NE(std::string(e.what()).find("specialization_1.tar"), std::string::npos)
            << e.what();
    }
}

}  // namespace
}  // namespace tessera::package
