// Malformed and unsupported models give a UserError naming the file and the
// problem; the expected diagnostics are listed in tests/data/bad_inputs/README.md.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include "engine/core/error.h"
#include "engine/frontend/onnx/onnx_importer.h"

namespace tessera::frontend {
namespace {

const std::string kDir = std::string(TESSERA_SOURCE_DIR) + "/tests/data/bad_inputs";

// The message of the UserError that importing `path` throws ("" if none).
std::string import_error(const std::string& path) {
    try {
        import_onnx_file(path);
    } catch (const UserError& e) {
        return e.what();
    }
    return "";
}

TEST(BadInputs, EveryListedFileGivesItsDiagnostic) {
    std::ifstream readme(kDir + "/README.md");
    ASSERT_TRUE(readme.good());
    const std::regex line("^- `([^`]+)`: `(.+)`$");
    int checked = 0;
    for (std::string s; std::getline(readme, s);) {
        std::smatch m;
        if (!std::regex_match(s, m, line)) continue;
        const std::string path = kDir + "/" + m[1].str();
        SCOPED_TRACE(path);
        std::string msg = import_error(path);
        ASSERT_FALSE(msg.empty()) << "imported without error";
        EXPECT_NE(msg.find(path), std::string::npos) << "message does not name the file: " << msg;
        EXPECT_NE(msg.find(m[2].str()), std::string::npos) << msg;
        ++checked;
    }
    EXPECT_GE(checked, 20);
}

TEST(BadInputs, MissingFile) {
    std::string msg = import_error(kDir + "/no_such_model.onnx");
    EXPECT_NE(msg.find("cannot open model '" + kDir + "/no_such_model.onnx': No such file"),
              std::string::npos)
        << msg;
}

TEST(BadInputs, DirectoryIsNotAModel) {
    std::string msg = import_error(kDir);
    EXPECT_NE(msg.find("cannot open model '" + kDir + "'"), std::string::npos) << msg;
}

TEST(BadInputs, UnsupportedOpFromShippedTests) {
    std::string path = std::string(TESSERA_ONNX_TESTDATA) + "/node/test_bernoulli/model.onnx";
    std::string msg = import_error(path);
    EXPECT_NE(msg.find(path + ": node 'Bernoulli_0' (op Bernoulli): unsupported op Bernoulli"),
              std::string::npos)
        << msg;
}

TEST(BadInputs, UnsupportedFeaturesNameTheNode) {
    std::string node = std::string(TESSERA_ONNX_TESTDATA) + "/node/";
    // Training mode fed through a graph input (random dropout masks are not
    // reproducible, so only a constant training_mode with ratio 0 imports).
    EXPECT_NE(import_error(node + "test_training_dropout/model.onnx")
                  .find("node 'Dropout_0' (op Dropout): training_mode must be a constant"),
              std::string::npos);
    EXPECT_NE(
        import_error(node + "test_reshape_negative_dim/model.onnx").find("must be a constant"),
        std::string::npos);
}

// The truncated model fails for every cut point, not only the committed one.
TEST(BadInputs, EveryTruncationOfARealModelIsRejected) {
    std::string path =
        std::string(TESSERA_ONNX_TESTDATA) + "/pytorch-converted/test_Conv2d/model.onnx";
    std::ifstream in(path, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    ASSERT_GT(bytes.size(), 100u);
    EXPECT_NO_THROW(import_onnx_bytes(bytes, path));
    for (size_t cut = 1; cut < bytes.size(); cut += 37) {
        try {
            import_onnx_bytes(bytes.substr(0, cut), "cut");
            ADD_FAILURE() << "a model truncated to " << cut << " of " << bytes.size()
                          << " bytes was accepted";
        } catch (const UserError& e) {
            EXPECT_NE(std::string(e.what()).find("cut"), std::string::npos) << e.what();
        }
    }
}

}  // namespace
}  // namespace tessera::frontend

namespace tessera::frontend {
namespace {

// Every input that once crashed the importer (fuzz/fuzz_onnx_import) now
// imports or is rejected with a UserError naming the file.
TEST(FuzzRegressions, EveryCrasherIsHandled) {
    const std::string dir = std::string(TESSERA_SOURCE_DIR) + "/fuzz/regressions";
    int replayed = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
        SCOPED_TRACE(e.path().string());
        try {
            import_onnx_file(e.path().string());
        } catch (const UserError& err) {
            EXPECT_NE(std::string(err.what()).find(e.path().string()), std::string::npos)
                << err.what();
        }
        ++replayed;
    }
    EXPECT_GE(replayed, 5);
}

}  // namespace
}  // namespace tessera::frontend
