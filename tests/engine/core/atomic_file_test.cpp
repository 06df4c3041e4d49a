// write_file_atomically: the new bytes replace the file whole, and a failed
// write leaves the previous file as it was, with no temporary left behind.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "engine/core/atomic_file.h"
#include "engine/core/checked_math.h"
#include "engine/core/error.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

fs::path scratch() {
    fs::path d = fs::temp_directory_path() / ("tessera_atomic_" + std::to_string(::getpid()));
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
}

TEST(AtomicFile, ReplacesTheWholeFileAndLeavesNoTemporary) {
    fs::path d = scratch();
    fs::path p = d / "model.tar";
    write_file_atomically(p.string(), "old contents");
    write_file_atomically(p.string(), "new");
    EXPECT_EQ(slurp(p), "new");
    EXPECT_EQ(std::distance(fs::directory_iterator(d), fs::directory_iterator()), 1);
    fs::remove_all(d);
}

TEST(AtomicFile, AFailedWriteKeepsThePreviousFile) {
    fs::path d = scratch();
    // The target is a folder holding a file: the rename cannot replace it.
    fs::create_directories(d / "pkg.tar");
    std::ofstream(d / "pkg.tar" / "keep") << "kept";
    try {
        write_file_atomically((d / "pkg.tar").string(), "bytes");
        ADD_FAILURE() << "wrote over a folder";
    } catch (const UserError& e) {
        EXPECT_THAT(e.what(), testing::HasSubstr("cannot write '" + (d / "pkg.tar").string()));
        EXPECT_THAT(e.what(), testing::HasSubstr("unchanged"));
    }
    EXPECT_EQ(slurp(d / "pkg.tar" / "keep"), "kept");
    EXPECT_EQ(std::distance(fs::directory_iterator(d), fs::directory_iterator()), 1);  // no temp
    EXPECT_THROW(write_file_atomically((d / "no_such_dir" / "x.tar").string(), "b"), UserError);
    fs::remove_all(d);
}

TEST(CheckedMath, ElementCountsNeverWrap) {
    EXPECT_EQ(checked_elements({2, 3, 4}), 24);
    EXPECT_EQ(checked_elements({}), 1);
    EXPECT_EQ(checked_elements({5, 0, int64_t(1) << 62}), 0);
    EXPECT_EQ(checked_elements({-1, 2}), -1);
    // 2^40 x 2^40 wraps int64 to 0 when multiplied naively.
    EXPECT_EQ(checked_elements({int64_t(1) << 40, int64_t(1) << 40}), -1);
    EXPECT_EQ(checked_elements({int64_t(1) << 20, int64_t(1) << 20}), int64_t(1) << 40);
    EXPECT_EQ(checked_elements({int64_t(1) << 20, (int64_t(1) << 20) + 1}), -1);
    int64_t out = 7;
    EXPECT_FALSE(checked_mul(int64_t(1) << 62, 4, &out));
    EXPECT_EQ(out, 7);
    EXPECT_TRUE(checked_mul(-3, 5, &out));
    EXPECT_EQ(out, -15);
}

}  // namespace
}  // namespace tessera
