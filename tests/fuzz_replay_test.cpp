// Replays every fuzz corpus and regression input (fuzz/) through the entry
// point its libFuzzer target uses: each must be handled or rejected with a
// UserError; a crash or any other exception fails the test. Runs in the
// default suite, so a fixed crasher stays fixed without a clang build.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "engine/core/error.h"
#include "fuzz/fuzz_entries.h"

namespace tessera::fuzz {
namespace {

namespace fs = std::filesystem;
const fs::path kFuzz = fs::path(TESSERA_SOURCE_DIR) / "fuzz";

std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// Every file in `dir` through `entry`; returns how many were replayed.
int replay(const fs::path& dir, void (*entry)(const std::string&)) {
    int n = 0;
    for (const auto& e : fs::directory_iterator(dir)) {
        if (!e.is_regular_file()) continue;
        SCOPED_TRACE(e.path().string());
        try {
            rejected(entry, slurp(e.path()));
        } catch (const std::exception& ex) {
            ADD_FAILURE() << "escaped as " << typeid(ex).name() << ": " << ex.what();
        }
        ++n;
    }
    return n;
}

TEST(FuzzReplay, ImportCorpusAndRegressionsWithConstantFolding) {
    EXPECT_GE(replay(kFuzz / "corpus_seed", import_and_fold), 40);
    EXPECT_GE(replay(kFuzz / "regressions", import_and_fold), 15);
}

TEST(FuzzReplay, PackageCorpus) {
    EXPECT_GE(replay(kFuzz / "corpus" / "package_load", load_package), 1);
    // Damaged copies of the seed reach the loader past the checksums.
    std::string seed = slurp(kFuzz / "corpus" / "package_load" / "relu.tar");
    ASSERT_FALSE(seed.empty());
    EXPECT_FALSE(rejected(load_package, seed));  // the seed itself loads
    for (size_t at = 600; at < seed.size(); at += 997) {
        std::string bad = seed;
        bad[at] = char(bad[at] ^ 0x5a);
        rejected(load_package, bad);
    }
    // A byte inserted into lib.so (found by fuzz_package_load: dlopen crashed
    // relocating it while the entry recomputed lib.so's checksum): native code
    // whose bytes do not match is refused by its checksum, never loaded.
    EXPECT_TRUE(rejected(load_package, slurp(kFuzz / "regressions" / "package_lib_so_inserted_byte.tar")));
    // A package whose meta.json records the hash of its damaged lib.so (found
    // by fuzz_package_load: it wrote the hash the loader compared with into
    // the index, and dlopen crashed on the library). The checksums agree, so
    // it is read and verified; the target does not load native code.
    rejected(load_package, slurp(kFuzz / "regressions" / "package_forged_lib_so_checksum.tar"));
    // An index naming a member the package does not hold (found by
    // fuzz_package_load: std::out_of_range escaped the loader).
    EXPECT_TRUE(rejected(load_package, slurp(kFuzz / "regressions" / "package_specialization_member_missing.tar")));
    // The package of two shapes loads, specialisations and all, on a CPU with
    // the features it was compiled for (znver5, AVX-512); another CPU refuses it
    // naming the features it lacks, and nothing else.
    try {
        load_package(slurp(kFuzz / "corpus" / "package_load" / "two_shapes.tar"));
    } catch (const tessera::UserError& e) {
        EXPECT_NE(std::string(e.what()).find("compiled for a CPU with features this CPU lacks"),
                  std::string::npos)
            << e.what();
    }
}

TEST(FuzzReplay, TuningRecordsAndTraces) {
    EXPECT_GE(replay(kFuzz / "corpus" / "tuning_records", tuning_records_and_traces), 2);
    // The seed trace parses and replays (only the JSON-lines file is not one trace).
    EXPECT_FALSE(rejected(tuning_records_and_traces,
                          slurp(kFuzz / "corpus" / "tuning_records" / "trace_ok.json")));
    // A trace whose split factors' product wraps int64 (it once divided by zero).
    EXPECT_NO_THROW(rejected(tuning_records_and_traces,
                             R"({"steps": [{"op": "split", "loop": "k", "factors": [-1, 4294967296, 4294967296]}]})"));
}

TEST(FuzzReplay, TensorPbCorpus) {
    EXPECT_GE(replay(kFuzz / "corpus" / "tensor_pb", tensor_pb), 2);
    EXPECT_FALSE(rejected(tensor_pb, slurp(kFuzz / "corpus" / "tensor_pb" / "int64_output.pb")));
    EXPECT_TRUE(rejected(tensor_pb, "\x08\xff\xff\xff\xff\x0f"));  // a dim of 2^32 - 1, no data
}

}  // namespace
}  // namespace tessera::fuzz
